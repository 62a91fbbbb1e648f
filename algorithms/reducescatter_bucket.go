package algorithms

import "github.com/scoll/scoll/schedule"

// Bucket reduce-scatter: ring reduce-scatters along the dimensions in
// reverse order (Z, then Y, then X for the single bucket), then the exchange
// that hands every reduced section to its owner.
//
// Cost: see bucketCost.
func redscatBucket(ports int) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, in, out, done := redscatSetup(b, p)
		if done {
			return
		}
		P, r := p.Size, p.Rank
		pl := newBucketPlan(p, ports)
		k := pl.k()
		x := &sections{l: l, k: k}
		acc := b.Alloc(l.displ(P))
		bucketReduceScatterStages(b, pl, r, x, in, acc)
		// Exchange: the section this rank ends with in bucket b goes to
		// its owner.
		laneReturn(b, x, r, acc, out, pl.holder, pl.held)
	}
}

func init() {
	register(Info{Name: Bucket, Linear: true, Requires: NeedsCommutative, Build: redscatBucket(1), Cost: bucketCost(1, true),
		Doc:    "ring reduce-scatter along each grid dimension in turn (Z planes, then Y lines, ...)",
		Source: "Sack 2011 sec. 3.2.2; Chan et al. 2007"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: Bucket3, Linear: true, Requires: NeedsCommutative, Build: redscatBucket(3), Cost: bucketCost(3, true),
		Doc:    "one reduce-scatter bucket per grid dimension on sections of the vector, then a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: Bucket6, Linear: true, Requires: NeedsCommutative, Build: redscatBucket(6), Cost: bucketCost(6, true),
		Doc:    "two reduce-scatter buckets per grid dimension and direction on sections of the vector, then a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
