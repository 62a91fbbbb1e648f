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

// alltoallNoInPlaceV fails the build for in-place Alltoallv, which has no
// defined buffer layout here.
func alltoallNoInPlaceV(b *schedule.Builder, p *Params) bool {
	if p.Coll == schedule.Alltoallv && p.InPlace {
		b.Failf("in-place alltoallv is not supported")
		return false
	}
	return true
}

// alltoallPairBytes returns the largest number of bytes any rank sends to or
// receives from the others, and the largest single block, over all ranks.
func alltoallPairBytes(p *Params) (row, block float64) {
	if p.Coll != schedule.Alltoallv {
		n := p.bytes(p.Count)
		return float64(p.Size-1) * n, n
	}
	maxRow, maxBlk := 0, 0
	for s := range p.Size {
		out, in := 0, 0
		for d := range p.Size {
			if d == s {
				continue
			}
			out += p.Matrix[s][d]
			in += p.Matrix[d][s]
			maxBlk = max(maxBlk, p.Matrix[s][d])
		}
		maxRow = max(maxRow, out, in)
	}
	return p.bytes(maxRow), p.bytes(maxBlk)
}
