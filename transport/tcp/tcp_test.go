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
			name = "lazy"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				eps := group(t, n, tcp.Config{Lazy: lazy})
				out := make([]transport.Transport, n)
				for i, e := range eps {
					out[i] = e
				}
				return out
			})
		})
	}
}
