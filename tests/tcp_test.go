package tests

import (
	"context"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/internal/sweep"
	"github.com/scoll/scoll/transport/tcp"
)

// TestMatrixTCP runs every algorithm of every collective over the TCP
// transport (ranks in this process, loopback connections) against the
// naive reference, with long messages on the rendezvous path: P = 1, 2,
// 5, 8 (3, 4, 7, 17 with -tags long; 9, 12, 16, 32, 33, 64 with -scoll.full), counts
// 0, 1, 3, 1000 and, up to 4 ranks, 65537.
func TestMatrixTCP(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	sizes := sweep.More([]int{1, 2, 5, 8}, 3, 4, 7, 17)
	if *matrix.Full {
		sizes = append(sizes, 9, 12, 16, 32, 33, 64)
	}
	// A small eager limit: messages over 1 KiB take the rendezvous path.
	matrixOver(t, sizes, func(t *testing.T, p int) []*scoll.Comm { return matrix.TCPComms(t, p, tcp.Config{EagerLimit: 1024}) })
}

// TestMatrixTCPEagerSends runs the matrix over TCP with detached sends
// (WithEagerSends): small sends of collective calls complete once written.
func TestMatrixTCPEagerSends(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	matrixOver(t, sweep.More([]int{3}, 2, 4, 5, 8), func(t *testing.T, p int) []*scoll.Comm {
		return matrix.TCPComms(t, p, tcp.Config{DetachedSends: true})
	})
}

// matrixOver runs every algorithm of every collective on the communicators
// comms makes for each size against the naive reference, counts 0, 1, 3,
// 1000 and, up to 4 ranks, 65537; the collectives in parallel.
func matrixOver(t *testing.T, sizes []int, comms func(t *testing.T, p int) []*scoll.Comm) {
	for _, coll := range scoll.Collectives() {
		t.Run(coll, func(t *testing.T) {
			t.Parallel()
			for _, p := range sizes {
				cs := comms(t, p)
				counts := []int{0, 1, 3, 1000}
				if p <= 4 {
					counts = append(counts, 65537)
				}
				for _, alg := range scoll.Algorithms(coll) {
					if alg.PowerOfTwo && p&(p-1) != 0 {
						continue
					}
					err := matrix.ForCases(coll, alg, p, counts, func(n, root int, inPlace bool, oc matrix.OpCase[int32]) error {
						return matrix.OnAll(cs, func(ctx context.Context, c *scoll.Comm) error {
							return matrix.CheckCase(ctx, c, nil, coll, alg.Name, n, root, inPlace, oc)
						})
					})
					if err != nil {
						t.Fatalf("P=%d %s: %v", p, alg.Name, err)
					}
				}
			}
		})
	}
}
