package algorithms

import (
	"errors"
	"fmt"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// hierColls are the collectives with a node-aware algorithm.
var hierColls = []schedule.Collective{schedule.Allreduce, schedule.Bcast, schedule.Reduce, schedule.Allgather, schedule.Barrier}

// hierLayout is a named node layout (rank → node).
type hierLayout struct {
	name  string
	nodes []int
}

// hierLayouts returns node layouts to verify on: consecutive, uneven,
// interleaved, one node, every rank alone, and one of every test size.
func hierLayouts() []hierLayout {
	ls := []hierLayout{
		{"2x4", []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{"sizes1,2,5", []int{0, 1, 1, 2, 2, 2, 2, 2}},
		{"sizes5,2,1-unordered-numbers", []int{7, 7, 7, 7, 7, 3, 3, 9}},
		{"interleaved2x4", []int{0, 1, 0, 1, 0, 1, 0, 1}},
		{"interleaved-uneven", []int{2, 0, 1, 0, 2, 2, 1, 0, 2}},
		{"5x2", []int{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}},
		{"one-node", []int{4, 4, 4, 4, 4}},
		{"all-alone", []int{0, 1, 2, 3, 4, 5}},
		{"single", []int{0}},
	}
	for _, p := range testSizes {
		nodes := make([]int, p)
		m := max(1, p/3) // about three ranks a node, mixed up
		for r := range nodes {
			nodes[r] = (r*5 + r/4) % m
		}
		ls = append(ls, hierLayout{fmt.Sprintf("mixed-p%d", p), nodes})
	}
	return ls
}

// TestHierVerifyLayouts proves the node-aware algorithms on every layout of
// hierLayouts with every count, root and in-place mode of specsFor, with
// commutative and non-commutative operators.
func TestHierVerifyLayouts(t *testing.T) {
	for _, c := range hierColls {
		in := mustLookup(t, c, Hier)
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			for _, l := range hierLayouts() {
				for _, s := range specsFor(c, len(l.nodes)) {
					verifyBoth(t, in, Params{Spec: s, ElemSize: 4, Nodes: l.nodes})
				}
			}
		})
	}
}

// TestHierInner proves the node-aware algorithms with named inner
// algorithms, Sack's topology-aware ones among them.
func TestHierInner(t *testing.T) {
	inner := map[schedule.Collective][]string{
		schedule.Allreduce: {Ring, RecursiveDoubling, Rabenseifner, ReduceBcast, RDOptimal, Bucket, RDHalving},
		schedule.Bcast:     {Linear, ScatterAllgather, TwoTree, ScatterBucket},
		schedule.Reduce:    {Linear, InOrderBinary, Rabenseifner, RDHalvingGather},
		schedule.Allgather: {Ring, Bruck, Linear, RDOptimal, Bucket},
		schedule.Barrier:   {Dissemination, Tree, RecursiveDoubling},
	}
	layouts := [][]int{{0, 0, 0, 1, 1, 2, 2, 2, 2, 3}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1}, {1, 1, 0, 0}}
	for _, c := range hierColls {
		in := mustLookup(t, c, Hier)
		for _, name := range inner[c] {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				t.Parallel()
				for _, nodes := range layouts {
					for _, s := range specsFor(c, len(nodes)) {
						verifyBoth(t, in, Params{Spec: s, ElemSize: 4, Nodes: nodes, Inner: name})
					}
				}
			})
		}
	}
}

// TestHierLarge proves the node-aware algorithms at 64 ranks on 8
// interleaved nodes and on 5 consecutive nodes of unequal sizes.
func TestHierLarge(t *testing.T) {
	const P = 64
	inter, blocks := make([]int, P), make([]int, P)
	for r := range P {
		inter[r] = r % 8
		blocks[r] = min(r/13, 4)
	}
	for _, c := range hierColls {
		in := mustLookup(t, c, Hier)
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			for _, nodes := range [][]int{inter, blocks} {
				s := schedule.Spec{Coll: c, Size: P, Root: 37, Count: 5}
				if c == schedule.Barrier {
					s.Count = 0
				}
				verifyBoth(t, in, Params{Spec: s, ElemSize: 4, Nodes: nodes})
			}
		})
	}
}

