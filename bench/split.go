package bench

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport/record"
)

// SplitConfig describes a communicator-split benchmark (scoll split).
type SplitConfig struct {
	// NP is the number of in-process ranks (ignored with World).
	NP int
	// World, when set, runs on this communicator's ranks (processes)
	// instead of in-process ranks; every rank must call RunSplit alike.
	World *scoll.Comm
	// Algorithms are the split algorithms to run (nil: all).
	Algorithms []string
	// Colors: "1" (one communicator), a number K (color = rank mod K) or
	// "unique" (every rank alone).
	Colors string
	// Keys: "random" (seeded), "same", "reverse" or "rank".
	Keys string
	// Seed seeds the random keys.
	Seed uint64
	// Sorters is cheng's number of sorting ranks (0: its default).
	Sorters int
	// Groups are the representations: "table", "distributed:P'" or
	// "auto" (nil: auto).
	Groups []string
	// Reps is the number of timed splits per configuration (0: 5).
	Reps int
	// MaxMemory skips configurations estimated to need more bytes over all
	// ranks (0: DefaultMaxMemory).
	MaxMemory int64
	// Progress, when set, is told of each repetition as it ends.
	Progress func(SplitProgress)
	// Row, when set, is given every result as soon as it is measured.
	Row func(SplitResult)
}

// SplitProgress reports a finished repetition.
type SplitProgress struct {
	Algorithm, Group string
	Rep, Reps        int
	Time             time.Duration
}

// SplitResult is one measured split configuration.
type SplitResult struct {
	NP        int    `json:"np"`
	Algorithm string `json:"algorithm"`
	Colors    string `json:"colors"`
	Keys      string `json:"keys"`
	Sorters   int    `json:"sorters"`
	Group     string `json:"group"`
	Reps      int    `json:"reps"`
	// MedianMs, MinMs and MaxMs summarise the repetitions; each
	// repetition's time is the slowest rank's time of its Split call.
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	MaxMs    float64 `json:"max_ms"`
	// GroupBytes is the memory of the new communicators' membership per
	// rank: the mean and the largest.
	GroupBytesMean float64 `json:"group_bytes_mean"`
	GroupBytesMax  int     `json:"group_bytes_max"`
	// Messages and Bytes are what all ranks sent in one split.
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// Phases are the slowest rank's time per phase, in ms (last
	// repetition).
	Phases []SplitPhase `json:"phases"`
	// Checksum identifies the result (members, order, ranks): equal for
	// every algorithm and representation on the same colors and keys.
	Checksum string `json:"checksum"`
}

// SplitPhase is a phase's time in a SplitResult.
type SplitPhase struct {
	Name string  `json:"name"`
	Ms   float64 `json:"ms"`
}

// SplitReport is the outcome of RunSplit.
type SplitReport struct {
	Results []SplitResult
	Skipped []Skip
}

// SplitColors and SplitKeys list the patterns RunSplit accepts.
func SplitColors() []string { return []string{"1", "K (a number)", "unique"} }

// SplitKeys lists the key patterns.
func SplitKeys() []string { return []string{"random", "same", "reverse", "rank"} }

// colorOf returns rank r's color under pattern pat.
func colorOf(pat string, r int) (int, error) {
	switch pat {
	case "", "1":
		return 0, nil
	case "unique":
		return r, nil
	}
	k, err := strconv.Atoi(pat)
	if err != nil || k < 1 {
		return 0, fmt.Errorf("%w: colors %q: want 1, a number of colors or unique", ErrConfig, pat)
	}
	return r % k, nil
}

// keysOf returns every rank's key under pattern pat.
func keysOf(pat string, n int, seed uint64) ([]int, error) {
	keys := make([]int, n)
	rng := rand.New(rand.NewPCG(seed, 0x5c011))
	for r := range keys {
		switch pat {
		case "", "random":
			keys[r] = int(rng.Int64N(1 << 40))
		case "same":
		case "reverse":
			keys[r] = n - r
		case "rank":
			keys[r] = r
		default:
			return nil, fmt.Errorf("%w: keys %q (have %s)", ErrConfig, pat, strings.Join(SplitKeys(), ", "))
		}
	}
	return keys, nil
}

