package algorithms

import "github.com/scoll/scoll/schedule"

// Neighbor-exchange allgather (Chen et al.), for an even number of ranks.
//
// Ranks pair up as (2i, 2i+1). In step 0 partners swap their blocks. In steps
// 1..P/2−1 a rank alternately talks to its other neighbour and its partner
// (even ranks: r−1, r+1, r−1, …; odd ranks: r+1, r−1, …) and forwards the two
// blocks it received last (in step 1: its own pair) while receiving two new
// ones. An even rank of pair a receives pairs a−1, a+1, a−2, a+2, …; an odd
// rank the mirror image, so after P/2 steps each rank has every pair.
//
//	P=6   step 0: 0↔1 2↔3 4↔5 (1 block)
//	      step 1: 1↔2 3↔4 5↔0 (2 blocks)   step 2: 0↔1 2↔3 4↔5 (2 blocks)
//
// For odd P there is no pairing; the ring algorithm runs instead (P−1 steps
// of one block, the same bytes).
//
// Cost: (P/2)·α + ((P−1)/P)·N·β for even P; the ring's cost for odd P.
// Source: Chen, Wang, Shen, Liu, Huang 2005 ("Performance evaluation of
// allgather algorithms on terascale Linux cluster with fast Ethernet").
func allgatherNeighbor(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	if P%2 == 1 {
		allgatherRing(b, p)
		return
	}
	l := allgatherLayout(p)
	own := allgatherOwn(p, &l)
	H := P / 2
	a := r / 2
	even := r%2 == 0
	neigh := [2]int{mod(r+1, P), mod(r-1, P)} // partner, other neighbour
	if !even {
		neigh = [2]int{mod(r-1, P), mod(r+1, P)}
	}
	pair := func(q int) []schedule.Region { return allgatherRuns(&l, 2*q, 2*q+2) }
	b.Send(neigh[0], own)
	b.Recv(neigh[0], allgatherBlk(&l, neigh[0]))
	b.Copy(allgatherBlk(&l, r), own)
	b.EndRound()
	last := a // the pair this rank forwards next
	for i := 1; i < H; i++ {
		var got int
		if even == (i%2 == 1) {
			got = mod(a-(i+1)/2, H)
		} else {
			got = mod(a+(i+1)/2, H)
		}
		peer := neigh[i%2]
		sendAll(b, peer, pair(last))
		recvAll(b, peer, pair(got))
		b.EndRound()
		last = got
	}
}

func allgatherNeighborCost(p *Params) Cost {
	if p.Size%2 == 1 {
		return allgatherRingCost(p)
	}
	P := float64(p.Size)
	return Cost{Alpha: P / 2, Beta: allgatherBytes(p) * (P - 1) / P}
}

func init() {
	register(Info{Name: NeighborExchange, Linear: true, Build: allgatherNeighbor, Cost: allgatherNeighborCost,
		Doc:    "P/2 steps exchanging pairs of blocks with alternating neighbours (ring for odd P)",
		Source: "Chen et al. 2005"}, schedule.Allgather, schedule.Allgatherv)
}
