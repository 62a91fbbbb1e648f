//go:build linux

package tests

import (
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/internal/sweep"
	"github.com/scoll/scoll/transport/shm"
)

// TestMatrixShm runs every algorithm of every collective over the
// shared-memory transport against the naive reference, with rings of 4 KiB
// so that long messages are chunked and fill them: P = 3, 8 (1, 2, 4, 5
// with -tags long; 7, 9, 12, 16, 17, 32, 33, 64 with -scoll.full), counts 0, 1, 3, 1000 and, up to
// 4 ranks, 65537.
func TestMatrixShm(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	sizes := sweep.More([]int{3, 8}, 1, 2, 4, 5)
	if *matrix.Full {
		sizes = append(sizes, 7, 9, 12, 16, 17, 32, 33, 64)
	}
	matrixOver(t, sizes, func(t *testing.T, p int) []*scoll.Comm { return matrix.ShmComms(t, p, shm.Config{RingBytes: 4096}) })
}