// parseGroup returns the WithDistributedGroup argument of a group name.
func parseGroup(g string) (int, error) {
	switch g {
	case "", "auto":
		return 0, nil
	case "table":
		return 1, nil
	}
	if s, ok := strings.CutPrefix(g, "distributed:"); ok {
		p, err := strconv.Atoi(s)
		if err == nil && p >= 2 {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: group %q: want table, distributed:P' (P' ≥ 2) or auto", ErrConfig, g)
}

// splitMemory estimates the bytes a split needs over all n ranks (the
// largest transient state), for the memory guard.
func splitMemory(alg string, n, colors, group int) int64 {
	m := int64(n / max(colors, 1)) // members per communicator
	N := int64(n)
	table := 4 * m * N // replicated tables
	if group > 1 {
		table = 4 * N * (m/int64(group) + int64(group) + 64)
	}
	switch alg {
	case "allgather", "merge":
		return 2*24*N*N + table
	case "cheng":
		if group > 1 {
			return 64*N*int64(group) + table
		}
		return 2*12*N*N + table
	}
	return 24 * N * N
}

// RunSplit measures Split for every algorithm and representation of cfg.
func RunSplit(ctx context.Context, cfg SplitConfig) (*SplitReport, error) {
	n := cfg.NP
	if cfg.World != nil {
		n = cfg.World.Size()
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: np %d < 1", ErrConfig, n)
	}
	if cfg.Reps == 0 {
		cfg.Reps = 5
	}
	if cfg.Reps < 1 {
		return nil, fmt.Errorf("%w: %d repetitions", ErrConfig, cfg.Reps)
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	algs := cfg.Algorithms
	known := map[string]bool{}
	for _, a := range scoll.SplitAlgorithms() {
		known[a.Name] = true
		if len(cfg.Algorithms) == 0 {
			algs = append(algs, a.Name)
		}
	}
	for _, a := range algs {
		if !known[a] {
			return nil, fmt.Errorf("%w: unknown split algorithm %q", ErrConfig, a)
		}
	}
	groups := cfg.Groups
	if len(groups) == 0 {
		groups = []string{"auto"}
	}
	if _, err := colorOf(cfg.Colors, 0); err != nil {
		return nil, err
	}
	keys, err := keysOf(cfg.Keys, n, cfg.Seed)
	if err != nil {
		return nil, err
	}
	ncolors := 1
	switch cfg.Colors {
	case "unique":
		ncolors = n
	case "", "1":
	default:
		ncolors, _ = strconv.Atoi(cfg.Colors)
	}
	rep := &SplitReport{}
	for _, alg := range algs {
		for _, g := range groups {
			gs, err := parseGroup(g)
			if err != nil {
				return nil, err
			}
			eff := gs
			if eff == 0 {
				eff = split.DefaultGroupSize(n)
			}
			if mem := splitMemory(alg, n, ncolors, eff); cfg.MaxMemory > 0 && mem > cfg.MaxMemory {
				rep.Skipped = append(rep.Skipped, Skip{Algorithm: alg + "/" + g, Bytes: -1,
					Reason: fmt.Sprintf("needs about %s over %d ranks, more than the limit of %s", FormatSize(int(mem)), n, FormatSize(int(cfg.MaxMemory)))})
				continue
			}
			res, err := measureSplit(ctx, &cfg, n, alg, g, gs, keys)
			if err != nil {
				return rep, fmt.Errorf("split %s/%s np=%d: %w", alg, g, n, err)
			}
			rep.Results = append(rep.Results, res)
			if cfg.Row != nil {
				cfg.Row(res)
			}
		}
	}
	return rep, nil
}

// measureSplit runs one configuration: Reps timed splits on every rank.
func measureSplit(ctx context.Context, cfg *SplitConfig, n int, alg, group string, gs int, keys []int) (SplitResult, error) {
	res := SplitResult{NP: n, Algorithm: alg, Colors: cfg.Colors, Keys: cfg.Keys, Sorters: cfg.Sorters, Group: group, Reps: cfg.Reps}
	if res.Colors == "" {
		res.Colors = "1"
	}
	if res.Keys == "" {
		res.Keys = "random"
	}
	times := make([]float64, cfg.Reps)
	body := func(ctx context.Context, c *scoll.Comm) error {
		color, _ := colorOf(cfg.Colors, c.Rank())
		opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg), scoll.WithDistributedGroup(gs)}
		if cfg.Sorters > 0 {
			opts = append(opts, scoll.WithSorters(min(cfg.Sorters, n)))
		}
		var st scoll.SplitStats
		opts = append(opts, scoll.WithSplitStats(&st))
		for rep := range cfg.Reps {
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			t0 := time.Now()
			sub, err := c.Split(ctx, color, keys[c.Rank()], opts...)
			el := time.Since(t0)
			if err != nil {
				return err
			}
			worst, err := agreeMax(ctx, c, el.Seconds())
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				times[rep] = worst * 1e3
				if cfg.Progress != nil {
					cfg.Progress(SplitProgress{Algorithm: alg, Group: group, Rep: rep + 1, Reps: cfg.Reps, Time: time.Duration(worst * 1e9)})
				}
			}
			if rep == cfg.Reps-1 {
				if err := splitStats(ctx, c, sub, &st, &res); err != nil {
					return err
				}
			}
			if sub != nil {
				sub.Close()
			}
		}
		return nil
	}
	var err error
	if cfg.World != nil {
		err = body(ctx, cfg.World)
	} else {
		err = scoll.Run(ctx, n, body)
	}
	if err != nil {
		return res, err
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	res.MedianMs, res.MinMs, res.MaxMs = median(sorted), sorted[0], sorted[len(sorted)-1]
	return res, nil
}

