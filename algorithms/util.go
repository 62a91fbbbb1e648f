package algorithms

import (
	"math/bits"

	"github.com/scoll/scoll/schedule"
)

func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// floorPow2 returns the largest power of two not above p (p ≥ 1).
func floorPow2(p int) int { return 1 << (bits.Len(uint(p)) - 1) }

// ceilLog2 returns ⌈log2 p⌉ (0 for p ≤ 1).
func ceilLog2(p int) int {
	if p <= 1 {
		return 0
	}
	return bits.Len(uint(p - 1))
}

// split divides n elements into p blocks whose lengths differ by at most one
// (the first n mod p blocks are longer) and returns counts and displacements.
func split(n, p int) (counts, displs []int) {
	counts = make([]int, p)
	displs = make([]int, p)
	q, r := n/p, n%p
	off := 0
	for i := range p {
		counts[i] = q
		if i < r {
			counts[i]++
		}
		displs[i] = off
		off += counts[i]
	}
	return counts, displs
}

// mod returns a mod p in [0, p).
func mod(a, p int) int { return ((a % p) + p) % p }

// input returns the region holding this rank's reduction input: the whole send
// buffer, or the receive buffer when the rank is in place.
// Input returns the region of this rank's input: its send buffer, or its
// receive buffer when the call is in place there.
func (p *Params) Input() schedule.Region { return p.input() }

func (p *Params) input() schedule.Region {
	s, r := p.BufLens(p.Rank)
	if p.InPlaceAt(p.Rank) {
		return schedule.RecvBuf(0, r)
	}
	return schedule.SendBuf(0, s)
}

// gatherBlocks returns per-rank block counts and displacements in the
// gathered buffer for Gather/Allgather (uniform) and their v-variants.
func (p *Params) gatherBlocks() (counts, displs []int) {
	if p.Coll.Vector() {
		return p.Counts, p.VDispls()
	}
	counts = make([]int, p.Size)
	displs = make([]int, p.Size)
	for i := range counts {
		counts[i] = p.Count
		displs[i] = i * p.Count
	}
	return counts, displs
}

// ownBlock returns where this rank's gather input is: the send buffer or, in
// place, its block of the receive buffer.
func (p *Params) ownBlock() schedule.Region {
	n, off := p.Count, p.Rank*p.Count // uniform blocks: O(1)
	if p.Coll.Vector() {
		n, off = p.Counts[p.Rank], p.VDispls()[p.Rank]
	}
	if p.InPlaceAt(p.Rank) {
		return schedule.RecvBuf(off, n)
	}
	return schedule.SendBuf(0, n)
}

// bytes returns n elements in bytes.
func (p *Params) bytes(n int) float64 {
	es := p.ElemSize
	if es <= 0 {
		es = 1
	}
	return float64(n) * float64(es)
}

// bytesInt returns n elements in bytes, as an int.
func (p *Params) bytesInt(n int) int { return n * max(p.ElemSize, 1) }

// total returns the sum of counts.
func total(counts []int) int {
	t := 0
	for _, c := range counts {
		t += c
	}
	return t
}

// barrierToken is the empty region barrier messages carry (barrier_*.go);
// the builder keeps them because barrier schedules are built after KeepEmpty
// (Info.Schedule and the verifier do so).
var barrierToken = schedule.RecvBuf(0, 0)

// sendAll and recvAll post one message with peer per region.
func sendAll(b *schedule.Builder, peer int, regs []schedule.Region) {
	for _, reg := range regs {
		b.Send(peer, reg)
	}
}

func recvAll(b *schedule.Builder, peer int, regs []schedule.Region) {
	for _, reg := range regs {
		b.Recv(peer, reg)
	}
}
