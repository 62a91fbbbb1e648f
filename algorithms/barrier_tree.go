package algorithms

import "github.com/scoll/scoll/schedule"

// Tree barrier.
//
// Arrival is gathered up a binomial tree rooted at rank 0 (the parent of r is
// r with its lowest set bit cleared; its children are r+2^k for 2^k below
// that bit), then the release goes back down the same tree. A rank waits for
// all its children in one round, then signals its parent and waits for the
// release in the next, then releases its children.
//
//	P=8  up:   1→0 3→2 5→4 7→6, then 2→0 6→4, then 4→0
//	     down: 0→4, then 0→2 4→6, then 0→1 2→3 4→5 6→7
//
// Cost: 2⌈lg P⌉α.
// Source: binomial-tree gather and broadcast (MPICH); Hoefler–Moor 2014.
func barrierTree(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	low := P // lowest set bit of r; for rank 0 every mask < P
	if r != 0 {
		low = r & -r
	}
	var kids []int
	for m := 1; m < low && r+m < P; m <<= 1 {
		kids = append(kids, r+m)
	}
	for _, c := range kids {
		b.Recv(c, barrierToken)
	}
	b.EndRound()
	if r != 0 {
		b.Exchange(r-low, barrierToken, barrierToken)
		b.EndRound()
	}
	for i := len(kids) - 1; i >= 0; i-- {
		b.Send(kids[i], barrierToken)
	}
	b.EndRound()
}

func barrierTreeCost(p *Params) Cost {
	return Cost{Alpha: 2 * float64(ceilLog2(p.Size))}
}

func init() {
	register(Info{Name: Tree, Build: barrierTree, Cost: barrierTreeCost,
		Doc:    "gather arrival up a binomial tree to rank 0, then release down it",
		Source: "binomial tree (MPICH); Hoefler-Moor 2014"}, schedule.Barrier)
}
