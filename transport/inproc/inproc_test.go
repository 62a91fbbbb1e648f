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
