package algorithms

import "github.com/scoll/scoll/schedule"

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
	P, r := p.Size, p.Rank
	out, in, slot, ok := alltoallSetup(b, p, P-1)
	if !ok {
		return
	}
	for k := 1; k < P; k++ {
		b.Send(mod(r+k, P), out[mod(r+k, P)])
	}
	for k := 1; k < P; k++ {
		q := mod(r-k, P)
		if slot != nil {
			b.Recv(q, slot(k))
		} else {
			b.Recv(q, in[q])
		}
	}
	b.Copy(in[r], out[r])
	if slot != nil {
		for k := 1; k < P; k++ {
			b.Copy(in[mod(r-k, P)], slot(k))
		}
	}
	b.EndRound()
}

func init() {
	register(Info{Name: Direct, Linear: true, Build: alltoallDirect, Cost: alltoallLinearCost,
		Doc:    "post every send and receive in one round; the transport orders them",
		Source: "Thakur, Rabenseifner, Gropp 2005"}, schedule.Alltoall, schedule.Alltoallv)
}
