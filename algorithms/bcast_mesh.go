package algorithms

import "github.com/scoll/scoll/schedule"

// Mesh bcast and reduce: single-item trees on the process grid, dimension
// by dimension (the notes' Fig. 12). In phase k the item spreads along
// dimension k, from every rank that has it and lies on the root's line in
// the dimensions above k, to its neighbours one step farther from the
// root's coordinate: the root's line first, then planes, then the whole
// grid. Every message goes to a grid neighbour, so under dimension-order
// routing on a mesh or torus of the grid's shape no two messages of a step
// share a link. The reduce runs the same tree backwards, phases in reverse
// order.
//
//	4×3 grid, root (1,0):  phase 0: (1,0)→(0,0),(2,0); (2,0)→(3,0)
//	                       phase 1: (x,0)→(x,1)→(x,2) for every x
//
// Cost: H(α + nβ) (reduce: H(α + nβ + nγ)), H = Σ_k max(c_k, d_k − 1 − c_k)
// + |{k : 0 < c_k = d_k − 1 − c_k}| for the root's coordinates c: the
// farthest rank's distance (at most the grid's diameter), plus one message
// per dimension whose two sides from the root are equally long (the root's
// line sends one message at a time, the longer side first).
// Source: Heath, Solomonik 2019, Parallel Computing notes, sec. 5.1, Fig. 12.
func bcastMesh(b *schedule.Builder, p *Params) {
	meshTree(b, p, false)
}

func reduceMesh(b *schedule.Builder, p *Params) {
	meshTree(b, p, true)
}

// meshStep is one phase of a rank in the mesh tree: the neighbour it
// receives from (−1: none) and those it sends to.
type meshStep struct {
	from int
	to   []int
}

// meshSteps returns rank r's phases in bcast order.
func meshSteps(grid []int, r, root int) []meshStep {
	D := len(grid)
	c, c0 := make([]int, D), make([]int, D)
	stride := make([]int, D)
	s := 1
	for k, d := range grid {
		c[k], c0[k], stride[k] = r/s%d, root/s%d, s
		s *= d
	}
	top := -1 // the highest dimension where r differs from the root
	for k := range D {
		if c[k] != c0[k] {
			top = k
		}
	}
	var steps []meshStep
	for k := max(top, 0); k < D; k++ {
		st := meshStep{from: -1}
		switch {
		case k == top && c[k] > c0[k]:
			st.from = r - stride[k]
			if c[k]+1 < grid[k] {
				st.to = append(st.to, r+stride[k])
			}
		case k == top:
			st.from = r + stride[k]
			if c[k] > 0 {
				st.to = append(st.to, r-stride[k])
			}
		default: // on the root's line in dimension k: both ways, the longer side first
			down, up := c[k] > 0, c[k]+1 < grid[k]
			if up && (!down || grid[k]-1-c[k] > c[k]) {
				st.to = append(st.to, r+stride[k])
				up = false
			}
			if down {
				st.to = append(st.to, r-stride[k])
			}
			if up {
				st.to = append(st.to, r+stride[k])
			}
		}
		if st.from >= 0 || len(st.to) > 0 {
			steps = append(steps, st)
		}
	}
	return steps
}

func meshTree(b *schedule.Builder, p *Params, reduce bool) {
	n := p.Count
	steps := meshSteps(p.grid(), p.Rank, p.Root)
	if !reduce {
		buf := schedule.RecvBuf(0, n)
		for _, st := range steps {
			if st.from >= 0 {
				b.Recv(st.from, buf)
				b.EndRound()
			}
			for _, t := range st.to {
				b.Send(t, buf)
			}
			b.EndRound()
		}
		return
	}
	in := p.input()
	acc := schedule.RecvBuf(0, n)
	if p.Rank != p.Root {
		acc = b.Alloc(n)
	}
	have := in
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i]
		for _, t := range st.to {
			b.RecvReduce(t, acc, have, false)
			have = acc
			b.EndRound()
		}
		if st.from >= 0 {
			b.Send(st.from, have)
			b.EndRound()
		}
	}
	if p.Rank == p.Root && have != acc {
		b.Copy(acc, have)
		b.EndRound()
	}
}

// meshHeight is the mesh tree's critical path in messages for p: the
// farthest rank's distance from the root, plus one for each dimension in
// which the root's line has two equally long sides (a rank sends one
// message at a time, the longer side first).
func meshHeight(p *Params) int {
	h, s := 0, 1
	for _, d := range p.grid() {
		c := p.Root / s % d
		h += max(c, d-1-c)
		if c > 0 && c == d-1-c {
			h++
		}
		s *= d
	}
	return h
}

func meshCost(p *Params, reduces bool) Cost {
	if p.Size <= 1 || p.Count == 0 {
		return Cost{}
	}
	return rtHopsCost(p, meshHeight(p), reduces)
}

func init() {
	register(Info{Name: Mesh, Build: bcastMesh, Cost: func(p *Params) Cost { return meshCost(p, false) },
		Doc:    "single-item tree on the process grid, dimension by dimension to neighbours only: height the farthest rank's distance, congestion-free",
		Source: "Heath, Solomonik 2019, sec. 5.1, Fig. 12"}, schedule.Bcast)
	register(Info{Name: Mesh, Build: reduceMesh, Cost: func(p *Params) Cost { return meshCost(p, true) },
		Requires: NeedsCommutative,
		Doc:      "the mesh bcast tree backwards: single-item reduction to grid neighbours, dimension by dimension; commutative only",
		Source:   "Heath, Solomonik 2019, sec. 5.1, Fig. 12"}, schedule.Reduce)
}
