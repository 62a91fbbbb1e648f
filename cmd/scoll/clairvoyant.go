package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/schedule"
	"github.com/spf13/cobra"
)

func newClairvoyantCmd() *cobra.Command {
	var (
		np, segments, root int
		arrivals, form     string
		d                  float64
		sweep              string
		table5             bool
		t5                 bench.PredictedConfig
		t5size             string
	)
	cmd := &cobra.Command{
		Use:   "clairvoyant",
		Short: "Generate a Clairvoyant reduction schedule for arrival times, and verify it",
		Long: `clairvoyant runs the schedule generation of Marendic et al.'s Clairvoyant
reduction (their Algorithm 1, errata fixed: see algorithms/clairvoyant.go) for
--np ranks, --segments segments, a root and the ranks' arrival times, and
prints the schedule, its length R in rounds and the symbolic verifier's
verdict on the schedule built from it (every contribution reaches the root
exactly once).

Arrivals are in the unit of d (--d, default 1): round k starts at time k·d
after the earliest arrival, and a rank takes part from the first round that
starts at or after its arrival. Without --arrivals all ranks arrive together.

Formats: text (a line per rank: its rounds, "<z:j" receives segment j from
rank z, ">i:j" sends it to rank i), json ({"p","segments","rounds",
"verified","ranks"}: per rank, the rounds in which it sends or receives, with
"send" and "recv" as [peer, segment] or null) and svg (a row per rank, a
column per round, a line per message; at most 256 ranks).

--table5 runs, instead, Marendic et al.'s Table 5 experiment in shape on
--np in-process ranks: --iterations reductions of --size bytes, each after
a work phase from a synthetic trace (four clusters of ranks by rank mod 4,
each a slow wave over the iterations plus noise, up to --work), with the
binomial tree, the clairvoyant reduce with the arrivals a call site predicts
(SMA over 5 calls, shared every --share-every calls) and the clairvoyant reduce told
the true arrivals; --reps runs each, alternating. It prints the median
accumulated runtime (the sum over iterations of last exit − first arrival).

--sweep RANKS prints, instead, R for balanced arrivals for every P of RANKS
(rank counts as --np takes them: 3:130:+1 is every P from 3 to 130, 3..130
the powers of two between) and the segment counts 1, 2, 4, 7, 8, 16, 32, 64, marking with * where R
exceeds ⌈lg P⌉ + N − 1.`,
		Example: `  scoll clairvoyant --np 4 --segments 4
  scoll clairvoyant --np 4 --segments 4 --arrivals 0,0,0,5 --format json
  scoll clairvoyant --np 8 --segments 4 --arrivals 0,1.5,0,0,3,0,0,0 --format svg > cv.svg
  scoll clairvoyant --sweep 3:130:+1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if sweep != "" {
				return clairvoyantSweep(out, sweep)
			}
			if table5 {
				b, err := parseSize("size", t5size)
				if err != nil {
					return err
				}
				t5.NP, t5.Segments, t5.Sizes = np, segments, []int{b}
				return clairvoyantTable5(cmd, t5)
			}
			if segments < 1 {
				return fmt.Errorf("--segments %d: want at least 1", segments)
			}
			if !(d > 0) {
				return fmt.Errorf("--d %v: want a positive round time", d)
			}
			var a []float64
			if arrivals != "" {
				for _, f := range strings.Split(arrivals, ",") {
					x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
					if err != nil {
						return fmt.Errorf("--arrivals: %w", err)
					}
					a = append(a, x/d)
				}
			}
			pl, err := algorithms.GenerateClairvoyant(np, segments, root, a)
			if err != nil {
				return err
			}
			verr := verifyClairvoyant(pl, a)
			switch strings.ToLower(form) {
			case "text":
				writeClairvoyantText(out, pl, verr)
			case "json":
				if err := writeClairvoyantJSON(out, pl, verr); err != nil {
					return err
				}
			case "svg":
				if err := writeClairvoyantSVG(out, pl); err != nil {
					return err
				}
			default:
				return fmt.Errorf("--format %q: want text, json or svg", form)
			}
			if verr != nil {
				return fmt.Errorf("the verifier rejects the schedule: %w", verr)
			}
			return nil
		},
	}
	f := cmd.Flags()
	addNPFlag(f, &np, 4, "number of ranks P")
	f.IntVar(&segments, "segments", 4, "number of segments N")
	f.IntVar(&root, "root", 0, "root rank")
	f.StringVar(&arrivals, "arrivals", "", "arrival times of the ranks, comma-separated, in the unit of --d (default: all at 0)")
	f.Float64Var(&d, "d", 1, "round time d, in the unit of --arrivals")
	f.StringVar(&form, "format", "text", "output format: text, json or svg")
	f.StringVar(&sweep, "sweep", "", "print R for balanced arrivals for these rank counts instead (3:130:+1: every P from 3 to 130)")
	f.BoolVar(&table5, "table5", false, "run the predicted-arrivals experiment (Table 5 in shape) instead")
	f.StringVar(&t5size, "size", "1MiB", "--table5: bytes per rank")
	f.IntVar(&t5.Iterations, "iterations", 100, "--table5: reductions per run")
	f.IntVar(&t5.Reps, "reps", 5, "--table5: runs per variant")
	f.IntVar(&t5.ShareEvery, "share-every", 10, "--table5: calls between two sharings of the measured arrivals")
	f.DurationVar(&t5.Work, "work", 20*time.Millisecond, "--table5: the longest work phase")
	f.Float64Var(&t5.Noise, "noise", 0.05, "--table5: noise of the work phases (standard deviation, relative)")
	f.Uint64Var(&t5.Seed, "seed", 1, "--table5: seed of the trace")
	return cmd
}

// verifyClairvoyant proves the reduce schedule built from pl (one element
// per segment) with the symbolic verifier.
func verifyClairvoyant(pl *algorithms.ClairvoyantPlan, a []float64) error {
	in, ok := algorithms.Lookup(schedule.Reduce, algorithms.Clairvoyant)
	if !ok {
		return fmt.Errorf("clairvoyant is not registered")
	}
	p := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: pl.P, Root: pl.Root, Count: pl.N},
		Commutative: true, ElemSize: 4, Segments: pl.N, Arrivals: a}
	return schedule.Verify(&p.Spec, in.Generator(p), schedule.Options{})
}

func writeClairvoyantText(w io.Writer, pl *algorithms.ClairvoyantPlan, verr error) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, "clairvoyant reduce: P=%d N=%d root=%d: R = %d rounds (balanced lower bound ⌈lg P⌉+N−1 = %d)\n",
		pl.P, pl.N, pl.Root, pl.Rounds, lgCeil(pl.P)+pl.N-1)
	for r := range pl.P {
		steps := pl.Steps(r)
		fmt.Fprintf(bw, "rank %d (from round %d):", r, pl.Start[r])
		for _, st := range steps {
			fmt.Fprintf(bw, " %d", st.Round)
			if m := st.Recv; m.Peer >= 0 {
				fmt.Fprintf(bw, " <%d:%d", m.Peer, m.Segment)
			}
			if m := st.Send; m.Peer >= 0 {
				fmt.Fprintf(bw, " >%d:%d", m.Peer, m.Segment)
			}
			bw.WriteString(";")
		}
		bw.WriteString("\n")
	}
	if verr != nil {
		fmt.Fprintf(bw, "verifier: FAILED: %v\n", verr)
	} else {
		fmt.Fprintln(bw, "verifier: every contribution reaches the root exactly once")
	}
}

func lgCeil(p int) int {
	n := 0
	for 1<<n < p {
		n++
	}
	return n
}

type cvStepJSON struct {
	Round int   `json:"round"`
	Send  []int `json:"send"`
	Recv  []int `json:"recv"`
}

func writeClairvoyantJSON(w io.Writer, pl *algorithms.ClairvoyantPlan, verr error) error {
	msg := func(m algorithms.ClairvoyantMsg) []int {
		if m.Peer < 0 {
			return nil
		}
		return []int{m.Peer, m.Segment}
	}
	ranks := make([][]cvStepJSON, pl.P)
	for r := range pl.P {
		steps := pl.Steps(r)
		ranks[r] = []cvStepJSON{}
		for _, st := range steps {
			ranks[r] = append(ranks[r], cvStepJSON{Round: st.Round, Send: msg(st.Send), Recv: msg(st.Recv)})
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(struct {
		P        int            `json:"p"`
		Segments int            `json:"segments"`
		Rounds   int            `json:"rounds"`
		Verified bool           `json:"verified"`
		Ranks    [][]cvStepJSON `json:"ranks"`
	}{pl.P, pl.N, pl.Rounds, verr == nil, ranks})
}

// writeClairvoyantSVG draws the plan: a row per rank, a column per round,
// the rounds before a rank's arrival shaded, a line per message from the
// sender's cell to the receiver's, labelled with the segment.
func writeClairvoyantSVG(w io.Writer, pl *algorithms.ClairvoyantPlan) error {
	if pl.P > schedule.MaxSVGRanks {
		return fmt.Errorf("%d ranks: the drawing holds at most %d", pl.P, schedule.MaxSVGRanks)
	}
	const cw, ch, left, top = 44, 22, 64, 28
	title := fmt.Sprintf("clairvoyant reduce, P=%d N=%d root=%d, R=%d rounds", pl.P, pl.N, pl.Root, pl.Rounds)
	// The image holds the title: 0.62 em a character bounds sans-serif text.
	width, height := max(left+cw*max(pl.Rounds, 1)+10, 8+int(6.2*float64(len(title)))), top+ch*pl.P+10
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="10">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<title>%s</title>`+"\n", title)
	fmt.Fprintf(bw, `<text x="4" y="14">%s</text>`+"\n", title)
	for k := range pl.Rounds {
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">%d</text>`+"\n", left+k*cw+cw/2, top-2, k)
	}
	for r := range pl.P {
		y := top + r*ch
		fmt.Fprintf(bw, `<text x="4" y="%d">rank %d</text>`+"\n", y+ch/2+3, r)
		for k := range pl.Rounds {
			fill := "#ffffff"
			if k < pl.Start[r] {
				fill = "#dddddd"
			}
			fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999999"/>`+"\n", left+k*cw, y, cw, ch, fill)
		}
	}
	for r := range pl.P {
		steps := pl.Steps(r)
		for _, st := range steps {
			m := st.Send
			if m.Peer < 0 {
				continue
			}
			x := left + st.Round*cw
			y1, y2 := top+r*ch+ch/2, top+m.Peer*ch+ch/2
			fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#3366cc"/>`+"\n", x+8, y1, x+cw-8, y2)
			fmt.Fprintf(bw, `<circle cx="%d" cy="%d" r="2.5" fill="#33aa33"/>`+"\n", x+cw-8, y2)
			fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#3366cc">%d</text>`+"\n", x+2, y1+3, m.Segment)
		}
	}
	bw.WriteString("</svg>\n")
	return nil
}

