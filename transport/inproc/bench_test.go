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

// BenchmarkChannelFloorRD64 is a reference outside the transport: 64
// goroutines run recursive-doubling exchanges of one word through plain Go
// channels. It bounds what any goroutine-per-rank message schedule can reach
// with more ranks than CPUs.
func BenchmarkChannelFloorRD64(b *testing.B) {
	const P = 64
	ch := make([][]chan int64, P) // ch[to][from]
	for i := range ch {
		ch[i] = make([]chan int64, P)
		for j := range ch[i] {
			ch[i][j] = make(chan int64, 4)
		}
	}
	var wg sync.WaitGroup
	for r := range P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := int64(r)
			for i := 0; i < b.N; i++ {
				for m := 1; m < P; m <<= 1 {
					p := r ^ m
					ch[p][r] <- v
					v += <-ch[r][p]
				}
			}
		}()
	}
	wg.Wait()
}
