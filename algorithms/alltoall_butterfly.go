package algorithms

import "github.com/scoll/scoll/schedule"

// Butterfly (hypercube) alltoall, P a power of two: the notes' Fig. 19.
//
// Rank r keeps P slots in its receive buffer; slot j starts as r's block for
// rank j. In round k the partner is q = r XOR 2^k: r packs the slots whose
// index differs from r in bit k (blocks whose destination lies on q's side),
// sends the pack to q, receives q's pack (its slots that differ from q in
// bit k, the blocks for r's side) and unpacks it into the slots it emptied,
// slot j of q into slot j XOR 2^k. After round k a slot's bits 0..k name its
// source and every block's destination agrees with r in bits 0..k; after
// the last round slot j holds rank j's block for r, as the receive buffer
// wants it. It is not Bruck's algorithm (bruck sends to r + 2^k and
// rotates): both move (P/2)·n bytes in each of lg P rounds.
//
//	P=4, rank 0:  round 0 (↔1): sends slots 1,3   round 1 (↔2): slots 2,3
//
// Cost: lg P·(α + (P/2)nβ), the notes' α log₂p + βs log₂p/2 for s = Pn
// bytes per rank; copies: the send buffer once, and each round's pack and
// unpack (lg P·P·n).
// Source: Heath, Solomonik 2019, Parallel Computing notes, sec. 5.2.5, Fig. 19.
func alltoallButterfly(b *schedule.Builder, p *Params) {
	P, r, n := p.Size, p.Rank, p.Count
	if !p.InPlaceAt(r) {
		b.Copy(schedule.RecvBuf(0, P*n), schedule.SendBuf(0, P*n))
	}
	if P == 1 || n == 0 {
		b.EndRound()
		return
	}
	half := P / 2 * n
	packS, packR := b.Alloc(half), b.Alloc(half)
	// runs returns the runs of slots that differ from rank r in bit: each
	// bit slots long, in ascending order.
	runs := func(bit int) []schedule.Region {
		var out []schedule.Region
		for a := 0; a < P; a += bit {
			if a&bit != r&bit {
				out = append(out, schedule.RecvBuf(a*n, bit*n))
			}
		}
		return out
	}
	for bit := 1; bit < P; bit <<= 1 {
		rs := runs(bit)
		j := 0
		for _, h := range rs {
			b.Copy(packS.Sub(j, h.Len), h)
			j += h.Len
		}
		b.EndRound()
		b.Send(r^bit, packS)
		b.Recv(r^bit, packR)
		j = 0
		for _, h := range rs {
			b.Copy(h, packR.Sub(j, h.Len))
			j += h.Len
		}
	}
	b.EndRound()
}

func alltoallButterflyCost(p *Params) Cost {
	lg := float64(ceilLog2(p.Size))
	block := p.bytes(p.Count)
	c := Cost{Alpha: lg, Beta: lg * float64(p.Size/2) * block, Copy: lg * float64(p.Size) * block}
	if p.Size > 1 {
		c.Copy += float64(p.Size) * block // the send buffer into the slots
	}
	return c
}

func init() {
	register(Info{Name: Butterfly, Build: alltoallButterfly, Cost: alltoallButterflyCost, Requires: NeedsPowerOfTwo,
		Doc:    "lg P rounds exchanging half the blocks with the partner across each hypercube dimension (XOR partners, no rotation)",
		Source: "Heath, Solomonik 2019, sec. 5.2.5, Fig. 19"}, schedule.Alltoall)
}