// clairvoyantSweep prints R for balanced arrivals over a range of P.
func clairvoyantSweep(w io.Writer, rng string) error {
	ps, err := parseNPs(rng, false)
	if err != nil {
		return fmt.Errorf("--sweep %q: %w", rng, err)
	}
	ns := []int{1, 2, 4, 7, 8, 16, 32, 64}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprint(bw, "P")
	for _, n := range ns {
		fmt.Fprintf(bw, "\tN=%d", n)
	}
	fmt.Fprintln(bw)
	for _, p := range ps {
		fmt.Fprint(bw, p)
		for _, n := range ns {
			pl, err := algorithms.GenerateClairvoyant(p, n, 0, nil)
			if err != nil {
				return err
			}
			mark := ""
			if pl.Rounds > lgCeil(p)+n-1 {
				mark = "*"
			}
			fmt.Fprintf(bw, "\t%d%s", pl.Rounds, mark)
		}
		fmt.Fprintln(bw)
	}
	return nil
}

// clairvoyantTable5 runs the predicted-arrivals experiment and prints the
// medians.
func clairvoyantTable5(cmd *cobra.Command, cfg bench.PredictedConfig) error {
	res, err := bench.RunPredicted(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "predicted arrivals: P=%d, %s per rank, N=%d, %d reductions per run, work up to %v (noise %.2g), arrivals shared every %d calls, median of %d runs\n",
		cfg.NP, fmtBytes(float64(cfg.Sizes[0])), cfg.Segments, cfg.Iterations, cfg.Work, cfg.Noise, cfg.ShareEvery, cfg.Reps)
	return bench.Write(w, "table", res.Rows)
}
