package algorithms

import "github.com/scoll/scoll/schedule"

// bcast: a scatter to the positions, then allgather stages.
func (c *composite) bcast(b *schedule.Builder, p *Params) {
	if p.Size == 1 {
		return
	}
	l := redscatSplit(p.Count, p.Size)
	buf := bcastBuf(p)
	ps, q0, rd, bk, x := c.plan(p, &l)
	ps.treeScatter(b, p.Rank, p.Root, q0, c.mine(rd, bk), buf)
	if rd != nil {
		rdAllgatherStages(b, rd, p.Rank, buf, nil, nil, p.Root)
		return
	}
	bucketAllgatherStages(b, bk, p.Rank, x, buf)
}

func init() {
	registerComposites(schedule.Bcast, func(c *composite) Info {
		return Info{Name: c.bcastName, Build: c.bcast,
			Doc: "binomial scatter straight to the " + c.name + " allgather's starting blocks, then that allgather"}
	})
}
