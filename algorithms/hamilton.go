package algorithms

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/scoll/scoll/internal/errs"
)

// Hamiltonian paths through a torus or mesh of nodes (Sack 2011 sec. 3.4.3).
//
// Nodes are numbered in XYZ order (dimension 0 fastest). The snake path
// (boustrophedon, a reflected mixed-radix Gray code) visits every node of
// any grid, moving one hop along a mesh link at each step, so it needs no
// wrap-around links. The edge-disjoint cycles of a torus are found by
// cycle merging: start with every link coloured by its dimension (each
// colour a set of rings), then repeatedly recolour the four links of a
// square — two parallel links of colour A, two of colour B — from A to B
// and B to A when that lowers the number of cycles and leaves every node
// with two links of each colour. When every colour is one cycle, the d
// colours are d edge-disjoint Hamiltonian cycles that together use every
// link of the torus once (a Hamiltonian decomposition, which exists for any
// product of cycles).

// snakeIndex returns node v's position along the snake path of dims.
func snakeIndex(dims []int, v int) int {
	// Coordinates from the slowest dimension down: the index of the
	// higher dimensions decides the direction of the lower ones.
	d := len(dims)
	coord := make([]int, d)
	for j := range d {
		coord[j] = v % dims[j]
		v /= dims[j]
	}
	t := 0
	for j := d - 1; j >= 0; j-- {
		c := coord[j]
		if t%2 == 1 {
			c = dims[j] - 1 - c
		}
		t = t*dims[j] + c
	}
	return t
}

// Placement is where the ranks of a call sit on a machine's torus or mesh:
// Machine lists its dimension sizes (XYZ, dimension 0 fastest) and Nodes[r]
// is rank r's node, numbered in that order. The path algorithms (rd-path,
// rd-paths and their reduce-scatter mirrors) order the ranks along
// Hamiltonian paths of the whole machine, so a communicator spread over
// irregular, non-contiguous nodes still talks to its path neighbours.
type Placement struct {
	Machine []int
	Nodes   []int
}

// CheckPlacement reports whether pl places size ranks on distinct nodes of
// its machine; the error wraps errs.InvalidArgument.
func CheckPlacement(pl *Placement, size int) error {
	if len(pl.Machine) == 0 {
		return fmt.Errorf("%w: placement without machine dimensions", errs.InvalidArgument)
	}
	n := 1
	for _, k := range pl.Machine {
		if k < 1 || k > 1<<20 {
			return fmt.Errorf("%w: machine dimensions %v (each must be 1…%d)", errs.InvalidArgument, pl.Machine, 1<<20)
		}
		n *= k
		if n > 1<<24 {
			return fmt.Errorf("%w: machine %v has more than %d nodes", errs.InvalidArgument, pl.Machine, 1<<24)
		}
	}
	if len(pl.Nodes) != size {
		return fmt.Errorf("%w: placement lists %d nodes for %d ranks", errs.InvalidArgument, len(pl.Nodes), size)
	}
	seen := make(map[int]int, size)
	for r, v := range pl.Nodes {
		if v < 0 || v >= n {
			return fmt.Errorf("%w: rank %d placed on node %d, machine %v has %d", errs.InvalidArgument, r, v, pl.Machine, n)
		}
		if q, dup := seen[v]; dup {
			return fmt.Errorf("%w: ranks %d and %d placed on the same node %d", errs.InvalidArgument, q, r, v)
		}
		seen[v] = r
	}
	return nil
}

// placement returns p's placement: p.Placement, or the process grid with
// rank r on node r.
func (p *Params) placement() (machine, nodes []int) {
	if p.Placement != nil {
		return p.Placement.Machine, p.Placement.Nodes
	}
	return p.grid(), nil
}

// lineCache memoises the rank orders along paths: every rank of a call
// computes the same one. It holds the 64 newest.
var lineCache = newMemo[lineKey, *lineEntry](64)

type lineKey struct {
	kind    int // 0: snake; 1 + i: cycle i of the decomposition
	machine string
	n       int
	sum     uint64
}

// lineEntry is a path's rank order for one placement.
type lineEntry struct {
	nodes, line, at []int
}

func nodesSum(nodes []int) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range nodes {
		h = (h ^ uint64(v)) * 1099511628211
	}
	return h
}

// pathLine returns the ranks ordered by the position of their node along a
// path of the machine: the snake path (kind 0) or cycle kind−1 of the
// torus decomposition, cut at node 0, and each rank's place in that order.
// nodes nil means rank r on node r.
func pathLine(kind int, machine, nodes []int, size int) (line, at []int) {
	key := lineKey{kind, fmt.Sprint(machine), size, nodesSum(nodes)}
	e := lineCache.get(key, func() *lineEntry {
		line, at := computeLine(kind, machine, nodes, size)
		return &lineEntry{slices.Clone(nodes), line, at}
	})
	if !slices.Equal(e.nodes, nodes) { // a hash collision: not cached
		return computeLine(kind, machine, nodes, size)
	}
	return e.line, e.at
}

