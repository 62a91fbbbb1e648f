package algorithms

import "github.com/scoll/scoll/schedule"

// The frame Sack's families share (thesis sec. 3.2.2 to 3.6.1): the
// reordered recursive doubling (reorder.go), its path and hybrid variants
// (paths.go) and the buckets (bucket.go) cut every block into sections and
// move each section, in one exchange round, to the rank that holds it during
// the stages; their allgathers (allgather_sack.go, allgather_bucket.go) run
// that exchange and then the stages, their reduce-scatters
// (reducescatter_sack.go, reducescatter_bucket.go) the stages and then the
// exchange backwards, and the composites (composite.go) two halves with no
// exchange between them.

// sackScheme is one of Sack's families laid out for one call (and, for the
// hybrid, one rank).
type sackScheme interface {
	// cut returns the sections the scheme moves: every block cut into k.
	cut() *sections
	// holder returns the rank that starts the allgather with section s (and
	// ends the reduce-scatter with it); held(b, r) is the range of section
	// ids of lane b that rank r starts with.
	holder(s int) int
	held(b, r int) (s0, s1 int)
	// allgather emits rank r's stages on base, which holds the sections r
	// starts with at their places; a rank equal to skip already has the
	// result and is left out of the last round.
	allgather(b *schedule.Builder, r int, base schedule.Region, skip int)
	// reduceScatter emits rank r's stages on the vector in; they end with
	// the reduced sections r holds at their places in acc (which may be in).
	reduceScatter(b *schedule.Builder, r int, in, acc schedule.Region)
}

// compositeScheme is a scheme the composites are built from: it also tells
// where the blocks are between the halves and how many rounds a half takes
// (once per lane, as the single-port costs count).
type compositeScheme interface {
	sackScheme
	positions() *positions
	rounds() int
}

// laneTrade emits the exchange round between the ranks' blocks and the
// holders of their sections. Before an allgather (toHolders) rank r sends
// the sections of its block block to their holders and receives the sections
// it holds into their places in base; after a reduce-scatter it sends the
// reduced sections it holds in base to their owners and receives those of
// its own block into block. Sections rank r holds itself are copied.
func laneTrade(b *schedule.Builder, sc sackScheme, r int, block, base schedule.Region, toHolders bool) {
	x := sc.cut()
	k, c := x.k, x.l.count(r)
	var copies [][2]schedule.Region
	// own posts the sections of r's block with their holders.
	own := func(post func(int, schedule.Region)) {
		for j := range k {
			s := k*r + j
			sec := block.Sub(secOff(c, k, j), secLen(c, k, j))
			switch h := sc.holder(s); {
			case h != r:
				post(h, sec)
			case toHolders:
				copies = append(copies, [2]schedule.Region{x.region(base, s), sec})
			default:
				copies = append(copies, [2]schedule.Region{sec, x.region(base, s)})
			}
		}
	}
	// held posts the sections r holds with their owners.
	held := func(post func(int, schedule.Region)) {
		for bk := range k {
			s0, s1 := sc.held(bk, r)
			for s := s0; s < s1; s++ {
				if i := s / k; i != r {
					post(i, x.region(base, s))
				}
			}
		}
	}
	if toHolders {
		own(b.Send)
		held(b.Recv)
	} else {
		held(b.Send)
		own(b.Recv)
	}
	for _, cp := range copies {
		b.Copy(cp[0], cp[1])
	}
	b.EndRound()
}

// recvReduceAll receives one message from peer per region of regs (parts of
// acc), each combined with the same part of src, a region laid out like acc;
// srcLeft as for Builder.RecvReduce.
func recvReduceAll(b *schedule.Builder, peer int, regs []schedule.Region, acc, src schedule.Region, srcLeft bool) {
	for _, reg := range regs {
		b.RecvReduce(peer, reg, src.Sub(reg.Off-acc.Off, reg.Len), srcLeft)
	}
}

// familyBytes is the data of an allgather call, or of a reduce-scatter
// when reducing.
func familyBytes(p *Params, reduces bool) float64 {
	if reduces {
		return redscatBytes(p)
	}
	return allgatherBytes(p)
}
