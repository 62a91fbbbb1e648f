package algorithms

import "github.com/scoll/scoll/schedule"

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
	P, r := p.Size, p.Rank
	// slot(k) holds the block received in step k ≤ P/2 until step P−k.
	out, in, slot, ok := alltoallSetup(b, p, P/2)
	if !ok {
		return
	}
	b.Copy(in[r], out[r])
	b.EndRound()
	for k := 1; k < P; k++ {
		to, from := mod(r+k, P), mod(r-k, P)
		b.Send(to, out[to])
		if slot != nil && P-k >= k {
			b.Recv(from, slot(k))
		} else {
			b.Recv(from, in[from])
		}
		if slot != nil && P-k <= k {
			// Step P−k received block r+k into scratch; its original has
			// just been sent.
			b.Copy(in[to], slot(P-k))
		}
		b.EndRound()
	}
}

func init() {
	register(Info{Name: Pairwise, Linear: true, Build: alltoallPairwise, Cost: alltoallLinearCost,
		Doc:    "P-1 steps; in step k send to r+k and receive from r-k",
		Source: "Thakur, Rabenseifner, Gropp 2005"}, schedule.Alltoall, schedule.Alltoallv)
}