// computeLine is pathLine without the cache.
func computeLine(kind int, machine, nodes []int, size int) (line, at []int) {
	var pos func(v int) int
	if kind == 0 {
		pos = func(v int) int { return snakeIndex(machine, v) }
	} else {
		idx := torusCycleIndex(machine, kind-1)
		pos = func(v int) int { return idx[v] }
	}
	line = make([]int, size)
	key2 := make([]int, size)
	for r := range size {
		v := r
		if nodes != nil {
			v = nodes[r]
		}
		line[r], key2[r] = r, pos(v)
	}
	slices.SortFunc(line, func(a, b int) int { return key2[a] - key2[b] })
	at = make([]int, size)
	for t, r := range line {
		at[r] = t
	}
	return line, at
}

// torusCycleIndex returns each node's position along Hamiltonian cycle c of
// the decomposition of the torus dims. Where there is none (fewer than two
// dimensions of size > 1, or a search that got stuck: seen only with
// dimensions of size 2, as in 2×4 and 2×2×2), it is the snake path with the
// dimensions rotated by c, and the paths share links.
func torusCycleIndex(dims []int, c int) []int {
	if cycles := torusCycles(dims); cycles != nil {
		return cycles[c%len(cycles)]
	}
	n := 1
	for _, k := range dims {
		n *= k
	}
	d := len(dims)
	rot := make([]int, d)
	for t := range d {
		rot[t] = dims[(c+t)%d]
	}
	idx := make([]int, n)
	for v := range n {
		// v's coordinates renumbered with dimension c fastest.
		w, s := 0, 1
		for t := range d {
			j := (c + t) % d
			st := 1
			for i := range j {
				st *= dims[i]
			}
			w += v / st % dims[j] * s
			s *= dims[j]
		}
		idx[v] = snakeIndex(rot, w)
	}
	return idx
}

// cycleCache memoises the cycle decompositions by torus shape
// (fmt.Sprint(dims)); it holds the 16 newest.
var cycleCache = newMemo[string, [][]int](16)

// torusCycles returns d edge-disjoint Hamiltonian cycles of the torus dims
// (d its dimensions of size > 1, at least two), each as the position of
// every node along it starting from node 0, or nil when d < 2 or the
// search gets stuck (not seen for any size tried; see TestTorusCycles).
func torusCycles(dims []int) [][]int {
	return cycleCache.get(fmt.Sprint(dims), func() [][]int { return decompose(dims) })
}

// decompose runs the cycle-merging search described above, from a few
// random orders of the squares until one succeeds.
func decompose(all []int) [][]int {
	for seed := range uint64(32) {
		if c := decomposeSeed(all, seed); c != nil {
			return c
		}
	}
	return nil
}