// RecordSplit runs one split of cfg's first algorithm and group on
// cfg.NP in-process ranks with the recorder rec attached (scoll.WithRecorder)
// and nothing else: the trace holds the split's messages only (with the
// collectives that agree on options and context id).
func RecordSplit(ctx context.Context, cfg SplitConfig, rec *record.Recorder) error {
	if cfg.NP < 1 || cfg.World != nil {
		return fmt.Errorf("%w: recording needs in-process ranks (np ≥ 1, no world)", ErrConfig)
	}
	alg := "merge"
	if len(cfg.Algorithms) > 0 {
		alg = cfg.Algorithms[0]
	}
	g := "auto"
	if len(cfg.Groups) > 0 {
		g = cfg.Groups[0]
	}
	gs, err := parseGroup(g)
	if err != nil {
		return err
	}
	keys, err := keysOf(cfg.Keys, cfg.NP, cfg.Seed)
	if err != nil {
		return err
	}
	if _, err := colorOf(cfg.Colors, 0); err != nil {
		return err
	}
	return scoll.Run(ctx, cfg.NP, func(ctx context.Context, c *scoll.Comm) error {
		color, _ := colorOf(cfg.Colors, c.Rank())
		opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg), scoll.WithDistributedGroup(gs)}
		if cfg.Sorters > 0 {
			opts = append(opts, scoll.WithSorters(min(cfg.Sorters, cfg.NP)))
		}
		sub, err := c.Split(ctx, color, keys[c.Rank()], opts...)
		if sub != nil {
			sub.Close()
		}
		return err
	}, scoll.WithRecorder(rec))
}

