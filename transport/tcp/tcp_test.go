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
	for _, c := range []struct {
		name string
		cfg  tcp.Config
	}{
		{"eager", tcp.Config{}},
		// Lazy connections, long messages on the rendezvous path.
		{"lazy-rendezvous", tcp.Config{Lazy: true, EagerLimit: 1024}},
		// Eager messages longer than one chunk (sent as several frames).
		{"eager-chunked", tcp.Config{EagerLimit: 4 << 20}},
		// Small sends of collective calls complete once written.
		{"detached", tcp.Config{DetachedSends: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				eps := group(t, n, c.cfg)
				out := make([]transport.Transport, n)
				for i, e := range eps {
					out[i] = e
				}
				return out
			})
		})
	}
}
