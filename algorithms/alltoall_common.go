package algorithms

import "github.com/scoll/scoll/schedule"

// Shared pieces of the Alltoall and Alltoallv algorithms (alltoall_*.go).
//
// Rank r's block for rank q is send[q] (Alltoall: offset q·n; Alltoallv: the
// spec's send displacements) and the block from rank q lands in recv[q]. In
// place (Alltoall only) the outgoing blocks are in the receive buffer, so
// every algorithm keeps a block it has not sent yet out of the way of the
// blocks it receives.

// alltoallBlocks returns rank p.Rank's outgoing and incoming blocks: out[q] is
// what goes to q, in[q] where the block from q lands.
func alltoallBlocks(p *Params) (out, in []schedule.Region) {
	P, r := p.Size, p.Rank
	out = make([]schedule.Region, P)
	in = make([]schedule.Region, P)
	if p.Coll == schedule.Alltoallv {
		sc, sd := p.AlltoallvSend(r)
		rc, rd := p.AlltoallvRecv(r)
		for q := range P {
			out[q] = schedule.SendBuf(sd[q], sc[q])
			in[q] = schedule.RecvBuf(rd[q], rc[q])
		}
		return out, in
	}
	n := p.Count
	for q := range P {
		out[q] = schedule.SendBuf(q*n, n)
		in[q] = schedule.RecvBuf(q*n, n)
		if p.InPlaceAt(r) {
			out[q] = in[q]
		}
	}
	return out, in
}

// alltoallSetup returns rank p.Rank's blocks (alltoallBlocks) and, in place,
// slot(k) for k = 1..slots: scratch blocks that keep received blocks out of
// the way of the blocks still to be sent (nil out of place). In-place
// Alltoallv has no defined buffer layout here: it fails the build and
// returns ok false.
func alltoallSetup(b *schedule.Builder, p *Params, slots int) (out, in []schedule.Region, slot func(k int) schedule.Region, ok bool) {
	if p.Coll == schedule.Alltoallv && p.InPlace {
		b.Failf("in-place alltoallv is not supported")
		return nil, nil, nil, false
	}
	out, in = alltoallBlocks(p)
	if p.InPlaceAt(p.Rank) {
		tmp := b.Alloc(slots * p.Count)
		slot = func(k int) schedule.Region { return tmp.Sub((k-1)*p.Count, p.Count) }
	}
	return out, in, slot, true
}

// alltoallLinearCost is the cost of the direct and pairwise algorithms:
// (P−1)α + (P−1)·nβ for n the bytes per block, or for Alltoallv the bytes of
// the largest row or column of the matrix (what any rank sends or receives
// from the others).
func alltoallLinearCost(p *Params) Cost {
	if p.Coll != schedule.Alltoallv {
		n := p.bytes(p.Count)
		return Cost{Alpha: float64(p.Size - 1), Beta: float64(p.Size-1) * n}
	}
	maxRow := 0
	for s := range p.Size {
		out, in := 0, 0
		for d := range p.Size {
			if d != s {
				out += p.Matrix[s][d]
				in += p.Matrix[d][s]
			}
		}
		maxRow = max(maxRow, out, in)
	}
	return Cost{Alpha: float64(p.Size - 1), Beta: p.bytes(maxRow)}
}
