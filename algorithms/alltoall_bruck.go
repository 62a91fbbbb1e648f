package algorithms

import "github.com/scoll/scoll/schedule"

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
	register(Info{Name: Bruck, Build: alltoallBruck, Cost: alltoallBruckCost,
		Doc:    "lg P rounds moving packed blocks 2^k ranks on; latency-optimal for small blocks",
		Source: "Bruck, Ho, Kipnis, Upfal, Weathersby 1997"}, schedule.Alltoall)
}
