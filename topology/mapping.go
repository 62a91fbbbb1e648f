package topology

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidMapping is wrapped by every error about a rank-to-node mapping.
var ErrInvalidMapping = errors.New("topology: invalid mapping")

// Mapping places ranks on nodes: Node(r) is the node rank r runs on.
// Implementations are immutable and safe for concurrent use; Node panics
// for a rank outside the range the mapping was built for.
type Mapping interface {
	Node(rank int) int
}

// XYZ places rank r on node r: on a torus or mesh, ranks follow the nodes
// x fastest. It is the default mapping.
type XYZ struct{}

// Node returns rank.
func (XYZ) Node(rank int) int { return rank }

// String returns "xyz".
func (XYZ) String() string { return "xyz" }

// maxMortonTable bounds the nodes of a Morton mapping that needs a table.
const maxMortonTable = 1 << 26

// morton is the Z-order mapping of a grid.
type morton struct {
	nodes int
	step  []int   // power-of-two sizes: node offset of each rank bit
	table []int32 // otherwise: node of each rank
}

// Morton returns the Z-order (Morton) mapping of a torus, mesh or
// hypercube t: rank r goes to the node whose interleaved coordinates make
// the r-th smallest Morton code.
//
// The code of a node interleaves the bits of its coordinates, least
// significant first, round robin over the dimensions (x first) and skipping
// a dimension once its bits are used up; dimension i has ⌈log2 k_i⌉ bits.
// When every size is a power of two, codes are exactly 0..P−1 and rank r is
// the node with code r: on 8×8×8, ranks 0..7 fill a 2×2×2 cube, 0..63 a
// 4×4×4 one; on 4×4×8, ranks 0..31 fill 4×4×2 and the remaining bits go
// to z. For other sizes the codes have gaps and the ranks take the nodes in
// code order: the Z curve of the enclosing power-of-two box, restricted to
// the grid. That needs a table of one int32 per node (at most 2^26 nodes).
func Morton(t Topology) (Mapping, error) {
	g, ok := t.(Grid)
	if !ok {
		return nil, fmt.Errorf("%w: morton needs a torus, mesh or hypercube, not %v", ErrInvalidMapping, t)
	}
	return newMorton(g.Dims())
}

func newMorton(dims []int) (*morton, error) {
	m := &morton{nodes: 1}
	width := make([]int, len(dims))
	stride := make([]int, len(dims))
	pow2 := true
	for i, k := range dims {
		stride[i] = m.nodes
		m.nodes *= k
		width[i] = bits.Len(uint(k - 1))
		pow2 = pow2 && k&(k-1) == 0
	}
	// The bit schedule: (dimension, bit) of each code bit, least first.
	type pos struct{ dim, bit int }
	var sched []pos
	for b := 0; ; b++ {
		n := len(sched)
		for i, w := range width {
			if b < w {
				sched = append(sched, pos{i, b})
			}
		}
		if len(sched) == n {
			break
		}
	}
	if pow2 {
		for _, p := range sched {
			m.step = append(m.step, stride[p.dim]<<p.bit)
		}
		return m, nil
	}
	if m.nodes > maxMortonTable {
		return nil, fmt.Errorf("%w: morton on %s has %d nodes, more than %d for sizes that are not powers of two", ErrInvalidMapping, joinInts(dims, "x"), m.nodes, maxMortonTable)
	}
	type entry struct {
		code uint64
		node int32
	}
	entries := make([]entry, m.nodes)
	coord := make([]int, len(dims))
	for n := range entries {
		var code uint64
		for j, p := range sched {
			code |= uint64(coord[p.dim]>>p.bit&1) << j
		}
		entries[n] = entry{code, int32(n)}
		for i := range coord { // next node, x fastest
			if coord[i]++; coord[i] < dims[i] {
				break
			}
			coord[i] = 0
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.code, b.code) })
	m.table = make([]int32, m.nodes)
	for r, e := range entries {
		m.table[r] = e.node
	}
	return m, nil
}

// Node returns the node of rank r, which must be in [0, Nodes()).
func (m *morton) Node(rank int) int {
	if m.table != nil {
		return int(m.table[rank])
	}
	if uint(rank) >= uint(m.nodes) {
		panic(fmt.Sprintf("topology: rank %d out of range [0, %d)", rank, m.nodes))
	}
	n := 0
	for j := 0; rank != 0; j++ {
		if rank&1 != 0 {
			n += m.step[j]
		}
		rank >>= 1
	}
	return n
}

