package tcp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/scoll/scoll/transport"
)

// FuzzDecodeHeader: the frame header decoder never panics, and whatever it
// accepts is within the limits and encodes back to the same bytes.
func FuzzDecodeHeader(f *testing.F) {
	var b [headerLen]byte
	for _, h := range []header{
		{kind: kindEager, len: 5, key: transport.Key{Comm: 1, Seq: 2, Tag: 3}, sig: 99},
		{kind: kindRTS, len: 1 << 20, id: 7},
		{kind: kindCTS, id: 7},
		{kind: kindData, len: 1 << 20, id: 7},
		{kind: kindFail, code: codeMismatch, key: transport.Key{Comm: 1, Seq: 2}},
		{kind: kindHeartbeat},
	} {
		h.encode(b[:])
		f.Add(bytes.Clone(b[:]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h header
		if err := decodeHeader(data, &h, defaultEagerLimit, defaultMaxMessage); err != nil {
			return
		}
		if h.kind == kindEager && h.len > defaultEagerLimit || h.len > defaultMaxMessage || h.key.Tag < 0 {
			t.Fatalf("accepted out-of-limit header %+v", h)
		}
		var out [headerLen]byte
		h.encode(out[:])
		if !bytes.Equal(out[:], data[:headerLen]) {
			t.Fatalf("decode/encode differ:\n%x\n%x", data[:headerLen], out)
		}
	})
}

// FuzzHandshake: an acceptor fed arbitrary bytes by a dialer that does not
// know the secret, and a dialer fed arbitrary answers, always fail cleanly
// and promptly.
func FuzzHandshake(f *testing.F) {
	f.Add((&hello{size: 2, from: 1, to: 0}).encode())
	f.Add(append((&hello{size: 2, from: 1, to: 0}).encode(), bytes.Repeat([]byte{7}, macLen)...))
	f.Add([]byte("SCLH"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		secret := bytes.Repeat([]byte("s"), 32)
		deadline := time.Now().Add(2 * time.Second)
		// Acceptor side.
		a, b := net.Pipe()
		go io.Copy(io.Discard, b) // drain the challenge
		go func() {
			b.Write(data)
			b.Close()
		}()
		if from, err := acceptHandshake(a, secret, 0, 2, deadline); err == nil {
			t.Fatalf("acceptor authenticated rank %d from fuzz input", from)
		}
		a.Close()
		b.Close()
		// Dialer side.
		c, d := net.Pipe()
		go io.Copy(io.Discard, d)
		go func() {
			d.Write(data)
			d.Close()
		}()
		if v, err := dialHandshake(c, secret, 2, 1, 0, deadline); err == nil {
			t.Fatalf("dialer accepted verdict %d from fuzz input", v)
		}
		c.Close()
	})
}

// FuzzFrames feeds arbitrary bytes to an authenticated connection's reader:
// it must never panic or allocate beyond the limits, and the transport must
// still close.
func FuzzFrames(f *testing.F) {
	var b [headerLen]byte
	frame := func(h header, payload []byte) []byte {
		h.encode(b[:])
		return append(bytes.Clone(b[:]), payload...)
	}
	k := transport.Key{Comm: 1, Seq: 1}
	f.Add(frame(header{kind: kindEager, len: 3, key: k}, []byte("abc")))
	f.Add(append(frame(header{kind: kindRTS, len: 100000, key: k, id: 1}, nil), frame(header{kind: kindData, len: 100000, id: 1}, make([]byte, 100))...))
	f.Add(frame(header{kind: kindCTS, id: 5}, nil))
	f.Add(frame(header{kind: kindFail, code: codeCanceled, key: k}, nil))
	f.Add(frame(header{kind: kindGoodbye}, nil))
	k2 := transport.Key{Comm: 1, Seq: 2}
	const bigLen = dataChunk + dataChunk/2 // a chunked eager message
	f.Add(append(frame(header{kind: kindSync, len: bigLen, key: k2, id: 4}, make([]byte, dataChunk)), frame(header{kind: kindData, len: bigLen - dataChunk, id: 4, key: transport.Key{Tag: dataChunk}}, make([]byte, bigLen-dataChunk))...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skip(err)
		}
		// An eager limit above one chunk, so that chunked eager messages
		// are reachable too.
		tr, err := New(context.Background(), Config{Rank: 0, Size: 2, Secret: bytes.Repeat([]byte("s"), 32), Lazy: true,
			EagerLimit: 2 * dataChunk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, ln, []string{ln.Addr().String(), "127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		// A receive for the key the seeds use, posted before the peer is
		// attached so that it does not dial.
		p := tr.peers[1]
		a, c := net.Pipe()
		p.mu.Lock()
		p.conn, p.state = a, stateUp
		p.mu.Unlock()
		r := &transport.Msg{Peer: 1, Key: k, Buf: make([]byte, 8), W: transport.NewWaiter(0)}
		r.W.Add(1)
		tr.Irecv(r)
		big := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 2}, Buf: make([]byte, bigLen), W: transport.NewWaiter(0)}
		big.W.Add(1)
		tr.Irecv(big)
		p.start()
		go io.Copy(io.Discard, c)
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(data)
		c.Close()
		tr.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, m := range []*transport.Msg{r, big} {
			if err := m.W.Wait(ctx); err != nil {
				t.Fatalf("receive never completed: %v", err)
			}
		}
	})
}
