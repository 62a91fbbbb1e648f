package tcp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/transporttest"
)

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func secret(s string) []byte { return []byte(strings.Repeat(s, 16)) }

// startRank0 starts rank 0 of a 2-rank lazy job on cfg's network and
// returns it with the addresses of both ranks and its log.
func startRank0(t *testing.T, cfg Config) (*Transport, []string, *logBuf) {
	t.Helper()
	ln0, _ := cfg.net().Listen("127.0.0.1:0")
	ln1, _ := cfg.net().Listen("127.0.0.1:0")
	addrs := []string{ln0.Addr().String(), ln1.Addr().String()}
	// Rank 1's address accepts connections (the kernel completes them) but
	// never answers: rank 0's own dial waits in its handshake.
	t.Cleanup(func() { ln1.Close() })
	logs := &logBuf{}
	cfg.Rank, cfg.Size, cfg.Lazy = 0, 2, true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	t0, err := New(context.Background(), cfg, ln0, addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { t0.Close() })
	return t0, addrs, logs
}

// TestGarbageConnection: random bytes and a half-sent hello are rejected and
// logged without disturbing the job.
func TestGarbageConnection(t *testing.T) {
	eps, err := NewLocalGroup(context.Background(), 2, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eps[0].Close()
	defer eps[1].Close()
	for _, junk := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte{0xff}, 4096), []byte(helloMagic)} {
		conn, err := net.Dial("tcp", eps[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(junk)
		conn.Close()
	}
	// The real pair still works.
	k := transport.Key{Comm: 1, Seq: 1}
	transporttest.Post(t, eps[1], true, 0, k, []byte("ok"))
	r := transporttest.Post(t, eps[0], false, 1, k, make([]byte, 2))
	transporttest.Wait(t, r)
	if r.Err != nil || string(r.Buf) != "ok" {
		t.Fatalf("after junk connections: %v %q", r.Err, r.Buf)
	}
}

// TestHandshakeChecks: every field of a hello that does not fit the job is
// refused before the secret is even checked.
func TestHandshakeChecks(t *testing.T) {
	good := hello{size: 4, from: 1, to: 2}
	if _, err := decodeHello(good.encode(), 2, 4); err != nil {
		t.Fatalf("good hello refused: %v", err)
	}
	for name, h := range map[string]hello{
		"size": {size: 5, from: 1, to: 2},
		"to":   {size: 4, from: 1, to: 3},
		"from": {size: 4, from: 4, to: 2},
		"self": {size: 4, from: 2, to: 2},
	} {
		if _, err := decodeHello(h.encode(), 2, 4); !errors.Is(err, errAuth) {
			t.Errorf("%s: %v", name, err)
		}
	}
	b := good.encode()
	b[0] = 'X'
	if _, err := decodeHello(b, 2, 4); !errors.Is(err, errAuth) {
		t.Errorf("bad magic accepted")
	}
}

// TestOversizedFrames: lengths beyond the limits, unknown kinds, set
// reserved bytes and negative tags are refused by the decoder.
func TestOversizedFrames(t *testing.T) {
	var b [headerLen]byte
	var h header
	enc := func(x header) []byte { x.encode(b[:]); return b[:] }
	cases := map[string]header{
		"eager too long": {kind: kindEager, len: 1 << 17},
		"rts too long":   {kind: kindRTS, len: 1 << 41},
		"cts with data":  {kind: kindCTS, len: 1},
		"negative tag":   {kind: kindEager, key: transport.Key{Tag: -1}},
		"fail no code":   {kind: kindFail},
		"eager w/ code":  {kind: kindEager, code: codeMismatch},
		"unknown kind":   {kind: kindLast + 1},
		"unknown code":   {kind: kindNack, code: codeLast + 1},
	}
	for name, x := range cases {
		if err := decodeHeader(enc(x), &h, 1<<16, 1<<40); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	enc(header{kind: kindEager})
	b[5] = 1
	if err := decodeHeader(b[:], &h, 1<<16, 1<<40); err == nil {
		t.Error("reserved byte accepted")
	}
	if err := decodeHeader(enc(header{kind: kindRTS, len: 1 << 30, id: 9}), &h, 1<<16, 1<<40); err != nil || h.id != 9 {
		t.Errorf("good rts: %v %+v", err, h)
	}
}

// TestProtocolViolation: an authenticated peer that sends an eager frame
// over the limit is dropped before anything is allocated for it, and the
// pending receive fails with ErrPeerFailed.
func TestProtocolViolation(t *testing.T) {
	t0, addrs, logs := startRank0(t, Config{Secret: secret("a")})
	_ = addrs
	recv := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 3}, Buf: make([]byte, 8), W: transport.NewWaiter(0)}
	recv.W.Add(1)
	conn, err := net.Dial("tcp", t0.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	v, err := dialHandshake(conn, secret("a"), 2, 1, 0, time.Now().Add(5*time.Second))
	if err != nil || v != verdictAccept {
		t.Fatalf("handshake: %v verdict %d", err, v)
	}
	t0.Irecv(recv)
	var hb [headerLen]byte
	(&header{kind: kindEager, len: 1 << 40, key: recv.Key}).encode(hb[:])
	conn.Write(hb[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recv.W.Wait(ctx)
	if !errors.Is(recv.Err, errs.PeerFailed) {
		t.Fatalf("receive: %v", recv.Err)
	}
	if !strings.Contains(logs.String(), "protocol error") {
		t.Fatalf("not logged: %s", logs.String())
	}
}

// selfSignedTLS returns a server+client configuration for mutual TLS on
// 127.0.0.1 with one self-signed certificate, and a configuration with
// another certificate that the first does not trust.
func selfSignedTLS(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	mk := func(cn string) (tls.Certificate, *x509.Certificate) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(time.Now().UnixNano()),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IsCA:        true, BasicConstraintsValid: true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, cert
	}
	cfg := func(own tls.Certificate, trusted *x509.Certificate) *tls.Config {
		pool := x509.NewCertPool()
		pool.AddCert(trusted)
		return &tls.Config{Certificates: []tls.Certificate{own}, RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	}
	c1, x1 := mk("job")
	c2, _ := mk("other")
	return cfg(c1, x1), cfg(c2, x1)
}

// TestMutualTLS: a job over mutual TLS moves messages; a peer whose
// certificate the job does not trust is refused even with the right secret.
func TestMutualTLS(t *testing.T) {
	good, untrusted := selfSignedTLS(t)
	eps, err := NewLocalGroup(context.Background(), 3, Config{TLS: good})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		defer e.Close()
	}
	data := bytes.Repeat([]byte("tls"), 100000) // long: rendezvous path
	k := transport.Key{Comm: 1, Seq: 1}
	transporttest.Post(t, eps[0], true, 2, k, data)
	r := transporttest.Post(t, eps[2], false, 0, k, make([]byte, len(data)))
	transporttest.Wait(t, r)
	if !bytes.Equal(r.Buf, data) || r.Err != nil {
		t.Fatalf("over TLS: %v", r.Err)
	}

	t0, addrs, logs := startRank0(t, Config{Secret: secret("a"), TLS: good})
	_ = t0
	raw, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg := untrusted.Clone()
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(raw, cfg)
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	herr := tc.Handshake()
	if herr == nil {
		_, herr = dialHandshake(tc, secret("a"), 2, 1, 0, time.Now().Add(5*time.Second))
	}
	tc.Close()
	if herr == nil {
		t.Fatal("untrusted certificate accepted")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "TLS handshake failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "TLS handshake failed") {
		t.Fatalf("untrusted peer not logged: %s", logs.String())
	}
}

// TestRendezvous: both rendezvous kinds give every rank the same table
// over real sockets and files (a rank with the wrong secret:
// TestRendezvousTimeouts).
func TestRendezvous(t *testing.T) {
	for _, spec := range []string{"file:" + t.TempDir(), "tcp:127.0.0.1:" + freePort(t)} {
		t.Run(strings.SplitN(spec, ":", 2)[0], func(t *testing.T) {
			const n = 5
			tables := make([][]string, n)
			errsOut := make([]error, n)
			var wg sync.WaitGroup
			for r := range n {
				wg.Go(func() {
					rv, err := ParseRendezvous(spec, secret("k"), "job1")
					if err != nil {
						errsOut[r] = err
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					tables[r], errsOut[r] = rv.Exchange(ctx, r, n, "1000"+string(rune('0'+r)))
				})
			}
			wg.Wait()
			for r := range n {
				if errsOut[r] != nil {
					t.Fatalf("rank %d: %v", r, errsOut[r])
				}
				for q := range n {
					if tables[r][q] != tables[0][q] || !strings.HasSuffix(tables[r][q], ":1000"+string(rune('0'+q))) {
						t.Fatalf("rank %d sees %v, rank 0 %v", r, tables[r], tables[0])
					}
				}
			}
		})
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}
