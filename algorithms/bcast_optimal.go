package algorithms

import (
	"math"

	"github.com/scoll/scoll/schedule"
)

// Round-optimal pipelined broadcast for any number of ranks: the message is
// cut into n packets and broadcast over the circulant graph with skips s_k
// (circulant.go) in n − 1 + ⌈lg P⌉ rounds, the least any schedule in which
// a rank sends and receives one packet per round can take. In round i
// every rank sends one packet to v + s_k and receives one from v − s_k
// (relative ranks, k = i mod ⌈lg P⌉), so every rank's send and receive
// bandwidth is busy from the first phase on; the q−1 packet rounds the
// root's first packets need to reach everyone are paid once, not per
// packet.
//
//	P=5 (skips 1 2 3 5), n=2: round 0: 0→1 b0 … round 1: 0→2 b1, 1→3 b0 …
//	(rounds 0..3; every rank ends with both blocks)
//
// Cost: (n + ⌈lg P⌉ − 1)(α + sβ) for packets of s bytes; the packet count
// is WithSegments' or WithSegmentSize's, else the one that minimises the
// cost under the machine model, n = √((⌈lg P⌉ − 1)·mβ/α) for m bytes.
// Source: Träff 2022 (arXiv 2205.10072) and 2023 (arXiv 2312.11236),
// round-optimal n-block broadcast schedules on circulant graphs; the
// bound n − 1 + ⌈lg P⌉: Bar-Noy, Kipnis 1994.
func bcastOptimal(b *schedule.Builder, p *Params) {
	P := p.Size
	n, seg := bcastOptimalPackets(p)
	if P == 1 || n == 0 {
		return
	}
	s := circSkips(P)
	q := len(s) - 1
	v := mod(p.Rank-p.Root, P)
	buf := bcastBuf(p)
	packet := func(blk int) schedule.Region { return rtSegRegion(buf, blk, seg) }
	blocks := func(u int) []int {
		if u == 0 {
			return nil
		}
		return circBlocks(circRecv(u, s), q, n)
	}
	mine := blocks(v)
	// What each receiver of this rank receives, by round (nil: the root).
	theirs := make([][]int, q)
	for k := range q {
		theirs[k] = blocks((v + s[k]) % P)
	}
	x := circShift(q, n)
	for i := range n - 1 + q {
		k := (i + x) % q
		if theirs[k] != nil && theirs[k][i] >= 0 {
			b.Send(bcastRel(p, v+s[k]), packet(theirs[k][i]))
		}
		if mine != nil && mine[i] >= 0 {
			b.Recv(bcastRel(p, v-s[k]), packet(mine[i]))
		}
		b.EndRound()
	}
}

// bcastOptimalPackets returns the packet count n and the packet length
// seg (elements) of the optimal bcast of p: from p.Segments or p.Segment
// when set, else the count minimising (n + q − 1)(α + sβ) under p's
// machine model; 0 packets for an empty message.
func bcastOptimalPackets(p *Params) (n, seg int) {
	if p.Count == 0 {
		return 0, 1
	}
	switch {
	case p.Segments > 0:
		seg = (p.Count + p.Segments - 1) / p.Segments
	case p.Segment > 0:
		seg = p.Segment
	default:
		n := optimalPacketCount(p)
		seg = (p.Count + n - 1) / n
	}
	seg = max(1, min(seg, p.Count))
	return rtSegs(p.Count, seg), seg
}

// optimalPacketCount returns the packet count that minimises the optimal
// bcast's cost under p's machine model (InProcess when unset): the
// integers next to √((q−1)·mβ/α), at least 1 and at most the count.
func optimalPacketCount(p *Params) int {
	m := p.machine()
	q := ceilLog2(p.Size)
	bytes := p.bytes(p.Count)
	cost := func(n int) float64 {
		seg := (p.Count + n - 1) / n
		return float64(rtSegs(p.Count, seg)+q-1) * (m.Alpha + p.bytes(seg)*m.Beta)
	}
	x := math.Sqrt(float64(q-1) * bytes * m.Beta / m.Alpha)
	if math.IsNaN(x) || x < 1 {
		return 1
	}
	lo := int(min(x, float64(p.Count)))
	best := max(lo, 1)
	for _, n := range []int{lo + 1, lo - 1} {
		if n >= 1 && n <= p.Count && cost(n) < cost(best) {
			best = n
		}
	}
	return best
}

func bcastOptimalCost(p *Params) Cost {
	n, seg := bcastOptimalPackets(p)
	if p.Size == 1 || n == 0 {
		return Cost{}
	}
	r := float64(n - 1 + ceilLog2(p.Size))
	return Cost{Alpha: r, Beta: r * p.bytes(seg)}
}

// The default rule does not pick it (Explicit): the α-β model favours it
// from a few KiB, but ranks in one process, which share the machine's
// cores and memory bandwidth, measured it slower than binomial and
// scatter-allgather (8 ranks on 2 cores, 1 MiB, medians of three runs:
// 472 µs against 205 and 121 µs; docs/bcast-bounds.md).
func init() {
	register(Info{Name: Optimal, Build: bcastOptimal, Cost: bcastOptimalCost, Explicit: true,
		Doc:    "round-optimal pipelined broadcast over a circulant graph: n packets in n-1+ceil(lg P) rounds for any P",
		Source: "Traff 2022 (arXiv 2205.10072), 2023 (arXiv 2312.11236); Bar-Noy, Kipnis 1994"}, schedule.Bcast)
}
