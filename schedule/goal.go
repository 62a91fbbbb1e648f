package schedule

import (
	"bufio"
	"fmt"
	"io"
)

// WriteGOAL writes the schedules of size ranks made by gen in the GOAL text
// format of the LogGOPSim simulator: "num_ranks N", then per rank a block of
// labelled operations ("l3: send 64b to 2 tag 0", "recv 64b from 1 tag 0",
// "calc 64" for a local reduction or copy of 64 bytes) and dependencies
// ("l5 requires l3"). Every operation of a round requires the end of the
// previous round; local operations run one after the other once the round's
// messages have completed. A zero-cost "calc 0" marks each round's end, so
// the dependencies grow linearly with the operations. Ranks are generated
// one at a time; elemSize converts element counts to bytes.
func WriteGOAL(w io.Writer, size, elemSize int, gen Generator) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "num_ranks %d\n", size)
	for r := range size {
		g := goalRank{w: bw, elem: elemSize}
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

type goalRank struct {
	w     *bufio.Writer
	elem  int
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
	for _, o := range rd {
		if o.Kind == OpRecvReduce {
			last = g.op(fmt.Sprintf("calc %d", o.Len()*g.elem), last)
		} else if !o.Kind.IsComm() {
			last = g.op(fmt.Sprintf("calc %d", o.Len()*g.elem), last)
		}
	}
	g.end = last
}
