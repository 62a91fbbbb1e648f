package inproc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
)

// BenchmarkExchange measures one 8-byte exchange between two ranks (both
// send and receive, then wait): the transport's share of a two-rank
// recursive-doubling allreduce.
func BenchmarkExchange(b *testing.B) {
	w := inproc.NewWorld(2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep := w.Endpoint(r)
			out, in := make([]byte, 8), make([]byte, 8)
			wt := transport.NewWaiter(ep.SpinHint())
			wt.SetPoller(ep)
			var s, rc transport.Msg
			for i := 0; i < b.N; i++ {
				k := transport.Key{Comm: 1, Seq: uint64(i + 1)}
				s = transport.Msg{Peer: 1 - r, Key: k, Buf: out, W: wt}
				rc = transport.Msg{Peer: 1 - r, Key: k, Buf: in, W: wt}
				wt.Add(2)
				ep.Isend(&s)
				ep.Irecv(&rc)
				wt.Wait(context.Background())
			}
		}()
	}
	wg.Wait()
}
