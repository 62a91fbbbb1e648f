package main

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// Environment variables that describe the network to the drop-in: with
// them the default choice is the algorithm the stage model of Sack's
// thesis (package sim) charges least on that network, where MPI libraries
// choose from message size and process count only.
const (
	// EnvTopology is the network, in the CLI's syntax (scoll sim
	// --topology): torus:8x8x8, mesh:4x4, clos:..., dragonfly:..., ...
	EnvTopology = "SCOLL_TOPOLOGY"
	// EnvMapping places MPI_COMM_WORLD's ranks on its nodes, in the CLI's
	// syntax (scoll sim --mapping; default xyz: rank r on node r).
	EnvMapping = "SCOLL_MAPPING"
	// EnvNetwork gives the model's start-up time, link bandwidth and port
	// model: "6.29us,375MB/s,all" (the default: Sack's Blue Gene/P, whose
	// nodes drive all their links at once; "1" for one message in and
	// out of a node at a time).
	EnvNetwork = "SCOLL_NETWORK"
)

// network picks algorithms by simulating them on a topology.
type network struct {
	topo    topology.Topology
	mapping topology.Mapping // world rank → node (nil: rank r on node r)
	cfg     sim.Config
	// chosen caches the choice per collective, communicator members and
	// message size (rounded up to a power of two).
	chosen map[networkKey]networkChoice
}

type networkKey struct {
	coll    schedule.Collective
	members string // the world ranks, as a string key
	count   int
}

// networkChoice is an algorithm and the grid to run it with (nil: the
// communicator's).
type networkChoice struct {
	alg  string
	grid []int
}

// newNetwork reads the network from the environment variables (getenv
// looks them up) for a world of size ranks; nil when EnvTopology is unset.
func newNetwork(getenv func(string) string, size int) (*network, error) {
	spec := getenv(EnvTopology)
	if spec == "" {
		return nil, nil
	}
	t, err := topology.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvTopology, spec, err)
	}
	if size > t.Nodes() {
		return nil, fmt.Errorf("%s=%s: %d ranks on %d nodes", EnvTopology, spec, size, t.Nodes())
	}
	n := &network{topo: t, chosen: map[networkKey]networkChoice{}}
	if m := getenv(EnvMapping); m != "" && m != "xyz" {
		if n.mapping, err = topology.ParseMapping(m, t, size); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvMapping, m, err)
		}
	}
	n.cfg, err = parseNetwork(getenv(EnvNetwork))
	if err != nil {
		return nil, err
	}
	n.cfg.Topology = t
	return n, nil
}

// parseNetwork parses EnvNetwork's value ("" for the defaults).
func parseNetwork(v string) (sim.Config, error) {
	cfg := sim.Config{Alpha: 6.29e-6, Delta: 1 / 375e6, Ports: sim.MultiPort}
	if v == "" {
		return cfg, nil
	}
	parts := strings.Split(v, ",")
	bad := fmt.Errorf("%s=%s: want start-up,bandwidth[,ports], like 6.29us,375MB/s,1", EnvNetwork, v)
	if len(parts) < 2 || len(parts) > 3 {
		return cfg, bad
	}
	d, err := time.ParseDuration(strings.ReplaceAll(parts[0], "µs", "us"))
	if err != nil || d < 0 {
		return cfg, bad
	}
	cfg.Alpha = d.Seconds()
	bw, ok := strings.CutSuffix(parts[1], "B/s")
	mult := 1.0
	for _, u := range []struct {
		suffix string
		f      float64
	}{{"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if s, found := strings.CutSuffix(bw, u.suffix); found {
			bw, mult = s, u.f
			break
		}
	}
	var x float64
	if _, err := fmt.Sscan(bw, &x); !ok || err != nil || !(x > 0) {
		return cfg, bad
	}
	cfg.Delta = 1 / (x * mult)
	if len(parts) == 3 {
		switch parts[2] {
		case "1":
			cfg.Ports = sim.SinglePort
		case "all":
			cfg.Ports = sim.MultiPort
		default:
			return cfg, bad
		}
	}
	return cfg, nil
}

// choose returns the algorithm, of those the default choice may take for
// coll, that the stage model charges least for count elements of elem
// bytes on the communicator whose rank i is world rank members[i]; "" when
// none can run it.
func (n *network) choose(coll schedule.Collective, members []int, count, elem int) networkChoice {
	switch coll {
	case schedule.ReduceScatter, schedule.Allgatherv, schedule.Gatherv, schedule.Scatterv, schedule.Alltoallv:
		return networkChoice{} // counts per rank: the default choice's
	}
	if count > 0 {
		count = 1 << bits.Len(uint(count-1)) // the size class: a power of two
	}
	key := networkKey{coll: coll, members: fmt.Sprint(members), count: count}
	if c, ok := n.chosen[key]; ok {
		return c
	}
	size := len(members)
	cfg := n.cfg
	nodes := make(listMapping, size)
	for i, r := range members {
		nodes[i] = r
		if n.mapping != nil {
			nodes[i] = n.mapping.Node(r)
		}
	}
	cfg.Mapping = nodes
	p := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: count}, ElemSize: elem, Commutative: true}
	// The grid of the topology-aware algorithms: the torus's own when the
	// communicator fills it in order.
	if g, ok := n.topo.(topology.Grid); ok && size == n.topo.Nodes() && slices.Equal([]int(nodes), identity(size)) {
		p.Grid = g.Dims()
	}
	best, bestT := networkChoice{}, math.Inf(1)
	for _, in := range algorithms.List(coll) {
		q := p
		if in.Explicit || in.Check(&q) != nil {
			continue
		}
		res, err := stageTime(cfg, size, elem, in.Generator(q))
		if err == nil && res.Time < bestT {
			best, bestT = networkChoice{alg: in.Name, grid: p.Grid}, res.Time
		}
	}
	n.chosen[key] = best
	return best
}

// stageTime runs the stage model; a model that fails, even by panicking,
// only leaves its algorithm out of the choice.
func stageTime(cfg sim.Config, size, elem int, gen schedule.Generator) (res sim.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("stage model: %v", r)
		}
	}()
	return sim.StageModel(cfg, size, elem, gen)
}

// listMapping places rank i on node l[i].
type listMapping []int

func (l listMapping) Node(rank int) int { return l[rank] }

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
