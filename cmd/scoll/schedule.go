package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
	"github.com/spf13/cobra"
)

func newScheduleCmd() *cobra.Command {
	var (
		w              workload.Workload
		op, size, form string
		params         string
		grid           string
		elem           int
		knobs          func() (algorithms.KnobValues, error)
	)
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Print an algorithm's schedule: text, JSON, LogGOPSim GOAL or an SVG timeline",
		Long: `schedule builds the schedule every rank runs for one collective call and prints
it: text (a line per round), json (per rank: rounds of operations on buffer
regions), goal (the GOAL text format of the LogGOPSim simulator) or svg (a
timeline with a row per rank and a line per message, under a title naming
the collective, algorithm, ranks and size and a legend; at most 256 ranks).

In GOAL a round's reductions are one "calc N": N = γ·bytes in nanoseconds,
the unit LogGOPSim reads, with γ from --params (stated in the file's first
line); copies are free, as in LogGP. LogGOPSim run with the same L, o, g and
G then charges what scoll model's loggp_s (the critical-path LogGP) does.
A barrier's messages are zero-byte sends and receives ("send 0b").

Sizes are per rank as in scoll bench: the buffer of bcast, reduce and
allreduce, each rank's block of the gathers and scatters, the block per pair
of alltoall. Elements are --elem bytes wide.`,
		Example: `  scoll schedule --algorithm ring --np 8
  scoll schedule --op allgather --algorithm ring --np 8
  scoll schedule --op allreduce --algorithm rabenseifner --np 6 --size 24 --format goal
  scoll schedule --op bcast --algorithm binomial --np 16 --format svg > bcast.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			coll, err := parseOp(op, nil)
			if err != nil {
				return err
			}
			if elem < 1 {
				return fmt.Errorf("--elem %d: want at least 1", elem)
			}
			bytes, err := parseSize("size", size)
			if err != nil {
				return err
			}
			if bytes%elem != 0 {
				return fmt.Errorf("--size %d: not a multiple of --elem %d", bytes, elem)
			}
			w.Coll = coll
			if w.Algorithm == "" {
				return fmt.Errorf("--algorithm: required (valid for %s: %s)", coll, algorithmNames(coll))
			}
			if err := checkAlgorithm(coll, w.Algorithm); err != nil {
				return err
			}
			if err := checkName("format", "format", strings.ToLower(form), []string{"text", "json", "goal", "svg"}); err != nil {
				return err
			}
			w.Bytes, w.Elem = bytes, elem
			if w.Knobs, err = knobs(); err != nil {
				return err
			}
			if w.Grid, err = parseGrid(grid); err != nil {
				return err
			}
			gen, err := w.Generator()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch strings.ToLower(form) {
			case "text":
				return writeScheduleText(out, w.Size, gen)
			case "json":
				return writeScheduleJSON(out, w.Size, w.ElemSize(), gen)
			case "goal":
				par, err := openParams(params)
				if err != nil {
					return err
				}
				return schedule.WriteGOAL(out, w.Size, w.ElemSize(), par.Gamma, gen)
			case "svg":
				title := fmt.Sprintf("%s %s: %d ranks, %s per rank", coll, w.Algorithm, w.Size, fmtBytes(float64(bytes)))
				if elem > 1 {
					title += fmt.Sprintf(" (%d-byte elements)", elem)
				}
				return schedule.WriteSVGTitle(out, w.Size, gen, title)
			}
			return nil // checkName above
		},
	}
	f := cmd.Flags()
	f.StringVar(&op, "op", defaultOp, "collective")
	f.StringVar(&w.Algorithm, "algorithm", "", "algorithm name (see scoll algorithms)")
	addNPFlag(f, &w.Size, 8, "number of ranks")
	f.StringVar(&size, "size", "8", "size per rank in bytes, like 8, 1.5K or 1MiB (also --sizes, with one size)")
	f.IntVar(&elem, "elem", 1, "element size in bytes")
	f.IntVar(&w.Root, "root", 0, "root rank of rooted collectives")
	knobs = knobFlags(f)
	f.StringVar(&form, "format", "text", "output: text, json, goal or svg")
	f.StringVar(&params, "params", "infiniband", "goal: machine parameters whose gamma prices reductions (a preset name or a JSON file, as in scoll model)")
	f.StringVar(&grid, "grid", "", "process grid of topology-aware algorithms, like 8x8x8 (default: as equal as possible in 3 dimensions)")
	return cmd
}

// parseGrid parses a process grid "AxBxC" ("" gives nil: the default).
func parseGrid(s string) ([]int, error) {
	if s == "" || s == "auto" {
		return nil, nil
	}
	var dims []int
	for _, f := range strings.Split(strings.ToLower(s), "x") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--grid %q: want dimensions like 8x8x8", s)
		}
		dims = append(dims, k)
	}
	return dims, nil
}

func algorithmNames(c schedule.Collective) string {
	var names []string
	for _, in := range algorithms.List(c) {
		names = append(names, in.Name)
	}
	return strings.Join(names, ", ")
}

// eachRank builds every rank's schedule in turn, holding one at a time.
func eachRank(size int, gen schedule.Generator, fn func(*schedule.Schedule) error) error {
	for r := range size {
		b := schedule.NewBuilder(r, size)
		gen(b)
		s, err := b.Schedule()
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

func writeScheduleText(w io.Writer, size int, gen schedule.Generator) error {
	bw := bufio.NewWriter(w)
	err := eachRank(size, gen, func(s *schedule.Schedule) error { return schedule.WriteText(bw, s) })
	if err != nil {
		return err
	}
	return bw.Flush()
}

// jsonOp is an operation in the JSON form of a schedule.
type jsonOp struct {
	Op      string      `json:"op"`
	Peer    *int        `json:"peer,omitempty"`
	Dst     *jsonRegion `json:"dst,omitempty"`
	Src     *jsonRegion `json:"src,omitempty"`
	SrcLeft bool        `json:"src_left,omitempty"`
	Bytes   int         `json:"bytes"`
}

type jsonRegion struct {
	Space string `json:"space"`
	Off   int    `json:"off"`
	Len   int    `json:"len"`
}

// writeScheduleJSON writes a JSON array with one object per rank, streamed
// rank by rank.
func writeScheduleJSON(w io.Writer, size, elem int, gen schedule.Generator) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	fmt.Fprint(bw, "[")
	first := true
	err := eachRank(size, gen, func(s *schedule.Schedule) error {
		if !first {
			fmt.Fprint(bw, ",")
		}
		first = false
		rounds := make([][]jsonOp, len(s.Rounds))
		for k, rd := range s.Rounds {
			rounds[k] = []jsonOp{}
			for _, o := range rd {
				j := jsonOp{Op: o.Kind.String(), SrcLeft: o.SrcLeft, Bytes: o.Len() * elem}
				if o.Kind.IsComm() {
					p := o.Peer
					j.Peer = &p
				}
				if o.Kind != schedule.OpSend {
					j.Dst = &jsonRegion{o.Dst.Space.String(), o.Dst.Off, o.Dst.Len}
				}
				if o.Kind != schedule.OpRecv {
					j.Src = &jsonRegion{o.Src.Space.String(), o.Src.Off, o.Src.Len}
				}
				rounds[k] = append(rounds[k], j)
			}
		}
		return enc.Encode(struct {
			Rank    int        `json:"rank"`
			Size    int        `json:"size"`
			Scratch int        `json:"scratch"`
			Rounds  [][]jsonOp `json:"rounds"`
		}{s.Rank, s.Size, s.Scratch, rounds})
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(bw, "]")
	return bw.Flush()
}
