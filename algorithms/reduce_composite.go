package algorithms

import "github.com/scoll/scoll/schedule"

// reduce: reduce-scatter stages, then a gather of the positions.
func (c *composite) reduce(b *schedule.Builder, p *Params) {
	acc, in, done := vectorSetup(b, p)
	if done {
		return
	}
	sc := c.scheme(p)
	r := p.Rank
	if r != p.Root {
		acc = b.Alloc(p.Count)
	}
	sc.reduceScatter(b, r, in, acc)
	ps := sc.positions()
	q0 := ps.origin(p.Root)
	ps.treeGather(b, r, q0, acc)
	// With recursive doubling the root may be a rank another stands for:
	// the holder of its position hands it the space's result.
	for s := range ps.spaces {
		if h := ps.holder(s, q0[s]); h != p.Root && (r == h || r == p.Root) {
			ps.handOver(b, r, h, p.Root, ps.runs(acc, s, 0, ps.n))
		}
	}
	b.EndRound()
}

func init() {
	registerComposites(schedule.Reduce, func(c *composite) Info {
		return Info{Name: c.reduceName, Build: c.reduce,
			Doc: c.name + " reduce-scatter without its exchange, then a binomial gather of the blocks to the root"}
	})
}
