//go:build linux

package scoll_test

import (
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/sweep"
	"github.com/scoll/scoll/transport/shm"
)

// shmComms returns the world communicators of a job of p ranks in this
// process over one shared-memory segment, each rank with its own mapping
// as separate processes have.
func shmComms(t testing.TB, p int, cfg shm.Config) []*scoll.Comm {
	t.Helper()
	eps, err := shm.NewLocalGroup(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return worldComms(t, eps)
}

// TestMatrixShm runs every algorithm of every collective over the
// shared-memory transport against the naive reference, with rings of 4 KiB
// so that long messages are chunked and fill them: P = 3, 8 (1, 2, 4, 5
// with -tags long; 7, 9, 12, 16, 17, 32, 33, 64 with -scoll.full), counts 0, 1, 3, 1000 and, up to
// 4 ranks, 65537.
func TestMatrixShm(t *testing.T) {
	skipShort(t, "matrix skipped in -short mode")
	sizes := sweep.More([]int{3, 8}, 1, 2, 4, 5)
	if *fullMatrix {
		sizes = append(sizes, 7, 9, 12, 16, 17, 32, 33, 64)
	}
	matrixOver(t, sizes, func(t *testing.T, p int) []*scoll.Comm { return shmComms(t, p, shm.Config{RingBytes: 4096}) })
}
