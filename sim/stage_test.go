package sim

import (
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// TestStageMisaligned: a chain 0 → 1 → 2 (rank 1 receives in its round 0
// and sends in its round 1, rank 2 receives in its round 0) is charged as
// two stages whose messages' ends are in different stages; an exchange in
// every round is not.
func TestStageMisaligned(t *testing.T) {
	topo, err := topology.NewCrossbar(3)
	if err != nil {
		t.Fatal(err)
	}
	chain := func(b *schedule.Builder) {
		r := b.Rank()
		if r > 0 {
			b.Recv(r-1, schedule.RecvBuf(0, 1))
			b.EndRound()
		}
		if r < 2 {
			b.Send(r+1, schedule.RecvBuf(0, 1))
			b.EndRound()
		}
	}
	res, err := StageModel(Config{Topology: topo, Alpha: 1}, 3, 1, chain)
	if err != nil {
		t.Fatal(err)
	}
	if res.Misaligned != 2 || res.NumStages != 2 {
		t.Errorf("chain: %d misaligned of %d stages, want 2 of 2", res.Misaligned, res.NumStages)
	}
	ring := func(b *schedule.Builder) {
		r, p := b.Rank(), b.Size()
		for range 2 {
			b.Send((r+1)%p, schedule.RecvBuf(0, 1))
			b.Recv((r+p-1)%p, schedule.RecvBuf(1, 1))
			b.EndRound()
		}
	}
	if res, err = StageModel(Config{Topology: topo, Alpha: 1}, 3, 1, ring); err != nil || res.Misaligned != 0 {
		t.Errorf("ring: %d misaligned stages, %v; want 0", res.Misaligned, err)
	}
}
