package bench

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport"
)

// RankBytes is what Config.MaxMemory charges for each in-process rank
// besides its buffers and its schedule: the goroutine's stack, the
// communicator and its plan cache, the transport endpoint and mailbox, and
// the garbage collector's headroom over them.
//
// Provenance: the process's maximum RSS (/usr/bin/time -f %M) of scoll
// bench --sizes 8 --iters 1 --warmup 0 on one algorithm, linux/amd64, Go
// 1.26: 1,024 ranks 46–55 MB, 4,096 ranks 142–154 MB (35–38 KB a rank),
// 16,384 ranks 771–820 MB (47–50 KB a rank), 32,768 ranks 1,201 MB (37 KB
// a rank). The charge rounds the largest of these up, so that the estimate
// errs on the side of refusing.
const RankBytes = 64 << 10

// Footprint is the memory one configuration allocates, as Run estimates it
// before running it (Config.MaxMemory). Every field is in bytes, over all
// ranks.
type Footprint struct {
	// Buffers are the send and receive buffers.
	Buffers int64
	// Ranks is RankBytes per in-process rank (0 with Config.World: the
	// ranks are other processes).
	Ranks int64
	// Schedules are the ranks' plans (rounds, operations, message tags),
	// extrapolated from the largest of a few ranks' schedules.
	Schedules int64
	// Scratch is the executor's scratch and temporary space the schedules
	// declare, extrapolated the same way.
	Scratch int64
	// Partial tells that the schedules were not counted to the end: the
	// rest already exceeded the limit (the total is a lower bound), or the
	// algorithm cannot build this configuration's schedule (the run will
	// say why).
	Partial bool
}

// Total returns the sum of the parts.
func (f Footprint) Total() int64 { return f.Buffers + f.Ranks + f.Schedules + f.Scratch }

// String describes the estimate and its parts in one line, such as
// "1.6 GiB (buffers 512 MiB, 8 ranks × 64 KiB, schedules 1.2 MiB, scratch 1 GiB)".
func (f Footprint) String() string {
	var b strings.Builder
	if f.Partial {
		b.WriteString("at least ")
	}
	b.WriteString(HumanSize(f.Total()))
	b.WriteString(" (buffers " + HumanSize(f.Buffers))
	if f.Ranks > 0 {
		fmt.Fprintf(&b, ", %d ranks × %s", f.Ranks/RankBytes, HumanSize(RankBytes))
	}
	if f.Schedules > 0 || f.Scratch > 0 {
		b.WriteString(", schedules " + HumanSize(f.Schedules) + ", scratch " + HumanSize(f.Scratch))
	} else if f.Partial {
		b.WriteString(", schedules not counted")
	}
	b.WriteString(")")
	return b.String()
}

// HumanSize formats a byte count with a binary unit and up to one decimal:
// 96 → "96 B", 1536 → "1.5 KiB", 6<<30 → "6 GiB".
func HumanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, u := float64(n), 0
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}

// Sizes of what a rank's plan and executor keep per round, operation and
// message (exec.Plan: the rounds' slices, their operations with room for
// append's growth, a tag per message and an early-start count per round;
// the executor: a transport.Msg per message of the busiest round).
var (
	opBytes    = int64(unsafe.Sizeof(schedule.Op{}))
	roundBytes = int64(unsafe.Sizeof(schedule.Round{})) + 8
	msgBytes   = int64(unsafe.Sizeof(transport.Msg{})) + 8
)

// rankCount is what one rank's schedule holds.
type rankCount struct {
	rounds, ops, comm int64
	maxComm, maxFused int64
	scratch           int64 // elements
}

// bytes returns the memory the rank's plan and executor keep.
func (rc rankCount) bytes(elemSize int) (plan, scratch int64) {
	plan = rc.rounds*roundBytes + 2*rc.ops*opBytes + rc.comm*8 + rc.maxComm*msgBytes
	return plan, (rc.scratch + rc.maxFused) * int64(elemSize)
}

