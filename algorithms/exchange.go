package algorithms

import "github.com/scoll/scoll/schedule"

// Exchange: the transport's shared-memory exchange (transport.Exchanger;
// in-process ranks), registered for allreduce, reduce, bcast, allgather and
// barrier. Every rank publishes its input in a slot its peers read, waits
// until every rank has published for the same call, and computes its own
// result from all the inputs: no messages, no leader. Reductions fold the
// inputs in rank order on every rank (lower ranks are the left operand), so
// results are bitwise equal everywhere and non-commutative operators are
// right.
//
// The schedule below is the same data movement as messages, for the
// verifier, the simulators and the cost model, and for transports without
// an exchange: in one round every rank sends its input to every rank that
// reads it (all ranks; the root of reduce; from the root only in bcast)
// and folds what it received in rank order.
//
// Cost of the native path: one synchronisation (α: about one cache-line
// handoff per peer) and (P−1)·n bytes read and reduced per rank (bcast: n
// read; barrier: α alone).

// exchangeReduction is the exchange's allreduce and reduce.
func exchangeReduction(b *schedule.Builder, p *Params) {
	buf, in, done := vectorSetup(b, p)
	if done {
		return
	}
	n, P, r := p.Count, p.Size, p.Rank
	reader := p.Coll == schedule.Allreduce || r == p.Root
	for q := range P {
		if q != r && (p.Coll == schedule.Allreduce || q == p.Root) {
			b.Send(q, in)
		}
	}
	if !reader {
		b.EndRound()
		return
	}
	stage := b.Alloc((P - 1) * n)
	slot := func(q int) schedule.Region {
		if q > r {
			q--
		}
		return stage.Sub(q*n, n)
	}
	for q := range P {
		if q != r {
			b.Recv(q, slot(q))
		}
	}
	foldInOrder(b, buf, in, r, P, slot)
	b.EndRound()
}

// foldInOrder sets buf to the inputs of ranks 0 … P−1 combined in rank
// order, from rank r's own input in and the others' at(q).
func foldInOrder(b *schedule.Builder, buf, in schedule.Region, r, P int, at func(q int) schedule.Region) {
	if in != buf {
		b.Copy(buf, in)
	}
	for q := r - 1; q >= 0; q-- {
		b.ReduceLeft(buf, at(q))
	}
	for q := r + 1; q < P; q++ {
		b.Reduce(buf, at(q))
	}
}

// exchangeBarrier is the exchange's barrier: every rank tells every other.
func exchangeBarrier(b *schedule.Builder, p *Params) {
	for q := range p.Size {
		if q != p.Rank {
			b.Send(q, barrierToken)
			b.Recv(q, barrierToken)
		}
	}
	b.EndRound()
}

func exchangeCost(p *Params) Cost {
	k, nb := float64(p.Size-1), p.bytes(p.Count)
	switch p.Coll {
	case schedule.Barrier:
		return Cost{Alpha: 1}
	case schedule.Bcast:
		return Cost{Alpha: 1, Beta: nb}
	case schedule.Allgather:
		return Cost{Alpha: 1, Beta: k * nb}
	}
	return Cost{Alpha: 1, Beta: k * nb, Gamma: k * nb}
}

// exchangeWhen is the exchange's entry in scoll algorithms: when it runs
// natively and when the default rule takes it (the root package applies
// it; every rank decides alike).
const exchangeWhen = "native on a transport with an exchange (in-process ranks, ranks ≤ GOMAXPROCS) " +
	"for blocking calls whose input fits its slots; the default there when P·n ≤ 2 KiB (bcast: n ≤ 2 KiB; barrier: always); " +
	"elsewhere its messages"

func init() {
	in := Info{Name: Exchange, Path: ExchangePath, When: exchangeWhen, Linear: true, Cost: exchangeCost,
		Doc:    "shared-memory exchange: every rank publishes its input and computes its result from all of them",
		Source: "scoll (in-process fast path); Graham and Shipman 2008 (shared-memory collectives)"}
	in.Build = exchangeReduction
	register(in, schedule.Allreduce, schedule.Reduce)
	in.Build = bcastLinear
	register(in, schedule.Bcast)
	in.Build = allgatherLinear
	register(in, schedule.Allgather)
	in.Build = exchangeBarrier
	register(in, schedule.Barrier)
}
