package algorithms

import "github.com/scoll/scoll/schedule"

// allreduce: reduce-scatter stages into the receive buffer, then allgather
// stages on it.
func (c *composite) allreduce(b *schedule.Builder, p *Params) {
	out, in, done := vectorSetup(b, p)
	if done {
		return
	}
	sc := c.scheme(p)
	sc.reduceScatter(b, p.Rank, in, out)
	sc.allgather(b, p.Rank, out, -1)
}

func init() {
	registerComposites(schedule.Allreduce, func(c *composite) Info {
		return Info{Name: c.name, Build: c.allreduce,
			Doc: "reduce-scatter then allgather of the " + c.name + " family; their reordering exchanges cancel"}
	})
}
