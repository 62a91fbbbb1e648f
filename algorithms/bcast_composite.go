package algorithms

import "github.com/scoll/scoll/schedule"

// bcast: a scatter to the positions, then allgather stages.
func (c *composite) bcast(b *schedule.Builder, p *Params) {
	if p.Size == 1 {
		return
	}
	buf := bcastBuf(p)
	sc := c.scheme(p)
	ps := sc.positions()
	ps.treeScatter(b, p.Rank, p.Root, ps.origin(p.Root), buf)
	sc.allgather(b, p.Rank, buf, p.Root)
}

func init() {
	registerComposites(schedule.Bcast, func(c *composite) Info {
		return Info{Name: c.bcastName, Build: c.bcast,
			Doc: "binomial scatter straight to the " + c.name + " allgather's starting blocks, then that allgather"}
	})
}
