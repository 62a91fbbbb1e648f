package tcp_test

import (
	"context"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/tcp"
	"github.com/scoll/scoll/transport/transporttest"
)

func group(t *testing.T, n int, cfg tcp.Config) []*tcp.Transport {
	t.Helper()
	eps, err := tcp.NewLocalGroup(context.Background(), n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func TestConformance(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		name := "eager"
		if lazy {
			name = "lazy-rendezvous"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				// Lazy with a small eager limit: long messages take the
				// rendezvous path.
				cfg := tcp.Config{Lazy: lazy}
				if lazy {
					cfg.EagerLimit = 1024
				}
				eps := group(t, n, cfg)
				out := make([]transport.Transport, n)
				for i, e := range eps {
					out[i] = e
				}
				return out
			})
		})
	}
}