// String returns "morton".
func (m *morton) String() string { return "morton" }

// explicit is a mapping given as a list.
type explicit struct {
	nodes []int
}

// Explicit returns the mapping that places rank r on nodes[r]. The nodes
// must be distinct and in [0, numNodes); the ranks are 0..len(nodes)-1.
// Explicit copies nodes.
func Explicit(nodes []int, numNodes int) (Mapping, error) {
	if len(nodes) > numNodes {
		return nil, fmt.Errorf("%w: %d ranks on %d nodes", ErrInvalidMapping, len(nodes), numNodes)
	}
	seen := make(map[int]int, len(nodes))
	for r, n := range nodes {
		if n < 0 || n >= numNodes {
			return nil, fmt.Errorf("%w: rank %d on node %d, want a node in [0, %d)", ErrInvalidMapping, r, n, numNodes)
		}
		if prev, dup := seen[n]; dup {
			return nil, fmt.Errorf("%w: ranks %d and %d both on node %d", ErrInvalidMapping, prev, r, n)
		}
		seen[n] = r
	}
	return &explicit{nodes: slices.Clone(nodes)}, nil
}

// Node returns the node of rank r, which must be in [0, len(nodes)).
func (e *explicit) Node(rank int) int { return e.nodes[rank] }

// String returns "list:" and the nodes, as ParseMapping accepts them.
func (e *explicit) String() string { return "list:" + joinInts(e.nodes, ",") }

// Random places ranks on distinct nodes of t drawn at random (a fixed
// sequence for each seed): an irregular partition, as a batch scheduler
// hands out on a busy machine.
func Random(t Topology, ranks int, seed uint64) (Mapping, error) {
	if ranks > t.Nodes() {
		return nil, fmt.Errorf("%w: %d ranks on %d nodes", ErrInvalidMapping, ranks, t.Nodes())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5c011))
	return Explicit(rng.Perm(t.Nodes())[:ranks], t.Nodes())
}

// ParseMapping builds the mapping of ranks 0..ranks-1 onto the nodes of t
// from its spec: "xyz" (XYZ), "morton" (Morton), "list:n0,n1,..."
// (Explicit, with exactly ranks entries), "random[:seed]" (Random), "gray"
// (Gray), "ring" (Ring) or "htree" (HTree). ranks ≤ 0 means t.Nodes().
// Errors wrap ErrInvalidMapping.
func ParseMapping(spec string, t Topology, ranks int) (Mapping, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no topology", ErrInvalidMapping)
	}
	if ranks <= 0 {
		ranks = t.Nodes()
	}
	if ranks > t.Nodes() {
		return nil, fmt.Errorf("%w: %d ranks on %v, which has %d nodes", ErrInvalidMapping, ranks, t, t.Nodes())
	}
	s := strings.TrimSpace(spec)
	kind, list, hasList := strings.Cut(s, ":")
	switch k := strings.ToLower(strings.TrimSpace(kind)); {
	case k == "xyz" && !hasList:
		return XYZ{}, nil
	case k == "morton" && !hasList:
		return Morton(t)
	case k == "gray" && !hasList:
		return Gray(t)
	case k == "ring" && !hasList:
		return Ring(t, ranks)
	case k == "htree" && !hasList:
		return HTree(t, ranks)
	case k == "random":
		seed := uint64(1)
		if hasList {
			v, err := strconv.ParseUint(strings.TrimSpace(list), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w %q: seed %q is not a number", ErrInvalidMapping, spec, list)
			}
			seed = v
		}
		return Random(t, ranks, seed)
	case k == "list" && hasList:
		parts := strings.Split(list, ",")
		if len(parts) != ranks {
			return nil, fmt.Errorf("%w %q: %d nodes listed for %d ranks", ErrInvalidMapping, spec, len(parts), ranks)
		}
		nodes := make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, fmt.Errorf("%w %q: entry %d (%q) is not a node number", ErrInvalidMapping, spec, i, p)
			}
			nodes[i] = n
		}
		return Explicit(nodes, t.Nodes())
	default:
		return nil, fmt.Errorf("%w %q: want xyz, morton, gray, ring, htree, random[:seed] or list:n0,n1,...", ErrInvalidMapping, spec)
	}
}
