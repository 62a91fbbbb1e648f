package inproc_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/scoll/scoll/transport/inproc"
)

// BenchmarkWorldStartExit measures the transport's share of an empty run:
// make a world of P ranks, let every rank exit from a goroutine of its own,
// close the world. (BenchmarkRunEmpty in package scoll adds the
// communicators.)
func BenchmarkWorldStartExit(b *testing.B) {
	for _, p := range []int{4096, 16384, 65536, 262144} {
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			for b.Loop() {
				w := inproc.NewWorld(p)
				var wg sync.WaitGroup
				wg.Add(p)
				for r := range p {
					go func() {
						defer wg.Done()
						w.Exit(r)
					}()
				}
				wg.Wait()
				w.Close()
			}
		})
	}
}
