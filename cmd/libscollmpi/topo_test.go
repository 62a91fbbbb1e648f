package main

import (
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// On a torus whose nodes drive all their links (Sack's Blue Gene/P, the
// default) the stage model takes Sack's 6-bucket allgather for large
// messages and a latency-bound one for small; with one port per node it
// does not. Bad specs fail.
func TestNetworkChoice(t *testing.T) {
	torus, err := newNetwork(env(map[string]string{EnvTopology: "torus:4x4x4"}), 64)
	if err != nil {
		t.Fatal(err)
	}
	members := identity(64)
	big := torus.choose(schedule.Allgather, members, 1<<16, 8)
	if big.alg != "bucket6" || len(big.grid) != 3 {
		t.Fatalf("torus allgather of 512 KiB per rank: %+v, want bucket6 on the 4x4x4 grid", big)
	}
	if small := torus.choose(schedule.Allgather, members, 1, 8); small.alg == "bucket6" || small.alg == "" {
		t.Errorf("torus allgather of 8 B per rank: %q", small.alg)
	}
	one, err := newNetwork(env(map[string]string{EnvTopology: "torus:4x4x4", EnvNetwork: "6.29us,375MB/s,1"}), 64)
	if err != nil {
		t.Fatal(err)
	}
	if c := one.choose(schedule.Allgather, members, 1<<16, 8); c.alg == "bucket6" {
		t.Errorf("single-port torus: %q", c.alg)
	}
	t.Logf("torus:4x4x4, 64 ranks, allgather 512 KiB: %s; 8 B: %s", big.alg, torus.choose(schedule.Allgather, members, 1, 8).alg)
	if again := torus.choose(schedule.Allgather, members, 1<<16-3, 8); again.alg != big.alg {
		t.Errorf("the same size class chose %q, then %q", big.alg, again.alg)
	}
	for _, bad := range []map[string]string{
		{EnvTopology: "torus:4y4"},
		{EnvTopology: "torus:2x2"}, // 4 nodes for 64 ranks
		{EnvTopology: "torus:4x4x4", EnvMapping: "spiral"},
		{EnvTopology: "torus:4x4x4", EnvNetwork: "fast"},
		{EnvTopology: "torus:4x4x4", EnvNetwork: "1us,10GB/s,2"},
	} {
		if _, err := newNetwork(env(bad), 64); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if n, err := newNetwork(env(nil), 64); n != nil || err != nil {
		t.Errorf("no topology: %v, %v", n, err)
	}
	cfg, err := parseNetwork("2us,1GB/s,1")
	if err != nil || cfg.Alpha != 2e-6 || cfg.Delta != 1e-9 || cfg.Ports != sim.SinglePort {
		t.Errorf("2us,1GB/s,all: %+v, %v", cfg, err)
	}
}