func decomposeSeed(all []int, seed uint64) [][]int {
	var dims, stride []int
	s := 1
	for _, k := range all {
		if k > 1 {
			dims = append(dims, k)
			stride = append(stride, s)
		}
		s *= k
	}
	D, n := len(dims), s
	if D < 2 {
		return nil
	}
	// Link (v, j) joins node v to v+e_j; col[v*D+j] is its colour.
	step := func(v, j, dir int) int {
		c := v / stride[j] % dims[j]
		return v + (mod(c+dir, dims[j])-c)*stride[j]
	}
	col := make([]int8, n*D)
	for v := range n {
		for j := range D {
			col[v*D+j] = int8(j)
		}
	}
	id := make([][]int32, D)  // cycle of each node in each colour
	pos := make([][]int32, D) // position along it
	lens := make([][]int32, D)
	ncyc := make([]int, D)
	// walk relabels the cycles of colour c.
	walk := func(c int) {
		if id[c] == nil {
			id[c], pos[c] = make([]int32, n), make([]int32, n)
		}
		for v := range n {
			id[c][v] = -1
		}
		k := int32(0)
		lens[c] = lens[c][:0]
		for v0 := range n {
			if id[c][v0] >= 0 {
				continue
			}
			prevLink, v, p := -1, v0, int32(0)
			for id[c][v] < 0 {
				id[c][v], pos[c][v] = k, p
				p++
				// Leave v by a link of colour c other than the one we
				// came by.
				next, nl := -1, -1
				for j := range D {
					if l := v*D + j; int(col[l]) == c && l != prevLink {
						next, nl = step(v, j, 1), l
						break
					}
					if u := step(v, j, -1); int(col[u*D+j]) == c && u*D+j != prevLink {
						next, nl = u, u*D+j
						break
					}
				}
				prevLink, v = nl, next
			}
			lens[c] = append(lens[c], p)
			k++
		}
		ncyc[c] = int(k)
	}
	for c := range D {
		walk(c)
	}
	// forward reports whether colour c's cycle runs a → b at their link.
	forward := func(c, a, b int) bool {
		return pos[c][b] == (pos[c][a]+1)%lens[c][id[c][a]]
	}
	// delta is the change of colour c's cycle count when its links a1–a2
	// and b1–b2 (parallel, a1 and b1 adjacent) are swapped for a1–b1 and
	// a2–b2.
	delta := func(c, a1, a2, b1, b2 int) int {
		if id[c][a1] != id[c][b1] {
			return -1
		}
		if forward(c, a1, a2) == forward(c, b1, b2) {
			return 0
		}
		return 1
	}
	done := func() bool {
		for c := range D {
			if ncyc[c] != 1 {
				return false
			}
		}
		return true
	}
	rng := rand.New(rand.NewPCG(uint64(n), seed))
	type square struct{ v, j1, j2 int }
	var sq []square
	for v := range n {
		for j1 := range D {
			for j2 := j1 + 1; j2 < D; j2++ {
				sq = append(sq, square{v, j1, j2})
			}
		}
	}
	// corners returns a square's nodes and colours; ok when two parallel
	// links have colour A and the other two colour B ≠ A.
	corners := func(q square) (v, v1, v2, v12, A, B int, ok bool) {
		v, j1, j2 := q.v, q.j1, q.j2
		v1, v2 = step(v, j1, 1), step(v, j2, 1)
		v12 = step(v1, j2, 1)
		A, B = int(col[v*D+j1]), int(col[v*D+j2])
		ok = A != B && int(col[v2*D+j1]) == A && int(col[v1*D+j2]) == B
		return
	}
	swap := func(q square, A, B int) {
		v1, v2 := step(q.v, q.j1, 1), step(q.v, q.j2, 1)
		col[q.v*D+q.j1], col[v2*D+q.j1] = int8(B), int8(B)
		col[q.v*D+q.j2], col[v1*D+q.j2] = int8(A), int8(A)
	}
	// Phase 1: squares whose swap merges two cycles of both colours, with
	// union–find (no walks needed).
	uf := make([][]int32, D)
	for c := range D {
		uf[c] = make([]int32, n)
		for v := range n {
			uf[c][v] = id[c][v]
		}
	}
	parent := make([][]int32, D)
	for c := range D {
		parent[c] = make([]int32, ncyc[c])
		for k := range parent[c] {
			parent[c][k] = int32(k)
		}
	}
	find := func(c int, k int32) int32 {
		for parent[c][k] != k {
			parent[c][k] = parent[c][parent[c][k]]
			k = parent[c][k]
		}
		return k
	}
	for moved := true; moved; {
		moved = false
		rng.Shuffle(len(sq), func(i, k int) { sq[i], sq[k] = sq[k], sq[i] })
		for _, q := range sq {
			v, v1, v2, _, A, B, ok := corners(q)
			if !ok {
				continue
			}
			a, a2 := find(A, uf[A][v]), find(A, uf[A][v2])
			b, b2 := find(B, uf[B][v]), find(B, uf[B][v1])
			if a == a2 || b == b2 {
				continue
			}
			swap(q, A, B)
			parent[A][a2], parent[B][b2] = a, b
			moved = true
		}
	}
	for c := range D {
		walk(c)
	}
	// Phase 2: any swap that lowers the total number of cycles, with a few
	// neutral swaps to leave local minima.
	for pass := 0; !done() && pass < 200; pass++ {
		rng.Shuffle(len(sq), func(i, k int) { sq[i], sq[k] = sq[k], sq[i] })
		moved := false
		for _, q := range sq {
			if done() {
				break
			}
			v, v1, v2, v12, A, B, ok := corners(q)
			if !ok {
				continue
			}
			// Colour A has v–v1 and v2–v12 and would get v–v2, v1–v12;
			// colour B the reverse.
			dA := delta(A, v, v1, v2, v12)
			dB := delta(B, v, v2, v1, v12)
			if dA+dB < 0 || (pass > 0 && !moved && dA+dB == 0 && rng.IntN(64) == 0) {
				swap(q, A, B)
				walk(A)
				walk(B)
				moved = moved || dA+dB < 0
			}
		}
	}
	if !done() {
		return nil
	}
	out := make([][]int, D)
	for c := range D {
		p0 := pos[c][0]
		idx := make([]int, n)
		for v := range n {
			idx[v] = int(mod(int(pos[c][v]-p0), n))
		}
		out[c] = idx
	}
	return out
}
