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
// copies), and a grey line from every send to the round of the receive
// that matches it (messages between two ranks match in order). The image's
// size and viewBox hold all its text.
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
		colW, rowH = 90, 26
		boxW, boxH = 70, 18
		margin     = 10
		titlePx    = 14
		sendColor  = "#1f5fbf"
		recvColor  = "#2e8b57"
		localColor = "#666666"
		lineColor  = "#888888"
	)
	legend := []string{
		"a rank's round: its sends (s), receives (r) and local operations (l: reductions, copies)",
		"a message: from its send's round to its receive's round",
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
	top := legendY + 2*rowH + 20
	width := left + rounds*colW - (colW - boxW) + margin
	width = max(width, margin+svgTextWidth(len([]rune(title)), titlePx)+margin)
	for _, l := range legend {
		width = max(width, margin+boxW+8+svgTextWidth(len(l), svgFontSize)+margin)
	}
	height := top + size*rowH - (rowH - boxH) + margin
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, svgFontSize)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
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
	ly += rowH
	fmt.Fprintf(bw, `<path d="M%d %dL%d %d" stroke="%s" stroke-width="0.7"/>`+"\n", margin+4, ly+boxH-2, margin+boxW-4, ly+2, lineColor)
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", margin+boxW+8, ly+13, legend[1])
	for k := range rounds {
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">round %d</text>`+"\n", left+k*colW+boxW/2, top-8, k)
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
						fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="0.7"/>`+"\n",
							cx(sendRounds[p][i])+boxW/4, cy(o.Peer), cx(k)-boxW/4, cy(s.Rank), lineColor)
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
