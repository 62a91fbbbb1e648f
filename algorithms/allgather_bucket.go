package algorithms

import "github.com/scoll/scoll/schedule"

// Bucket allgathers (bucket.go): an exchange that sends section s to the
// rank numbered s mod P in bucket ⌊s/P⌋, then every bucket's rings.
//
//	bucket, 2×2 grid:  stage 0 (X): 0↔1 2↔3   stage 1 (Y): 0↔2 1↔3 (two blocks)
//	bucket3, 2×2 grid: exchange, then X-first and Y-first buckets at once on
//	                   halves of every block
//
// Cost: see bucketCost.
func init() {
	register(Info{Name: Bucket, Linear: true, Build: sackAllgather(bucketLanes(1)), Cost: bucketCost(1, false),
		Doc:    "ring allgather along each grid dimension in turn (X lines, then XY planes, ...)",
		Source: "Sack 2011 sec. 3.2.2; Chan et al. 2007"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: Bucket3, Linear: true, Build: sackAllgather(bucketLanes(3)), Cost: bucketCost(3, false),
		Doc:    "one bucket per grid dimension (XYZ+, YZX+, ZXY+) on sections of every block, after a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: Bucket6, Linear: true, Build: sackAllgather(bucketLanes(6)), Cost: bucketCost(6, false),
		Doc:    "two buckets per grid dimension (XYZ+-, YZX+-, ZXY+-) on sections of every block, after a remapping exchange",
		Source: "Sack 2011 sec. 3.4.2"}, schedule.Allgather, schedule.Allgatherv)
}
