package inproc_test

import (
	"sync"
	"testing"

	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/transporttest"
)

// BenchmarkExchange measures one 8-byte exchange between two ranks (both
// send and receive, then wait): the transport's share of a two-rank
// recursive-doubling allreduce.
func BenchmarkExchange(b *testing.B) {
	w := inproc.NewWorld(2)
	transporttest.BenchExchange(b, 8, w.Endpoint(0), w.Endpoint(1))
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
