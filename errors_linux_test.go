//go:build linux

package scoll_test

import (
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/shm"
)

// TestBcastRunsAheadShm: between processes' shared memory a small bcast
// is an exchange in which the root waits for no one; a mismatched one
// fails at every leaf, and the root learns of it no later than its next
// call (an exchange, a message schedule) or its Close, as with eager
// sends over TCP (TestEagerMismatchTCP).
func TestBcastRunsAheadShm(t *testing.T) {
	testRootRunsAhead(t, scoll.WithAlgorithm("exchange"), func(t *testing.T, p int) []*scoll.Comm {
		return matrix.ShmComms(t, p, shm.Config{})
	})
}
