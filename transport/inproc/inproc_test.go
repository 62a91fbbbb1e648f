package inproc_test

import (
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/transporttest"
)

func TestConformance(t *testing.T) {
	for _, lanes := range []bool{true, false} {
		t.Run(map[bool]string{true: "lanes", false: "mailboxes"}[lanes], func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, size int) []transport.Transport {
				w := inproc.NewWorld(size, inproc.Lanes(lanes))
				eps := make([]transport.Transport, size)
				for r := range eps {
					eps[r] = w.Endpoint(r)
				}
				return eps
			})
		})
	}
}

// TestMailboxQueues: early sends wait in the receiver's mailbox, two
// sources interleaved; receiving them takes each from the front of the
// queue or from its middle (the other source's), and every payload comes
// out whole and in order.
func TestMailboxQueues(t *testing.T) {
	const k = 3000
	w := inproc.NewWorld(3)
	ep := []transport.Transport{w.Endpoint(0), w.Endpoint(1), w.Endpoint(2)}
	defer w.Close()
	key := func(i int) transport.Key { return transport.Key{Comm: 9, Tag: int64(i)} } // Seq 0: mailboxes, not lanes
	for i := range k {
		for _, src := range []int{0, 2} {
			m := &transport.Msg{Peer: 1, Key: key(i), Buf: []byte{byte(src), byte(i), byte(i >> 8)}, Eager: true, W: transport.NewWaiter(0)}
			if err := transport.Post(ep[src], m, true); err != nil {
				t.Fatal(err)
			}
			transporttest.Wait(t, m)
		}
	}
	// Source 2 first: its messages sit behind source 0's at every step.
	for _, src := range []int{2, 0} {
		for i := range k {
			buf := make([]byte, 3)
			m := transporttest.Post(t, ep[1], false, src, key(i), buf)
			transporttest.Wait(t, m)
			if m.Err != nil || buf[0] != byte(src) || buf[1] != byte(i) || buf[2] != byte(i>>8) {
				t.Fatalf("message %d from %d: %v %v", i, src, buf, m.Err)
			}
		}
	}
}

// BenchmarkMailboxDrain receives k early sends in order: linear in k.
func BenchmarkMailboxDrain(b *testing.B) {
	const k = 10000
	w := inproc.NewWorld(2)
	defer w.Close()
	ep0, ep1 := w.Endpoint(0), w.Endpoint(1)
	buf := make([]byte, 8)
	for b.Loop() {
		for i := range k {
			m := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 9, Tag: int64(i)}, Buf: buf, Eager: true, W: transport.NewWaiter(0)}
			if err := transport.Post(ep0, m, true); err != nil {
				b.Fatal(err)
			}
		}
		for i := range k {
			m := transporttest.Post(b, ep1, false, 0, transport.Key{Comm: 9, Tag: int64(i)}, buf)
			transporttest.Wait(b, m)
		}
	}
}
