package schedule

import (
	"bufio"
	"fmt"
	"io"
)

// MaxSVGRanks bounds the ranks WriteSVG draws: a timeline of more ranks is
// unreadable and its size grows with the square of the ranks.
const MaxSVGRanks = 256

// WriteSVG draws the schedules of size ranks made by gen as a timeline: one
// row per rank, one column per round, a box per round holding its sends
// (blue), receives (green) and local operations (grey), and a line from
// every send to the round of the receive that matches it (messages between
// two ranks match in order).
func WriteSVG(w io.Writer, size int, gen Generator) error {
	if size > MaxSVGRanks {
		return fmt.Errorf("%w: %d ranks: a timeline draws at most %d", ErrSpec, size, MaxSVGRanks)
	}
	scheds := make([]*Schedule, size)
	rounds := 0
	for r := range size {
		b := NewBuilder(r, size)
		gen(b)
		s, err := b.Schedule()
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		scheds[r] = s
		rounds = max(rounds, len(s.Rounds))
	}
	const (
		colW, rowH = 90, 26
		left, top  = 60, 30
		boxW, boxH = 70, 18
	)
	width, height := left+rounds*colW+20, top+size*rowH+20
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">`+"\n", width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for k := range rounds {
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">round %d</text>`+"\n", left+k*colW+boxW/2, top-12, k)
	}
	cx := func(k int) int { return left + k*colW + boxW/2 }
	cy := func(r int) int { return top + r*rowH + boxH/2 }
	// Match sends to receives: the i-th send from s to d meets the i-th
	// receive of d from s.
	type pair struct{ from, to int }
	sendRounds := map[pair][]int{}
	for _, s := range scheds {
		for k, rd := range s.Rounds {
			for _, o := range rd {
				if o.Kind == OpSend {
					p := pair{s.Rank, o.Peer}
					sendRounds[p] = append(sendRounds[p], k)
				}
			}
		}
	}
	seen := map[pair]int{}
	for _, s := range scheds {
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="end">rank %d</text>`+"\n", left-8, cy(s.Rank)+4, s.Rank)
		for k, rd := range s.Rounds {
			var ns, nr, nl int
			for _, o := range rd {
				switch {
				case o.Kind == OpSend:
					ns++
				case o.Kind.IsRecv():
					nr++
					p := pair{o.Peer, s.Rank}
					if i := seen[p]; i < len(sendRounds[p]) {
						fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="0.7"/>`+"\n",
							cx(sendRounds[p][i])+boxW/4, cy(o.Peer), cx(k)-boxW/4, cy(s.Rank))
						seen[p] = i + 1
					}
				default:
					nl++
				}
				if o.Kind == OpRecvReduce {
					nl++
				}
			}
			x, y := left+k*colW, top+s.Rank*rowH
			fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4" stroke="#999"/>`+"\n", x, y, boxW, boxH)
			label := fmt.Sprintf("%ds %dr", ns, nr)
			if nl > 0 {
				label += fmt.Sprintf(" %dl", nl)
			}
			fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle"><tspan fill="#1f5fbf">%s</tspan></text>`+"\n", x+boxW/2, y+13, label)
		}
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