// median returns the median of sorted values.
func median(s []float64) float64 {
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// splitStats reduces one rank's statistics of a split over c into res (on
// rank 0): sums of messages, bytes and checksums, group memory, phases.
func splitStats(ctx context.Context, c, sub *scoll.Comm, st *scoll.SplitStats, res *SplitResult) error {
	var sum uint64
	if sub != nil {
		lead, err := sub.TranslateRanks([]int{0}, c)
		if err != nil {
			return err
		}
		me, err := c.TranslateRanks([]int{c.Rank()}, c)
		if err != nil {
			return err
		}
		h := uint64(14695981039346656037)
		for _, x := range []int{me[0], sub.Rank(), sub.Size(), lead[0]} {
			h = (h ^ uint64(x)) * 1099511628211
		}
		sum = h
	}
	sums := []uint64{sum, uint64(st.Messages), uint64(st.Bytes), uint64(st.GroupBytes)}
	if err := scoll.Allreduce(ctx, c, nil, sums, scoll.Sum); err != nil {
		return err
	}
	// Phases by name: a rank that skipped one (not a sorter) counts 0.
	var names []string
	for _, a := range scoll.SplitAlgorithms() {
		if a.Name == st.Algorithm {
			names = a.Phases
		}
	}
	maxes := make([]float64, 1+len(names))
	maxes[0] = float64(st.GroupBytes)
	for _, p := range st.Phases {
		if i := slices.Index(names, p.Name); i >= 0 {
			maxes[1+i] += p.Time.Seconds() * 1e3
		}
	}
	if err := scoll.Allreduce(ctx, c, nil, maxes, scoll.Max); err != nil {
		return err
	}
	if c.Rank() == 0 {
		res.Checksum = fmt.Sprintf("%016x", sums[0])
		res.Messages, res.Bytes = int64(sums[1]), int64(sums[2])
		res.GroupBytesMean = float64(sums[3]) / float64(c.Size())
		res.GroupBytesMax = int(maxes[0])
		res.Phases = nil
		for i, ms := range maxes[1:] {
			if ms > 0 {
				res.Phases = append(res.Phases, SplitPhase{Name: names[i], Ms: ms})
			}
		}
	}
	return nil
}

// WriteSplit writes split results in format "table", "csv" or "json".
func WriteSplit(w io.Writer, format string, results []SplitResult) error {
	switch strings.ToLower(format) {
	case "table", "":
		return WriteSplitTable(w, results)
	case "csv":
		return WriteSplitCSV(w, results, true)
	case "json":
		if results == nil {
			results = []SplitResult{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return fmt.Errorf("%w: unknown format %q (have %s)", ErrConfig, format, strings.Join(Formats(), ", "))
}

var splitColumns = []string{"np", "algorithm", "colors", "keys", "sorters", "group", "reps", "median_ms", "min_ms", "max_ms", "group_bytes_mean", "group_bytes_max", "messages", "bytes", "checksum", "phases"}

func splitFields(r SplitResult) []string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	var ph []string
	for _, p := range r.Phases {
		ph = append(ph, p.Name+"="+f(p.Ms, 3))
	}
	return []string{strconv.Itoa(r.NP), r.Algorithm, r.Colors, r.Keys, strconv.Itoa(r.Sorters), r.Group, strconv.Itoa(r.Reps),
		f(r.MedianMs, 3), f(r.MinMs, 3), f(r.MaxMs, 3), f(r.GroupBytesMean, 1), strconv.Itoa(r.GroupBytesMax),
		strconv.FormatInt(r.Messages, 10), strconv.FormatInt(r.Bytes, 10), r.Checksum, strings.Join(ph, " ")}
}

// WriteSplitCSV writes the results as CSV, with a header line if header.
func WriteSplitCSV(w io.Writer, results []SplitResult, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write(splitColumns); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := cw.Write(splitFields(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSplitTable writes the results as an aligned table.
func WriteSplitTable(w io.Writer, results []SplitResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "np\talgorithm\tgroup\tcolors\tkeys\tmedian ms\tmin ms\tmax ms\tgroup B/rank\tmax B\tmessages\tbytes\tchecksum\tphases (ms, slowest rank)")
	for _, r := range results {
		f := splitFields(r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%d\t%d\t%s\t%s\t%s\n", f[0], f[1], f[5], f[2], f[3], f[7], f[8], f[9],
			r.GroupBytesMean, r.GroupBytesMax, r.Messages, FormatSize(int(r.Bytes)), r.Checksum, f[15])
	}
	return tw.Flush()
}
