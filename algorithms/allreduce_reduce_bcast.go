package algorithms

import "github.com/scoll/scoll/schedule"

// allreduceTreeReduce reduces every rank's vector in to rank 0 along a
// binomial tree and returns the region holding rank 0's result (on other
// ranks the region they last sent). In the step with distance d = 1, 2, 4, …
// rank r with bit d set sends its partial result to r−d and leaves; rank r
// with r+d < P receives r+d's partial and appends it on the right, so
// contributions combine in rank order.
//
// acc is the writable vector-shaped region this rank accumulates in. When
// acc == in (in place) children's partials arrive in scratch from tmp;
// otherwise the first child's partial is received straight into acc and in
// is folded in on its left, so no copy is made.
//
//	P=8   d=1: 1→0 3→2 5→4 7→6   d=2: 2→0 6→4   d=4: 4→0
//
// Cost: ⌈lg P⌉·(α + nβ + nγ).
func allreduceTreeReduce(b *schedule.Builder, r, P int, in, acc schedule.Region, tmp *redscatTemp) schedule.Region {
	have := in
	for d := 1; d < P; d <<= 1 {
		if r&d != 0 {
			b.Send(r-d, have)
			b.EndRound()
			return have
		}
		c := r + d
		if c >= P {
			continue
		}
		if have == acc {
			t := tmp.get(acc.Len)
			b.Recv(c, t)
			b.Reduce(acc, t)
		} else {
			b.Recv(c, acc)
			b.ReduceLeft(acc, have)
			have = acc
		}
		b.EndRound()
	}
	return have
}

// allreduceTreeBcast broadcasts buf from rank 0 along the binomial tree of
// allreduceTreeReduce, run backwards: rank r receives from r − lowbit(r) and
// then sends to r+d for d = lowbit(r)/2, …, 1 (rank 0: from the largest power
// of two below P down to 1).
//
//	P=8   d=4: 0→4   d=2: 0→2 4→6   d=1: 0→1 2→3 4→5 6→7
//
// Cost: ⌈lg P⌉·(α + nβ).
func allreduceTreeBcast(b *schedule.Builder, r, P int, buf schedule.Region) {
	d := 1
	for ; d < P; d <<= 1 {
		if r&d != 0 {
			b.Recv(r-d, buf)
			b.EndRound()
			break
		}
	}
	for d >>= 1; d > 0; d >>= 1 {
		if r+d < P {
			b.Send(r+d, buf)
			b.EndRound()
		}
	}
}

// Reduce-then-broadcast allreduce.
//
// A binomial reduce to rank 0 in rank order (so non-commutative operators are
// safe) followed by a binomial broadcast of the result. Latency-bound vectors
// only: every step moves the whole vector.
//
//	P=4   reduce: 1→0 3→2 | 2→0      bcast: 0→2 | 0→1 2→3
//
// Cost: 2⌈lg P⌉·α + 2⌈lg P⌉·nβ + ⌈lg P⌉·nγ.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH's reduce + bcast);
// Hoefler–Moor 2014 sec. 3.
func allreduceReduceBcast(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	buf := schedule.RecvBuf(0, n)
	in := p.input()
	res := allreduceTreeReduce(b, r, P, in, buf, &redscatTemp{b: b})
	if r == 0 {
		b.Copy(buf, res)
		b.EndRound()
	}
	allreduceTreeBcast(b, r, P, buf)
}

func allreduceReduceBcastCost(p *Params) Cost {
	lg := float64(ceilLog2(p.Size))
	n := p.bytes(p.Count)
	return Cost{Alpha: 2 * lg, Beta: 2 * lg * n, Gamma: lg * n}
}

func init() {
	register(Info{Name: ReduceBcast, Build: allreduceReduceBcast, Cost: allreduceReduceBcastCost,
		Doc:    "binomial reduce to rank 0, then binomial broadcast; keeps rank order",
		Source: "Thakur, Rabenseifner, Gropp 2005; Hoefler-Moor 2014 sec. 3"}, schedule.Allreduce)
}
