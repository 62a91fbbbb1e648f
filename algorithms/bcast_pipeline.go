package algorithms

import "github.com/scoll/scoll/schedule"

// Pipelined chain broadcast: the message is cut into segments of p.Segment
// elements (default 64 KiB); relative rank v receives segment s from v−1 and
// forwards it to v+1 one step later.
//
//	step 0: 0→1 s0   step 1: 0→1 s1, 1→2 s0   step 2: 0→1 s2, 1→2 s1, 2→3 s0
//
// Cost: (P + S − 2)(α + sβ).
// Source: Hoefler–Moor 2014 sec. 3.1.4 (linear pipeline); Sack 2011 sec. 3.2.
func bcastPipeline(b *schedule.Builder, p *Params) {
	v := mod(p.Rank-p.Root, p.Size)
	st := rtStream{member: true, parent: -1, depth: v, data: bcastBuf(p)}
	if v > 0 {
		st.parent = bcastRel(p, v-1)
	}
	if v+1 < p.Size {
		st.kids = []int{bcastRel(p, v+1)}
	}
	rtBcastStreams(b, []rtStream{st}, rtSegment(p))
}

func bcastPipelineCost(p *Params) Cost { return rtPipeCost(p, p.Count, p.Size-1, 1, 0) }

func init() {
	register(Info{Name: Pipeline, Build: bcastPipeline, Cost: bcastPipelineCost,
		Doc:    "segmented pipeline along a chain of ranks; for long messages",
		Source: "Hoefler-Moor 2014 sec. 3.1.4; Sack 2011 sec. 3.2"}, schedule.Bcast)
}
