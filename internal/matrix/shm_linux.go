package matrix

import (
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport/shm"
)

// ShmComms returns the world communicators of a job of p ranks in this
// process over one shared-memory segment, each rank with its own mapping
// as separate processes have.
func ShmComms(t testing.TB, p int, cfg shm.Config) []*scoll.Comm {
	t.Helper()
	eps, err := shm.NewLocalGroup(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return WorldComms(t, eps)
}