// hierSchedules returns every rank's schedule of algorithm in for p.
func hierSchedules(t *testing.T, in *Info, p Params) []*schedule.Schedule {
	t.Helper()
	ss := make([]*schedule.Schedule, p.Size)
	for r := range p.Size {
		q := p
		q.Rank = r
		s, err := in.Schedule(&q)
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		ss[r] = s
	}
	return ss
}

// TestHierMessages counts the messages between and inside nodes: only
// leaders send between nodes, exactly the messages of the inner algorithm
// on the leaders' call, and the node phases send one message per tree edge
// (k − 1 a phase in a group of k).
func TestHierMessages(t *testing.T) {
	phases := map[schedule.Collective]int{ // node phases a group runs
		schedule.Allreduce: 2, schedule.Bcast: 1, schedule.Reduce: 1, schedule.Allgather: 2, schedule.Barrier: 2,
	}
	layouts := [][]int{
		{0, 0, 0, 0, 1, 1, 1, 1},
		{0, 1, 1, 2, 2, 2, 2, 2},
		{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 3},
	}
	for _, c := range hierColls {
		in := mustLookup(t, c, Hier)
		for li, nodes := range layouts {
			p := Params{Spec: schedule.Spec{Coll: c, Size: len(nodes), Root: len(nodes) - 2, Count: 6},
				Commutative: true, ElemSize: 4, Nodes: nodes}
			if c == schedule.Barrier {
				p.Count = 0
			}
			g := hierGroupsOf(&p)
			leaders := g.leaders(-1)
			if c.Rooted() {
				leaders = g.leaders(p.Root)
			}
			isLeader := map[int]bool{}
			for _, l := range leaders {
				isLeader[l] = true
			}
			inter, intra := 0, 0
			for r, s := range hierSchedules(t, in, p) {
				for _, rd := range s.Rounds {
					for _, o := range rd {
						if o.Kind != schedule.OpSend {
							continue
						}
						if nodes[o.Peer] == nodes[r] {
							intra++
							continue
						}
						inter++
						if !isLeader[r] || !isLeader[o.Peer] {
							t.Errorf("%s layout %d: rank %d sends to %d across nodes, not both leaders", c, li, r, o.Peer)
						}
					}
				}
			}
			// The inner algorithm on the leaders' call, built on its own.
			wantInter := 0
			for i := range leaders {
				q := hierLeaderCall(&p, g, i)
				alg, err := hierInner(&p, &q)
				if err != nil {
					t.Fatal(err)
				}
				s, err := alg.Schedule(&q)
				if err != nil {
					t.Fatal(err)
				}
				wantInter += s.Messages()
			}
			wantIntra := 0
			for _, m := range g.members {
				wantIntra += phases[c] * (len(m) - 1)
			}
			if inter != wantInter || intra != wantIntra {
				t.Errorf("%s layout %d: %d messages between nodes, %d inside; want %d, %d", c, li, inter, intra, wantInter, wantIntra)
			}
			if L := len(g.members); inter > 2*L*L {
				t.Errorf("%s layout %d: %d messages between %d leaders", c, li, inter, L)
			}
		}
	}
}

// TestHierGroups pins the grouping: by node, or by runs of a node's
// consecutive ranks for non-commutative reductions, leaders per root.
func TestHierGroups(t *testing.T) {
	nodes := []int{2, 0, 0, 2, 1, 1}
	p := Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 6}, Commutative: true, Nodes: nodes}
	if got, want := fmt.Sprint(hierGroupsOf(&p).members), "[[0 3] [1 2] [4 5]]"; got != want {
		t.Errorf("commutative groups %s, want %s", got, want)
	}
	p.Commutative = false
	if got, want := fmt.Sprint(hierGroupsOf(&p).members), "[[0] [1 2] [3] [4 5]]"; got != want {
		t.Errorf("non-commutative groups %s, want %s", got, want)
	}
	p.Coll, p.Root = schedule.Bcast, 5
	g := hierGroupsOf(&p)
	if got, want := fmt.Sprint(g.leaders(p.Root)), "[0 1 5]"; got != want {
		t.Errorf("bcast leaders %s, want %s", got, want)
	}
	p.Nodes = nil
	if got := len(hierGroupsOf(&p).members); got != 6 {
		t.Errorf("without nodes %d groups, want 6", got)
	}
}

