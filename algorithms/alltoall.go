package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Alltoall and Alltoallv algorithms: direct, pairwise and Bruck.
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

// Direct alltoall (also alltoallv).
//
// Every rank posts all P−1 sends and P−1 receives in one round and leaves
// ordering to the transport; sends go to r+1, r+2, ... and receives come from
// r−1, r−2, ... so that no rank is everyone's first target.
//
//	round 0: r→r+1, r→r+2, ..., r→r−1  (all at once)
//
// In place, received blocks land in scratch and are copied home after the
// round, since each home block is also being sent.
//
// Cost: (P−1)α + (P−1)·nβ for n the bytes per block (the largest row or
// column of the matrix for alltoallv).
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH's isend/irecv alltoall).
func alltoallDirect(b *schedule.Builder, p *Params) {
	if !alltoallNoInPlaceV(b, p) {
		return
	}
	P, r := p.Size, p.Rank
	out, in := alltoallBlocks(p)
	inPlace := p.InPlaceAt(r)
	var tmp schedule.Region
	if inPlace {
		tmp = b.Alloc((P - 1) * p.Count)
	}
	slot := func(k int) schedule.Region { return tmp.Sub((k-1)*p.Count, p.Count) }
	for k := 1; k < P; k++ {
		b.Send(mod(r+k, P), out[mod(r+k, P)])
	}
	for k := 1; k < P; k++ {
		q := mod(r-k, P)
		if inPlace {
			b.Recv(q, slot(k))
		} else {
			b.Recv(q, in[q])
		}
	}
	b.Copy(in[r], out[r])
	if inPlace {
		for k := 1; k < P; k++ {
			b.Copy(in[mod(r-k, P)], slot(k))
		}
	}
	b.EndRound()
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

func alltoallDirectCost(p *Params) Cost {
	row, _ := alltoallPairBytes(p)
	return Cost{Alpha: float64(p.Size - 1), Beta: row}
}

// Pairwise-exchange alltoall (also alltoallv).
//
// In step k = 1..P−1 rank r sends its block for r+k and receives the block
// of r−k, so each step is a permutation and each rank has one message in
// flight each way.
//
//	P=4  step 1: 0→1 1→2 2→3 3→0
//	     step 2: 0→2 1→3 2→0 3→1
//	     step 3: 0→3 1→0 2→1 3→2
//
// In place, the home of block r−k is still to be sent when P−k > k: that
// block is received into scratch and copied home after step P−k has sent the
// original, so only ⌊P/2⌋ blocks of scratch are needed.
//
// Cost: (P−1)α + (P−1)·nβ for n the bytes per block.
// Source: Thakur, Rabenseifner, Gropp 2005; SimGrid alltoall-pair.
func alltoallPairwise(b *schedule.Builder, p *Params) {
	if !alltoallNoInPlaceV(b, p) {
		return
	}
	P, r := p.Size, p.Rank
	out, in := alltoallBlocks(p)
	inPlace := p.InPlaceAt(r)
	var tmp schedule.Region
	if inPlace {
		tmp = b.Alloc(P / 2 * p.Count)
	}
	// slot(k) holds the block received in step k ≤ P/2 until step P−k.
	slot := func(k int) schedule.Region { return tmp.Sub((k-1)*p.Count, p.Count) }
	b.Copy(in[r], out[r])
	b.EndRound()
	for k := 1; k < P; k++ {
		to, from := mod(r+k, P), mod(r-k, P)
		b.Send(to, out[to])
		if inPlace && P-k >= k {
			b.Recv(from, slot(k))
		} else {
			b.Recv(from, in[from])
		}
		if inPlace && P-k <= k {
			// Step P−k received block r+k into scratch; its original has
			// just been sent.
			b.Copy(in[to], slot(P-k))
		}
		b.EndRound()
	}
}

func alltoallPairwiseCost(p *Params) Cost {
	row, _ := alltoallPairBytes(p)
	return Cost{Alpha: float64(p.Size - 1), Beta: row}
}

// Bruck alltoall (any P).
//
// Slot i of rank r holds the block travelling from some rank s to s+i; it
// starts as r's own block for r+i. In round k = 0..⌈lg P⌉−1 every slot whose
// index has bit k set moves 2^k ranks on: rank r packs those slots into
// scratch, sends the pack to r+2^k, receives the matching pack from r−2^k and
// unpacks it into the same slots. After the last round slot i of rank r holds
// the block of rank r−i.
//
// Layout: slot i lives in recv[r−i], its final home, so no final rotation is
// needed. The slots of round k form runs [a, a+2^k) with a an odd multiple of
// 2^k; a run occupies consecutive receive blocks (in descending slot order,
// split at most once by the wrap-around), so it is packed and unpacked with
// one or two copies. Only its first slot a has not moved before round k; it
// is read straight from the send buffer (the initial rotation is folded into
// the packs). In place, the input is first copied to scratch.
//
//	P=5, slots 1..4      round 0 (→r+1): slots 1,3   round 1 (→r+2): slots 2,3
//	                     round 2 (→r+4): slot 4
//
// Cost: ⌈lg P⌉α + Σ_k |{i < P : bit k of i}|·nβ ≈ ⌈lg P⌉α + ⌈lg P⌉·(P/2)·nβ
// for n the bytes per block; it trades bandwidth for latency. About 2P local
// copies per rank.
// Source: Bruck, Ho, Kipnis, Upfal, Weathersby 1997 (IEEE TPDS 8(11)).
func alltoallBruck(b *schedule.Builder, p *Params) {
	P, r, n := p.Size, p.Rank, p.Count
	src := func(q int) schedule.Region { return schedule.SendBuf(q*n, n) }
	if p.InPlaceAt(r) {
		if P == 1 {
			return // the only block is home already
		}
		t := b.Alloc(P * n)
		b.Copy(t, schedule.RecvBuf(0, P*n))
		src = func(q int) schedule.Region { return t.Sub(q*n, n) }
	}
	b.Copy(schedule.RecvBuf(r*n, n), src(r))
	most := 0
	for bit := 1; bit < P; bit <<= 1 {
		most = max(most, alltoallBruckCount(P, bit))
	}
	packS, packR := b.Alloc(most*n), b.Alloc(most*n)
	for bit := 1; bit < P; bit <<= 1 {
		j := 0
		for a := bit; a < P; a += 2 * bit {
			for _, h := range alltoallBruckHome(r, P, n, a+1, min(a+bit, P)) {
				b.Copy(packS.Sub(j, h.Len), h)
				j += h.Len
			}
			b.Copy(packS.Sub(j, n), src(mod(r+a, P)))
			j += n
		}
		b.EndRound()
		b.Send(mod(r+bit, P), packS.Sub(0, j))
		b.Recv(mod(r-bit, P), packR.Sub(0, j))
		j = 0
		for a := bit; a < P; a += 2 * bit {
			for _, h := range alltoallBruckHome(r, P, n, a, min(a+bit, P)) {
				b.Copy(h, packR.Sub(j, h.Len))
				j += h.Len
			}
		}
	}
	b.EndRound()
}

// alltoallBruckHome returns the receive-buffer regions of rank r holding
// slots [a, e), in descending slot order: slot i is block (r−i) mod P.
func alltoallBruckHome(r, P, n, a, e int) []schedule.Region {
	if a >= e {
		return nil
	}
	lo, hi := mod(r-(e-1), P), mod(r-a, P) // first and last block
	if lo <= hi {
		return []schedule.Region{schedule.RecvBuf(lo*n, (hi-lo+1)*n)}
	}
	return []schedule.Region{schedule.RecvBuf(lo*n, (P-lo)*n), schedule.RecvBuf(0, (hi+1)*n)}
}

// alltoallBruckCount returns how many slots i in [1, P) have bit set.
func alltoallBruckCount(P, bit int) int {
	c := 0
	for i := bit; i < P; i++ {
		if i&bit != 0 {
			c++
		}
	}
	return c
}

func alltoallBruckCost(p *Params) Cost {
	n := p.bytes(p.Count)
	c := Cost{}
	for bit := 1; bit < p.Size; bit <<= 1 {
		c.Alpha++
		c.Beta += float64(alltoallBruckCount(p.Size, bit)) * n
		c.Copy += 2 * float64(alltoallBruckCount(p.Size, bit)) * n // pack and unpack
	}
	return c
}

func init() {
	for _, c := range []schedule.Collective{schedule.Alltoall, schedule.Alltoallv} {
		Register(Info{
			Coll: c, Name: Direct, Linear: true,
			Doc:    "post every send and receive in one round; the transport orders them",
			Source: "Thakur, Rabenseifner, Gropp 2005",
			Build:  alltoallDirect, Cost: alltoallDirectCost,
		})
		Register(Info{
			Coll: c, Name: Pairwise, Linear: true,
			Doc:    "P-1 steps; in step k send to r+k and receive from r-k",
			Source: "Thakur, Rabenseifner, Gropp 2005",
			Build:  alltoallPairwise, Cost: alltoallPairwiseCost,
		})
	}
	Register(Info{
		Coll: schedule.Alltoall, Name: Bruck,
		Doc:    "lg P rounds moving packed blocks 2^k ranks on; latency-optimal for small blocks",
		Source: "Bruck, Ho, Kipnis, Upfal, Weathersby 1997",
		Build:  alltoallBruck, Cost: alltoallBruckCost,
	})
}
