package algorithms

import (
	"math"

	"github.com/scoll/scoll/schedule"
)

// Linear pipeline reduce (Marendic et al.'s Linear pipeline): one chain of
// all ranks into the root, the vector cut into segments that follow each
// other down the chain; a rank combines a segment with its own and passes
// it on one step after receiving it. The chain keeps rank order: it runs
// 0→1→…→P−1 when the root is P−1 and P−1→…→1→0 when it is 0. For a root
// in between, a commutative operator lets the chain run 0→…→P−1 past the
// root and end there (root−1 → root+1, P−1 → root); a non-commutative one
// has the root combine its input in its place in the chain 0→…→P−1, whose
// end P−1 then passes each finished segment to the root: one hop more.
// (The registered pipeline runs two chains, one from each end.)
//
//	P=4, root 3:  step t: 0→1 s_t, 1→2 s_(t−1), 2→3 s_(t−2)
//	P=4, root 1:  commutative:  0→2→3→1;  not:  0→1→2→3, then 3→1
//
// The default segment count is Table 3's optimum for the chain's L hops,
// N = √((L−1)·m(β+γ)/α) for m bytes with InProcess's α, β, γ (rounded, at
// least 1 and at most the count); Params.Segment sets the segment length
// instead.
//
// Cost: (L + S − 1)(α + sβ + sγ) for S segments of s bytes, L = P − 1
// (P for the relayed chain); at S = N, L = P − 1 it is Table 3's row
// (P−2)α + 2√((P−2)α·m(β+γ)) + mβ + mγ.
// Source: Marendic et al. 2016 Table 3 (their [18]); Hoefler–Moor 2014
// sec. 3.1.4.
func reduceLinearPipeline(b *schedule.Builder, p *Params) {
	P, root, r := p.Size, p.Root, p.Rank
	seg := rtOptSegment(p, p.Count, linearPipelineHops(p))
	relayed := linearPipelineHops(p) == P
	// The chain's order: position i is rank at(i), the root last unless
	// relayed.
	at := func(i int) int { return i }
	switch {
	case root == 0:
		at = func(i int) int { return P - 1 - i }
	case root < P-1 && !relayed:
		at = func(i int) int {
			switch {
			case i == P-1:
				return root
			case i >= root:
				return i + 1
			}
			return i
		}
	}
	pos := linearPipelinePos(P, root, relayed, r)
	node := rtNode{member: true, parent: -1, level: pos}
	if pos+1 < P {
		node.parent = at(pos + 1)
	}
	if pos > 0 {
		c := at(pos - 1)
		node.kids = []rtKid{{rank: c, level: pos - 1, left: c < r}}
	}
	streams := []rtRedStream{{node: node, in: p.input(), out: schedule.RecvBuf(0, p.Count)}}
	if relayed {
		if r == P-1 {
			streams[0].node.parent = root
		}
		if r == root {
			streams = append(streams, rtRedStream{relay: true, out: schedule.RecvBuf(0, p.Count),
				node: rtNode{member: true, parent: -1, level: P, kids: []rtKid{{rank: P - 1, level: P - 1}}}})
		}
	}
	rtReduceStreams(b, streams, seg)
}

// linearPipelinePos returns rank r's position in linear-pipeline's chain.
func linearPipelinePos(P, root int, relayed bool, r int) int {
	switch {
	case root == 0:
		return P - 1 - r
	case root == P-1 || relayed:
		return r
	case r == root:
		return P - 1
	case r > root:
		return r - 1
	}
	return r
}

// linearPipelineHops returns the hops of linear-pipeline's chain: P − 1,
// or P when a non-commutative operator makes the chain's end relay to a
// root inside it.
func linearPipelineHops(p *Params) int {
	if !p.Commutative && p.Root > 0 && p.Root < p.Size-1 {
		return p.Size
	}
	return p.Size - 1
}

// rtOptSegment returns the segment length in elements of a pipeline of n
// elements over hops hops: p.Segment, or n cut into Marendic et al.'s
// optimal number of segments N = √((hops−1)·m(β+γ)/α) (their sec. 5.2, m
// the bytes, α, β, γ those of InProcess), rounded to a whole number in
// [1, n].
func rtOptSegment(p *Params, n, hops int) int {
	if p.Segment > 0 {
		return p.Segment
	}
	N := OptSegments(hops, p.bytes(n), InProcess)
	N = max(1, min(math.Round(N), float64(max(n, 1))))
	return max(1, int(math.Ceil(float64(n)/N)))
}

// OptSegments is Marendic et al.'s optimal number of segments (sec. 5.2)
// for a pipeline of hops hops moving m bytes on machine mc,
// √((hops−1)·m·(β+γ)/α), as a real number: it minimises (hops + N − 1)
// steps of α + (m/N)(β+γ). It is 0 for hops ≤ 1 or m = 0 and +Inf when only
// α is 0. (model.NOpt is the same with the paper's n = hops.)
func OptSegments(hops int, m float64, mc Machine) float64 {
	num := float64(hops-1) * m * (mc.Beta + mc.Gamma)
	if num <= 0 {
		return 0
	}
	return math.Sqrt(num / mc.Alpha)
}

func reduceLinearPipelineCost(p *Params) Cost {
	q := *p
	L := linearPipelineHops(p)
	q.Segment = rtOptSegment(p, p.Count, L)
	return rtPipeCost(&q, p.Count, L, 1, 1)
}

func init() {
	register(Info{Name: LinearPipeline, Build: reduceLinearPipeline, Cost: reduceLinearPipelineCost, Linear: true,
		Doc:    "one segmented chain of all ranks into the root, Table 3's optimal segment count; order-preserving",
		Source: "Marendic et al. 2016 Table 3; Hoefler-Moor 2014 sec. 3.1.4"}, schedule.Reduce)
}