// footprint estimates the memory configuration (alg, sh) allocates. The
// parts that need no schedule come first; the schedules of a few ranks
// (the root, the first, second, middle and last) are streamed one round
// at a time, never held, and stop as soon as the estimate passes the
// limit. The largest rank's plan and scratch count for every rank.
func (c *config) footprint(alg string, sh shape) Footprint {
	f := Footprint{Buffers: sh.mem}
	if c.World == nil {
		f.Ranks = int64(c.NP) * RankBytes
	}
	limit := c.MaxMemory
	if limit > 0 && f.Total() > limit {
		f.Partial = true
		return f
	}
	info, p, ok := c.params(alg, sh)
	if !ok {
		f.Partial = true
		return f
	}
	np := int64(c.NP)
	ranks := []int{0, c.Root, 1, c.NP / 2, c.NP - 1}
	seen := map[int]bool{}
	for _, r := range ranks {
		if r < 0 || r >= c.NP || seen[r] {
			continue
		}
		seen[r] = true
		// over reports whether a rank with these counts would take the
		// estimate past the limit.
		over := func(rc rankCount) bool {
			pl, sc := rc.bytes(c.elemSize)
			return limit > 0 && f.Buffers+f.Ranks+np*(max(pl, f.Schedules/np)+max(sc, f.Scratch/np)) > limit
		}
		rc, complete := countRank(info, p, r, over)
		pl, sc := rc.bytes(c.elemSize)
		f.Schedules = max(f.Schedules, np*pl)
		f.Scratch = max(f.Scratch, np*sc)
		if !complete {
			f.Partial = true
			return f
		}
		if limit > 0 && f.Total() > limit {
			return f
		}
	}
	return f
}

// params returns the algorithm configuration (alg, sh) runs and its
// parameters (Rank unset), or false when there is none to build: an
// unknown collective or algorithm, or none that fits. For Auto it is the
// algorithm the cost model picks for in-process ranks, whose plan every
// rank builds even when a shared-memory path runs the call.
func (c *config) params(alg string, sh shape) (*algorithms.Info, algorithms.Params, bool) {
	coll, ok := schedule.ParseCollective(c.Op)
	if !ok {
		return nil, algorithms.Params{}, false
	}
	p := algorithms.Params{
		Spec:        schedule.Spec{Coll: coll, Size: c.NP, Count: sh.count, Root: c.Root},
		Commutative: true, // sum
		ElemSize:    c.elemSize,
		Grid:        c.Grid,
	}
	c.Knobs.Apply(&p)
	var info *algorithms.Info
	if alg == Auto {
		info = algorithms.Select(&p, algorithms.InProcess, algorithms.Caps{}) // the message schedule's memory
	} else {
		info, _ = algorithms.Lookup(coll, alg)
	}
	if info == nil || info.Check(&p) != nil {
		return nil, p, false
	}
	return info, p, true
}

// countRank streams rank r's schedule of info for p and counts it. It
// returns false when it stopped early, because over reported that the
// counts so far are too many, or when the schedule cannot be built.
func countRank(info *algorithms.Info, p algorithms.Params, r int, over func(rankCount) bool) (rankCount, bool) {
	p.Rank = r
	var rc rankCount
	stopped := false
	b := schedule.NewStream(r, p.Size, func(round schedule.Round, scratch int) bool {
		var comm, fused int64
		for _, o := range round {
			if o.Kind.IsComm() {
				comm++
			}
			if o.Kind == schedule.OpRecvReduce {
				fused += int64(o.Dst.Len)
			}
		}
		rc.rounds++
		rc.ops += int64(len(round))
		rc.comm += comm
		rc.maxComm = max(rc.maxComm, comm)
		rc.maxFused = max(rc.maxFused, fused)
		rc.scratch = int64(scratch)
		if rc.rounds%64 == 0 && over(rc) {
			stopped = true
			return false
		}
		return true
	})
	b.SetBounds(p.BufLens(r))
	b.SkipOverlapCheck()
	if p.Coll == schedule.Barrier {
		b.KeepEmpty()
	}
	info.Build(b, &p)
	_, err := b.Schedule()
	if stopped {
		return rc, false
	}
	rc.scratch = max(rc.scratch, int64(b.ScratchLen()))
	return rc, err == nil
}
