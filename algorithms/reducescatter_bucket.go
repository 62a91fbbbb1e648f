package algorithms

import "github.com/scoll/scoll/schedule"

// Bucket reduce-scatters (bucket.go): ring reduce-scatters along the
// dimensions in reverse order (Z, then Y, then X for the single bucket),
// then the exchange that hands every reduced section to its owner.
//
// Cost: see bucketCost.
func init() {
	register(Info{Name: Bucket, Linear: true, Requires: NeedsCommutative, Build: sackReduceScatter(bucketLanes(1)), Cost: bucketCost(1, true),
		Doc:    "ring reduce-scatter along each grid dimension in turn (Z planes, then Y lines, ...)",
		Source: "Sack 2011 sec. 3.2.2; Chan et al. 2007"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: Bucket3, Linear: true, Requires: NeedsCommutative, Build: sackReduceScatter(bucketLanes(3)), Cost: bucketCost(3, true),
		Doc:    "one reduce-scatter bucket per grid dimension on sections of the vector, then a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: Bucket6, Linear: true, Requires: NeedsCommutative, Build: sackReduceScatter(bucketLanes(6)), Cost: bucketCost(6, true),
		Doc:    "two reduce-scatter buckets per grid dimension and direction on sections of the vector, then a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
