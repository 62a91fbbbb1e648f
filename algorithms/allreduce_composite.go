package algorithms

import "github.com/scoll/scoll/schedule"

// allreduce: reduce-scatter stages into the receive buffer, then allgather
// stages on it.
func (c *composite) allreduce(b *schedule.Builder, p *Params) {
	out, in, done := vectorSetup(b, p)
	if done {
		return
	}
	l := redscatSplit(p.Count, p.Size)
	_, _, rd, bk, x := c.plan(p, &l)
	if rd != nil {
		rdReduceScatterStages(b, rd, p.Rank, in, out)
		rdAllgatherStages(b, rd, p.Rank, out, nil, nil, -1)
		return
	}
	bucketReduceScatterStages(b, bk, p.Rank, x, in, out)
	bucketAllgatherStages(b, bk, p.Rank, x, out)
}

func init() {
	registerComposites(schedule.Allreduce, func(c *composite) Info {
		return Info{Name: c.name, Build: c.allreduce,
			Doc: "reduce-scatter then allgather of the " + c.name + " family; their reordering exchanges cancel"}
	})
}