// TestHierCheck: bad layouts and inner algorithms are reported with typed
// errors.
func TestHierCheck(t *testing.T) {
	in := mustLookup(t, schedule.Allreduce, Hier)
	base := Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: 3}, Commutative: true}
	cases := []struct {
		name  string
		nodes []int
		inner string
		want  error
	}{
		{"short", []int{0, 0, 1}, "", errs.InvalidArgument},
		{"long", []int{0, 0, 1, 1, 1}, "", errs.InvalidArgument},
		{"negative", []int{0, -1, 1, 1}, "", errs.InvalidArgument},
		{"unknown inner", []int{0, 0, 1, 1}, "no-such", errs.InvalidArgument},
		{"inner of another collective", []int{0, 0, 1, 1}, "dissemination", errs.InvalidArgument},
		{"ok", []int{0, 0, 1, 1}, "ring", nil},
	}
	for _, tc := range cases {
		p := base
		p.Nodes, p.Inner = tc.nodes, tc.inner
		err := in.Check(&p)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Check = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Three leaders cannot run a power-of-two allgather.
	ag := mustLookup(t, schedule.Allgather, Hier)
	p := Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 6, Count: 2},
		Nodes: []int{0, 0, 1, 1, 2, 2}, Inner: RecursiveDoubling}
	if err := ag.Check(&p); !errors.Is(err, errs.Unsupported) {
		t.Errorf("allgather with recursive doubling among 3 leaders: Check = %v, want Unsupported", err)
	}
	// A layout is checked for every algorithm, not only the node-aware ones.
	ring := mustLookup(t, schedule.Allreduce, Ring)
	p = base
	p.Nodes = []int{0}
	if err := ring.Check(&p); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("ring with a bad layout: Check = %v, want InvalidArgument", err)
	}
}

// TestHierSelect: the default rule picks the node-aware algorithm when the
// layout has several nodes and a node with more than one rank, and never
// otherwise.
func TestHierSelect(t *testing.T) {
	for _, c := range hierColls {
		for _, tc := range []struct {
			nodes []int
			hier  bool
		}{
			{nil, false},
			{[]int{0, 0, 0, 0, 1, 1, 1, 1}, true},
			{[]int{0, 1, 0, 1, 0, 1, 0, 1}, true},
			{[]int{0, 1, 2, 3, 4, 5, 6, 7}, false},
			{[]int{3, 3, 3, 3, 3, 3, 3, 3}, false},
		} {
			for _, n := range []int{1, 1 << 16} {
				p := Params{Spec: schedule.Spec{Coll: c, Size: 8, Count: n, Root: 3}, Commutative: true, ElemSize: 4, Nodes: tc.nodes}
				if c == schedule.Barrier {
					p.Count = 0
				}
				got := Select(&p, InProcess, Caps{})
				if got == nil || (got.Name == Hier) != tc.hier {
					t.Errorf("%s nodes %v count %d: Select = %v, want hier %v", c, tc.nodes, n, got, tc.hier)
				}
				// Without a two-level layout the choice is the one without nodes.
				if !tc.hier {
					q := p
					q.Nodes = nil
					if flat := Select(&q, InProcess, Caps{}); flat != got {
						t.Errorf("%s nodes %v: Select = %s, without nodes %s", c, tc.nodes, got.Name, flat.Name)
					}
				}
			}
		}
	}
}

// TestHierCostWithoutNodes: without a layout every rank leads its own node,
// and the cost is the inner algorithm's (plus the copy into place).
func TestHierCostWithoutNodes(t *testing.T) {
	for _, c := range []schedule.Collective{schedule.Bcast, schedule.Reduce, schedule.Barrier} {
		p := Params{Spec: schedule.Spec{Coll: c, Size: 12, Count: 1000}, Commutative: true, ElemSize: 4}
		if c == schedule.Barrier {
			p.Count = 0
		}
		flat := Select(&p, InProcess, Caps{})
		q := p
		q.Machine = InProcess
		if got, want := mustLookup(t, c, Hier).Cost(&q), flat.Cost(&q); got != want {
			t.Errorf("%s: hier cost %+v, %s costs %+v", c, got, flat.Name, want)
		}
	}
}
