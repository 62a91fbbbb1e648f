//go:build linux

package mixed_test

import (
	"context"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/mixed"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/tcp"
	"github.com/scoll/scoll/transport/transporttest"
)

// fakeHosts returns a job of n ranks on two pretended hosts, even ranks on
// one and odd ranks on the other: each host's ranks share a segment, and
// every rank has a TCP endpoint.
func fakeHosts(t *testing.T, n int) []transport.Transport {
	t.Helper()
	nets, err := tcp.NewLocalGroup(context.Background(), n, tcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]transport.Transport, n)
	for h := range 2 {
		var ranks []int
		for r := h; r < n; r += 2 {
			ranks = append(ranks, r)
		}
		if len(ranks) == 0 {
			continue
		}
		locals, err := shm.NewLocalGroup(len(ranks), shm.Config{Ranks: ranks, JobSize: n, RingBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range ranks {
			out[r] = mixed.New(nets[r], locals[i])
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	transporttest.Run(t, fakeHosts)
}
