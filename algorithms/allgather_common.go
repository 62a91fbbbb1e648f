package algorithms

import "github.com/scoll/scoll/schedule"

// Shared pieces of the allgather algorithms (allgather_*.go). Each is also
// registered for Allgatherv: blocks come from allgatherLayout, and a group of
// blocks that is not contiguous in the receive buffer (gaps or reordered
// displacements) travels as one message per contiguous run.
//
// Costs write N for the bytes of the gathered buffer.

// allgatherLayout returns the blocks of the gathered buffer: the same as
// p.gatherBlocks, but in closed form (O(1) memory) for Allgather.
func allgatherLayout(p *Params) redscatLayout {
	if p.Coll.Vector() {
		return redscatExplicit(p.Counts, p.VDispls())
	}
	return redscatEven(p.Count, p.Size)
}

// allgatherSetup returns the block layout, this rank's input block and its
// place in the result. With one rank it copies the input into place and
// reports done.
func allgatherSetup(b *schedule.Builder, p *Params) (l redscatLayout, own, mine schedule.Region, done bool) {
	l = allgatherLayout(p)
	own, mine = allgatherOwn(p, &l), allgatherBlk(&l, p.Rank)
	if p.Size == 1 {
		b.Copy(mine, own)
		b.EndRound()
		return l, own, mine, true
	}
	return l, own, mine, false
}

// allgatherOwn returns where this rank's input block is (p.ownBlock without
// its O(P) allocation).
func allgatherOwn(p *Params, l *redscatLayout) schedule.Region {
	if p.InPlaceAt(p.Rank) {
		return allgatherBlk(l, p.Rank)
	}
	return schedule.SendBuf(0, l.count(p.Rank))
}

// allgatherBlk returns rank q's block in the receive buffer.
func allgatherBlk(l *redscatLayout, q int) schedule.Region {
	return schedule.RecvBuf(l.displ(q), l.count(q))
}

// allgatherRuns returns the receive-buffer regions holding the blocks of ranks
// [lo, hi): consecutive ranks whose blocks are adjacent in memory form one
// region; empty blocks are skipped. Sender and receiver compute the same runs
// from the same counts and displacements, so their messages match.
func allgatherRuns(l *redscatLayout, lo, hi int) []schedule.Region {
	if l.counts == nil {
		return []schedule.Region{schedule.RecvBuf(l.displ(lo), l.displ(hi)-l.displ(lo))}
	}
	var out []schedule.Region
	for q := lo; q < hi; q++ {
		c, d := l.count(q), l.displ(q)
		if c == 0 {
			continue
		}
		if k := len(out); k > 0 && out[k-1].End() == d {
			out[k-1].Len += c
			continue
		}
		out = append(out, schedule.RecvBuf(d, c))
	}
	return out
}

// allgatherBytes returns the bytes of the gathered buffer.
func allgatherBytes(p *Params) float64 {
	if p.Coll.Vector() {
		return p.bytes(total(p.Counts))
	}
	return p.bytes(p.Size * p.Count)
}
