package algorithms

import "github.com/scoll/scoll/schedule"

// reduce: reduce-scatter stages, then a gather of the positions.
func (c *composite) reduce(b *schedule.Builder, p *Params) {
	acc, in, done := vectorSetup(b, p)
	if done {
		return
	}
	l := redscatSplit(p.Count, p.Size)
	ps, q0, rd, bk, x := c.plan(p, &l)
	r := p.Rank
	if r != p.Root {
		acc = b.Alloc(p.Count)
	}
	if rd != nil {
		rdReduceScatterStages(b, rd, r, in, acc)
	} else {
		bucketReduceScatterStages(b, bk, r, x, in, acc)
	}
	ps.treeGather(b, r, q0, c.mine(rd, bk), acc)
	// With recursive doubling the root may be a rank another stands for:
	// the holder of its position hands it the space's result.
	for s := range ps.spaces {
		if h := ps.holder(s, q0[s]); h != p.Root {
			if r == h || r == p.Root {
				for _, reg := range ps.runs(acc, s, 0, ps.n) {
					if r == h {
						b.Send(p.Root, reg)
					} else {
						b.Recv(h, reg)
					}
				}
			}
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
