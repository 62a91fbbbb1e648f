package schedule

import (
	"bufio"
	"fmt"
	"io"
	"math"
)

// WriteGOAL writes the schedules of size ranks made by gen in the GOAL text
// format of the LogGOPSim simulator: a comment stating γ, "num_ranks N",
// then per rank a block of labelled operations ("l3: send 64b to 2 tag 0",
// "recv 64b from 1 tag 0", "calc 320") and dependencies ("l5 requires l3").
//
// LogGOPSim reads "calc N" as N nanoseconds of computation, so a round's
// reductions become one calc of γ·(bytes reduced) in nanoseconds, rounded
// to the nearest one, gamma being in seconds per byte; copies are free, as
// in LogGP, and a round that reduces nothing (or gamma = 0) has no calc.
// This is what model.CriticalPath charges in LogGP, so the two agree on the
// same parameters. Messages of zero bytes (a barrier's) are written as
// "send 0b"; they are real messages.
//
// Every operation of a round requires the end of the previous round; the
// round's computation runs once its messages have completed. A zero-cost
// "calc 0" marks the end of each round's messages, so the dependencies grow
// linearly with the operations. Ranks are generated one at a time; elemSize
// converts element counts to bytes.
func WriteGOAL(w io.Writer, size, elemSize int, gamma float64, gen Generator) error {
	if elemSize < 1 || !(gamma >= 0) || math.IsInf(gamma, 1) {
		return fmt.Errorf("schedule: GOAL export with element size %d and gamma %g", elemSize, gamma)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "// calc N is N ns of computation: gamma = %g s/B times the bytes a round reduces\n", gamma)
	fmt.Fprintf(bw, "num_ranks %d\n", size)
	for r := range size {
		g := goalRank{w: bw, elem: elemSize, gamma: gamma}
		fmt.Fprintf(bw, "\nrank %d {\n", r)
		b := NewStream(r, size, func(rd Round, _ int) bool {
			g.round(rd)
			return true
		})
		gen(b)
		b.EndRound()
		if err := b.Err(); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		fmt.Fprintln(bw, "}")
	}
	return bw.Flush()
}

// GOALCalc returns the nanoseconds of computation WriteGOAL writes for a
// round that reduces bytes bytes at gamma seconds per byte.
func GOALCalc(bytes int64, gamma float64) int64 {
	return int64(math.Round(gamma * float64(bytes) * 1e9))
}

type goalRank struct {
	w     *bufio.Writer
	elem  int
	gamma float64
	label int // last label used
	end   int // label of the previous round's end (0: none)
	comm  []int
}

func (g *goalRank) op(text string, deps ...int) int {
	g.label++
	fmt.Fprintf(g.w, "l%d: %s\n", g.label, text)
	for _, d := range deps {
		if d != 0 {
			fmt.Fprintf(g.w, "l%d requires l%d\n", g.label, d)
		}
	}
	return g.label
}

func (g *goalRank) round(rd Round) {
	g.comm = g.comm[:0]
	for _, o := range rd {
		n := o.Len() * g.elem
		switch {
		case o.Kind == OpSend:
			g.comm = append(g.comm, g.op(fmt.Sprintf("send %db to %d tag 0", n, o.Peer), g.end))
		case o.Kind.IsRecv():
			g.comm = append(g.comm, g.op(fmt.Sprintf("recv %db from %d tag 0", n, o.Peer), g.end))
		}
	}
	last := g.end
	if len(g.comm) > 0 {
		last = g.op("calc 0", g.comm...)
	}
	var reduced int64
	for _, o := range rd {
		if o.Kind == OpRecvReduce || o.Kind == OpReduce {
			reduced += int64(o.Len()) * int64(g.elem)
		}
	}
	if ns := GOALCalc(reduced, g.gamma); ns > 0 {
		last = g.op(fmt.Sprintf("calc %d", ns), last)
	}
	g.end = last
}
