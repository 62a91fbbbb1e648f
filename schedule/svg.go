package schedule

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
)

// MaxSVGRanks bounds the ranks WriteSVG draws: a timeline of more ranks is
// unreadable and its size grows with the square of the ranks.
const MaxSVGRanks = 256

// WriteSVG draws the schedules of size ranks made by gen as a timeline,
// as WriteSVGTitle does, without a title.
func WriteSVG(w io.Writer, size int, gen Generator) error {
	return WriteSVGTitle(w, size, gen, "")
}

// The timeline's text is sans-serif (which every browser and SVG renderer
// resolves) at svgFontSize pixels.
const svgFontSize = 10

// svgTextWidth bounds the width of text of n characters at font size px
// (0.62 em a character holds for the sans-serif fonts of browsers).
func svgTextWidth(n int, px float64) int { return int(float64(n)*0.62*px) + 1 }

// WriteSVGTitle draws the schedules of size ranks made by gen as a
// timeline: the title (if any) and a legend on top, then one row per rank,
// one column per round, a box per round counting its sends (blue "s"),
// receives (green "r") and local operations (grey "l": reductions and
// copies), and a grey arrow for every message (messages between two ranks
// match in order). A message sent in round k runs in the gap to the right
// of column k, from its sender's box to its receiver's row, so that it
// crosses no box and no round label; one received in a later round k'
// runs along the channel between its receiver's row and the next and ends
// in the gap after column k'. A message between rows more than half
// the ranks apart whose other way round is shorter (a ring's P−1 → 0)
// wraps around: it leaves through the bottom edge of the grid and comes in
// through the top, within the gap. The image's size and viewBox hold all
// its text; the output depends only on its arguments.
func WriteSVGTitle(w io.Writer, size int, gen Generator, title string) error {
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
		boxW, boxH = 70, 18
		gapW       = 44 // between columns, where the messages run
		colW, rowH = boxW + gapW, 26
		margin     = 10
		titlePx    = 14
		sendColor  = "#1f5fbf"
		recvColor  = "#2e8b57"
		localColor = "#666666"
		lineColor  = "#888888"
	)
	legend := []string{
		"a rank's round: its sends (s), receives (r) and local operations (l: reductions, copies)",
		"a message: from its sender's round to its receiver's row, right of the round",
		"a message around the end: out at the bottom of the grid, in at the top",
	}
	// The legend's first line with s, r and l in their colours.
	legend0 := strings.NewReplacer("(s)", `(<tspan fill="`+sendColor+`">s</tspan>)`, "(r)", `(<tspan fill="`+recvColor+`">r</tspan>)`,
		"(l:", `(<tspan fill="`+localColor+`">l</tspan>:`).Replace(legend[0])
	rankLabel := svgTextWidth(len(fmt.Sprintf("rank %d", size-1)), svgFontSize)
	left := margin + rankLabel + 8
	y := margin
	titleY := 0
	if title != "" {
		titleY = y + titlePx
		y = titleY + 8
	}
	legendY := y + boxH // the first legend line's box
	top := legendY + len(legend)*rowH + 20
	width := left + rounds*colW + margin // the last gap holds messages too
	width = max(width, margin+svgTextWidth(len([]rune(title)), titlePx)+margin)
	for _, l := range legend {
		width = max(width, margin+boxW+8+svgTextWidth(len(l), svgFontSize)+margin)
	}
	height := top + size*rowH + margin // below the last row: the wrapping messages
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, svgFontSize)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(bw, `<defs><marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="5" markerHeight="5" orient="auto"><path d="M0 0L6 3L0 6z" fill="%s"/></marker></defs>`+"\n", lineColor)
	// msg draws one straight piece of a message, with an arrowhead when
	// it ends at the receiver.
	msg := func(x1, y1, x2, y2 float64, head bool) {
		fmt.Fprintf(bw, `<line class="msg" x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="0.7"`, x1, y1, x2, y2, lineColor)
		if head {
			fmt.Fprint(bw, ` marker-end="url(#arrow)"`)
		}
		fmt.Fprintln(bw, "/>")
	}
	if title != "" {
		fmt.Fprintf(bw, `<title>%s</title>`+"\n", html.EscapeString(title))
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="%d" font-weight="bold">%s</text>`+"\n", margin, titleY, titlePx, html.EscapeString(title))
	}
	// The legend: a sample box and a sample message (a path, so that the
	// lines are the messages).
	box := func(x, y int, ns, nr, nl int) {
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4" stroke="#999"/>`+"\n", x, y, boxW, boxH)
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle"><tspan fill="%s">%ds</tspan> <tspan fill="%s">%dr</tspan>`, x+boxW/2, y+13, sendColor, ns, recvColor, nr)
		if nl > 0 {
			fmt.Fprintf(bw, ` <tspan fill="%s">%dl</tspan>`, localColor, nl)
		}
		fmt.Fprintln(bw, `</text>`)
	}
	ly := legendY - boxH
	box(margin, ly, 1, 1, 1)
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", margin+boxW+8, ly+13, legend0)
	// The legend's sample messages are paths, so that the lines are the
	// messages.
	sample := func(x1, y1, x2, y2 int, head bool) {
		fmt.Fprintf(bw, `<path d="M%d %dL%d %d" stroke="%s" stroke-width="0.7"`, x1, y1, x2, y2, lineColor)
		if head {
			fmt.Fprint(bw, ` marker-end="url(#arrow)"`)
		}
		fmt.Fprintln(bw, "/>")
	}
	ly += rowH
	sample(margin+4, ly+2, margin+boxW-4, ly+boxH-2, true)
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", margin+boxW+8, ly+13, legend[1])
	ly += rowH
	sample(margin+4, ly+boxH-6, margin+boxW/2, ly+boxH, false)
	sample(margin+boxW/2, ly, margin+boxW-4, ly+6, true)
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", margin+boxW+8, ly+13, legend[2])
	for k := range rounds {
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">round %d</text>`+"\n", left+k*colW+boxW/2, top-8, k)
	}
	cy := func(r int) float64 { return float64(top + r*rowH + boxH/2) }
	// The grid's edges, half a row beyond the first and last rows: a
	// wrapping message crosses them.
	topEdge, bottomEdge := cy(0)-rowH/2, cy(size-1)+rowH/2
	// message draws the message from rank a's round s to rank b's round r.
	message := func(a, s, b, r int) {
		x1 := float64(left + s*colW + boxW + 2)
		x2 := float64(left+max(s, r)*colW+boxW+gapW) - 4
		y1, y2 := cy(a), cy(b)
		d := b - a
		switch {
		case 2*d < -size: // down through the bottom, in at the top
			y2v := y2 + float64(size*rowH)
			xm := x1 + (x2-x1)*(bottomEdge-y1)/(y2v-y1)
			msg(x1, y1, xm, bottomEdge, false)
			msg(xm, topEdge, x2, y2, true)
		case 2*d > size: // up through the top, in at the bottom
			y2v := y2 - float64(size*rowH)
			xm := x1 + (x2-x1)*(topEdge-y1)/(y2v-y1)
			msg(x1, y1, xm, topEdge, false)
			msg(xm, bottomEdge, x2, y2, true)
		case r > s: // received rounds later: along the channel between rows
			ch := y2 - rowH/2
			if a > b {
				ch = y2 + rowH/2
			}
			xs := x1 + float64(gapW)/2
			xe := float64(left+r*colW+boxW) + 4
			msg(x1, y1, xs, ch, false)
			msg(xs, ch, xe, ch, false)
			msg(xe, ch, x2, y2, true)
		default:
			msg(x1, y1, x2, y2, true)
		}
	}
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
		fmt.Fprintf(bw, `<text x="%d" y="%g" text-anchor="end">rank %d</text>`+"\n", left-8, cy(s.Rank)+4, s.Rank)
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
						message(o.Peer, sendRounds[p][i], s.Rank, k)
						seen[p] = i + 1
					}
				default:
					nl++
				}
				if o.Kind == OpRecvReduce {
					nl++
				}
			}
			box(left+k*colW, top+s.Rank*rowH, ns, nr, nl)
		}
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
