package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/scoll/scoll/internal/human"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport/record"
)

// SmallGroups is the number of colors of the "small" (few groups) color
// pattern. Moody et al. (2011, sec. 4) contrast "many groups", a number of
// groups on the order of the number of processes, with a "small" number
// "independent of the number of processes" without giving it; 16 is such
// a number (and as many as the hash algorithms' bins).
const SmallGroups = 16

// KeyBytes is the length of the keys SplitBytes is given: 8-byte integer
// keys, as Moody et al. used (split.IntBytes, ordered as the integers).
const KeyBytes = 8

// SplitConfig describes a communicator-split benchmark (scoll split).
//
// Of Common, RunSplit takes NP (required), World (every rank calls
// RunSplit alike), Algorithms (nil: every split algorithm), Reps (timed
// splits per configuration; 0: 5), Seed (of the random keys), MaxMemory,
// Progress (before each repetition) and OnSkip (the configurations the
// memory guard skips, which are rows too).
type SplitConfig struct {
	Common
	// Colors: "1" (one communicator), a number K (color = rank mod K),
	// "unique" or "N" (every rank alone: Moody's many groups, one per
	// rank) or "small" (SmallGroups colors, rank mod SmallGroups: Moody's
	// few groups).
	Colors string
	// Keys: "random" (seeded), "same", "reverse" or "rank".
	Keys string
	// Sorters is cheng's number of sorting ranks (0: its default). Only
	// the algorithm called cheng takes it (cheng-M sets its own).
	Sorters int
	// Groups are the representations: "table", "distributed:P'" or
	// "auto" (nil: auto).
	Groups []string
	// Bytes runs SplitBytes instead of Split: colors and keys are byte
	// strings, 8-byte integer encodings (split.IntBytes) unless ColorLen
	// is set. The integer-only algorithms refuse them (skipped rows).
	Bytes bool
	// ColorLen, when positive, makes colors strings of ColorLen bytes:
	// the color's number in base 36 (0-9a-z, so that the strings order as
	// the numbers), padded with '0' on the left. It implies Bytes.
	ColorLen int
	// NoReorder (scoll.WithoutReorder) keeps the parent's order: keys
	// are ignored. NoSplit (scoll.WithoutSplit) makes one communicator of
	// every rank: colors are ignored.
	NoReorder, NoSplit bool
	// Chain (scoll.WithChainGroup) keeps the result as a chain, O(1)
	// memory per rank, as Moody et al.'s algorithms produce it.
	Chain bool
	// Variant labels the results (the figure modes name their panels and
	// lines with it).
	Variant string
	// Peak adds one untimed split per configuration, before the timed
	// ones, whose peak live memory is measured (SplitResult.PeakBytesPerRank),
	// with the garbage collector running every PeakGCPercent of heap
	// growth (0: the constant PeakGCPercent).
	Peak          bool
	PeakGCPercent int
	// OnRow, when set, is given every result as soon as it is measured
	// (or skipped).
	OnRow func(SplitResult)
}

// SplitResult is one measured (or skipped) split configuration.
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
	// every algorithm and representation on the same colors and keys, and
	// for Split and SplitBytes on the same partition and order.
	Checksum string `json:"checksum"`

	// Variant is SplitConfig.Variant.
	Variant string `json:"variant,omitempty"`
	// ByteItems says SplitBytes ran; ColorLen is the length of its string
	// colors (0: 8-byte integer encodings).
	ByteItems bool `json:"bytes_items"`
	ColorLen  int  `json:"color_len"`
	// Reorder and Split are false under WithoutReorder and WithoutSplit;
	// Chain is WithChainGroup.
	Reorder bool `json:"reorder"`
	Split   bool `json:"split"`
	Chain   bool `json:"chain"`
	// AllocBytesPerRank is measured: the bytes the Go heap allocated
	// during one split (runtime.MemStats.TotalAlloc before and after; the
	// median over the repetitions less the median of the same window
	// around no split), over all ranks, divided by np. Garbage counts too, so it bounds the split's
	// transient memory per rank from above, resulting group included; it
	// is not a peak. With World every rank reads its own process's heap.
	AllocBytesPerRank float64 `json:"alloc_bytes_per_rank"`
	// PeakBytesPerRank is measured with SplitConfig.Peak: the largest live
	// memory (heap found live by the garbage collector, running every
	// SplitConfig.PeakGCPercent of growth, plus goroutine stacks; sampled every
	// millisecond) during one split, less the live memory before it, over
	// all ranks, divided by np: the split's transient state at its peak
	// with the new group. PeakResolutionPerRank is its uncertainty
	// (that percentage of the live memory before the split, over np). With
	// World every rank measures its own process.
	PeakBytesPerRank      float64 `json:"peak_bytes_per_rank,omitempty"`
	PeakResolutionPerRank float64 `json:"peak_resolution_per_rank,omitempty"`
	// EstBytesPerRank is the memory guard's formula (not a measurement):
	// the split's estimated largest state over all ranks, divided by np.
	EstBytesPerRank float64 `json:"est_bytes_per_rank"`
	// Skipped, when not empty, says why the configuration was not
	// measured (the algorithm refused it, or the memory guard); the
	// measurements are then zero.
	Skipped string `json:"skipped,omitempty"`
}

// SplitPhase is a phase's time in a SplitResult.
type SplitPhase struct {
	Name string  `json:"name"`
	Ms   float64 `json:"ms"`
}

// MeasuredSplits returns the rows that were measured (not skipped).
func MeasuredSplits(rows []SplitResult) []SplitResult {
	var out []SplitResult
	for _, x := range rows {
		if x.Skipped == "" {
			out = append(out, x)
		}
	}
	return out
}

// SplitColors and SplitKeys list the patterns RunSplit accepts.
func SplitColors() []string {
	return []string{"1", "K (a number)", "unique", "N (= unique)", "small (" + strconv.Itoa(SmallGroups) + ")"}
}

// SplitKeys lists the key patterns.
func SplitKeys() []string { return []string{"random", "same", "reverse", "rank"} }

// numColors returns the number of colors of pattern pat on n ranks.
func numColors(pat string, n int) (int, error) {
	switch strings.ToLower(pat) {
	case "", "1":
		return 1, nil
	case "unique", "n", "many":
		return n, nil
	case "small", "few":
		return SmallGroups, nil
	}
	k, err := strconv.Atoi(pat)
	if err != nil || k < 1 {
		return 0, fmt.Errorf("%w: colors %q: want 1, a number of colors, unique (N) or small", ErrConfig, pat)
	}
	return k, nil
}

// colorOf returns rank r's color under pattern pat on n ranks: rank r
// mod the number of colors.
func colorOf(pat string, r, n int) (int, error) {
	k, err := numColors(pat, n)
	if err != nil {
		return 0, err
	}
	return r % k, nil
}

// colorName returns color c as a string color of length l: c in base 36,
// padded with '0' on the left (strings of equal length order as the
// numbers).
func colorName(c, l int) ([]byte, error) {
	s := strconv.FormatInt(int64(c), 36)
	if len(s) > l {
		return nil, fmt.Errorf("%w: color-len %d cannot name color %d (%d base-36 digits)", ErrConfig, l, c, len(s))
	}
	b := make([]byte, l)
	for i := range b {
		b[i] = '0'
	}
	copy(b[l-len(s):], s)
	return b, nil
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

// bytesMode says whether cfg runs SplitBytes.
func (cfg *SplitConfig) bytesMode() bool { return cfg.Bytes || cfg.ColorLen > 0 }

// itemBytes is the size of one rank's item on the wire: color, key, rank
// and address.
func (cfg *SplitConfig) itemBytes() int {
	c := 8
	if cfg.ColorLen > 0 {
		c = cfg.ColorLen
	}
	if cfg.NoSplit && !cfg.bytesMode() {
		c = 8
	}
	return c + KeyBytes + 8
}

// chainAlgorithms make their result as a chain directly (no table built
// and cut down).
var chainAlgorithms = []string{"bitonic", "hash", "hash64", "radix", "gather-scatter"}

// splitMemory estimates the bytes a split needs over all n ranks at its
// largest, for the memory guard (EstBytesPerRank is it over n). m is the
// members of the largest new communicator, group the representation's P'
// (1: replicated tables), item the bytes of one item on the wire, chain
// whether the result is kept as a chain. The formulas are the algorithms'
// asymptotic state with rough constants:
//
//	allgather, merge   every rank holds all n entries, twice: 48·n²
//	allgather-chain    every rank holds all n items, encoded and decoded:
//	                   2·n·(item+40) per rank
//	cheng, cheng-M     the sorters' pieces and the replicated tables of
//	                   the result (or Sack's distributed ones; with a
//	                   chain, the links posted to each rank: O(n) in all)
//	gather-scatter     rank o holds its binomial subtree: n lg n / 2 items
//	bitonic, hash,     a few items and the lg n partners per rank
//	hash64, radix
//
// plus the resulting representation: 4 bytes per member per rank for a
// table, about n/P' + P' for a distributed one, 64 bytes for a chain made
// directly (the others build their table first).
func splitMemory(alg string, n, m, group, item int, chain bool) int64 {
	N, M, I := int64(n), int64(m), int64(item)
	lg := int64(bits.Len(uint(n)))
	table := 4 * M * N // replicated tables
	if group > 1 {
		table = 4 * N * (M/int64(group) + int64(group) + 64)
	}
	if slices.Contains(chainAlgorithms, alg) && (chain || group > 1) {
		table = 64 * N
	}
	switch {
	case alg == "allgather" || alg == "merge":
		return 2*24*N*N + table
	case alg == "allgather-chain":
		return 2*N*N*(I+40) + table
	case alg == "cheng" || strings.HasPrefix(alg, "cheng-"):
		if chain {
			// The sorters' pieces, the links posted to every rank.
			return 128*N + 64*N
		}
		if group > 1 {
			return 64*N*int64(group) + table
		}
		return 2*12*N*N + table
	case alg == "gather-scatter":
		return N*(lg+4)*(I+48)/2 + 2*N*(I+48) + table
	case slices.Contains(chainAlgorithms, alg):
		return N*(lg+4)*(I+48) + 1024*N + table
	}
	return 24*N*N + table
}

// prepare normalises cfg for harness (Common: NP, Algorithms, Reps, Seed,
// MaxMemory and the fields of also) and checks the rest: it returns the algorithms
// (nil: every one) and representations (nil: auto) to run, every rank's
// key and the members of the largest new communicator.
func (cfg *SplitConfig) prepare(harness string, also uint) (algs, groups []string, keys []int, members int, err error) {
	err = cfg.Common.normalize(defaults{harness: harness, reps: 5,
		takes: also | takesNP | takesAlgorithms | takesReps | takesSeed | takesMaxMemory})
	if err != nil {
		return nil, nil, nil, 0, err
	}
	n := cfg.NP
	algs = cfg.Algorithms
	if len(algs) == 0 {
		algs = splitNames()
	}
	for _, a := range algs {
		if _, ok := split.Lookup(a); !ok {
			return nil, nil, nil, 0, fmt.Errorf("%w: unknown split algorithm %q", ErrConfig, a)
		}
	}
	groups = cfg.Groups
	if len(groups) == 0 {
		groups = []string{"auto"}
	}
	for _, g := range groups {
		if _, err := parseGroup(g); err != nil {
			return nil, nil, nil, 0, err
		}
	}
	ncolors, err := numColors(cfg.Colors, n)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if cfg.ColorLen < 0 {
		return nil, nil, nil, 0, fmt.Errorf("%w: color-len %d", ErrConfig, cfg.ColorLen)
	}
	if cfg.ColorLen > 0 {
		if _, err := colorName(min(ncolors, n)-1, cfg.ColorLen); err != nil {
			return nil, nil, nil, 0, err
		}
	}
	if keys, err = keysOf(cfg.Keys, n, cfg.Seed); err != nil {
		return nil, nil, nil, 0, err
	}
	members = (n + ncolors - 1) / ncolors // of the largest communicator
	if cfg.NoSplit {
		members = n
	}
	return algs, groups, keys, members, nil
}

// RunSplit measures Split (SplitBytes with Bytes or ColorLen) for every
// algorithm and representation of cfg. Configurations an algorithm
// refuses (scoll.ErrUnsupported) and those the memory guard skips are
// results with Skipped set, not errors.
func RunSplit(ctx context.Context, cfg SplitConfig) (*Results[SplitResult], error) {
	algs, groups, keys, members, err := cfg.prepare("bench.RunSplit", takesWorld)
	if err != nil {
		return nil, err
	}
	n := cfg.NP
	rep := &Results[SplitResult]{}
	emit := func(r SplitResult) { add(rep, cfg.OnRow, r) }
	total := len(algs) * len(groups) * cfg.Reps
	for k, alg := range algs {
		for l, g := range groups {
			gs, _ := parseGroup(g)
			res := cfg.result(n, alg, g)
			eff := gs
			if eff == 0 {
				eff = split.DefaultGroupSize(n)
			}
			mem := splitMemory(alg, n, members, eff, cfg.itemBytes(), cfg.Chain)
			res.EstBytesPerRank = float64(mem) / float64(n)
			if err := split.Refusal(alg, cfg.options(alg, gs, n)); err != nil {
				res.Skipped = "refused: " + err.Error()
				emit(res)
				continue
			}
			if cfg.MaxMemory > 0 && mem > cfg.MaxMemory {
				s := Skip{Algorithm: alg + "/" + g, Bytes: -1,
					Reason: fmt.Sprintf("needs about %s over %d ranks, more than the limit of %s", FormatSize(int(mem)), n, FormatSize(int(cfg.MaxMemory)))}
				skip(&cfg.Common, rep, s)
				res.Skipped = "memory: " + s.Reason
				emit(res)
				continue
			}
			steps := func(rep int, last time.Duration) {
				what := alg + "/" + g
				if cfg.Variant != "" {
					what += " " + cfg.Variant
				}
				what += fmt.Sprintf(", repetition %d of %d", rep+1, cfg.Reps)
				if rep > 0 {
					what += fmt.Sprintf(" (repetition %d: %v)", rep, last.Round(100*time.Microsecond))
				}
				cfg.step((k*len(groups)+l)*cfg.Reps+rep, total, "%s", what)
			}
			err := measureSplit(ctx, &cfg, n, gs, keys, &res, steps)
			if errors.Is(err, scoll.ErrUnsupported) {
				res.Skipped = "refused: " + err.Error()
				emit(res)
				continue
			}
			if err != nil {
				return rep, fmt.Errorf("split %s/%s np=%d: %w", alg, g, n, err)
			}
			emit(res)
		}
	}
	cfg.ended(total)
	return rep, nil
}

// result returns the description of one configuration, unmeasured.
func (cfg *SplitConfig) result(n int, alg, group string) SplitResult {
	res := SplitResult{NP: n, Algorithm: alg, Colors: cfg.Colors, Keys: cfg.Keys, Group: group, Reps: cfg.Reps,
		Variant: cfg.Variant, ByteItems: cfg.bytesMode(), ColorLen: cfg.ColorLen,
		Reorder: !cfg.NoReorder, Split: !cfg.NoSplit, Chain: cfg.Chain}
	if alg == "cheng" {
		res.Sorters = cfg.Sorters
	}
	if res.Colors == "" {
		res.Colors = "1"
	}
	if res.Keys == "" {
		res.Keys = "random"
	}
	return res
}

// options returns the split.Options the root package derives from cfg's
// call of algorithm alg (to ask split.Refusal before running).
func (cfg *SplitConfig) options(alg string, gs, n int) *split.Options {
	o := &split.Options{Algorithm: alg, GroupSize: gs, NoReorder: cfg.NoReorder, NoSplit: cfg.NoSplit, Chain: cfg.Chain, Ints: !cfg.bytesMode()}
	if alg == "cheng" && cfg.Sorters > 0 {
		o.Sorters = min(cfg.Sorters, n)
	}
	return o
}

// splitCall returns what every rank calls: Split, or SplitBytes with
// string or 8-byte colors and 8-byte keys, with cfg's options and extra.
func (cfg *SplitConfig) splitCall(n int, alg string, gs int, keys []int) func(ctx context.Context, c *scoll.Comm, extra ...scoll.SplitOption) (*scoll.Comm, error) {
	opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg), scoll.WithDistributedGroup(gs)}
	if alg == "cheng" && cfg.Sorters > 0 {
		opts = append(opts, scoll.WithSorters(min(cfg.Sorters, n)))
	}
	if cfg.NoReorder {
		opts = append(opts, scoll.WithoutReorder())
	}
	if cfg.NoSplit {
		opts = append(opts, scoll.WithoutSplit())
	}
	if cfg.Chain {
		opts = append(opts, scoll.WithChainGroup())
	}
	return func(ctx context.Context, c *scoll.Comm, extra ...scoll.SplitOption) (*scoll.Comm, error) {
		r := c.Rank()
		color, err := colorOf(cfg.Colors, r, n)
		if err != nil {
			return nil, err
		}
		all := append(slices.Clip(opts), extra...)
		if !cfg.bytesMode() {
			return c.Split(ctx, color, keys[r], all...)
		}
		cb := split.IntBytes(int64(color))
		if cfg.ColorLen > 0 {
			if cb, err = colorName(color, cfg.ColorLen); err != nil {
				return nil, err
			}
		}
		return c.SplitBytes(ctx, cb, split.IntBytes(int64(keys[r])), all...)
	}
}

// allocMeter reads how many bytes the Go heap has allocated so far: with
// in-process ranks (one heap) on rank 0 only, with World on every rank.
type allocMeter struct{ on bool }

func (m allocMeter) read() uint64 {
	if !m.on {
		return 0
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// measureSplit runs one configuration into res: Reps timed splits on
// every rank, each also measured for the heap bytes it allocates (the
// median over the repetitions, less the median of the same window around
// no split). Rank 0 calls step before each repetition, with the time of
// the one before.
func measureSplit(ctx context.Context, cfg *SplitConfig, n, gs int, keys []int, res *SplitResult, step func(rep int, last time.Duration)) error {
	alg := res.Algorithm
	call := cfg.splitCall(n, alg, gs, keys)
	times := make([]float64, cfg.Reps)
	body := func(ctx context.Context, c *scoll.Comm) error {
		var st scoll.SplitStats
		meter := allocMeter{on: cfg.World != nil || c.Rank() == 0}
		// window measures what the heap allocates around f, bracketed
		// by barriers as the measured split is.
		window := func(f func() error) (uint64, error) {
			if err := c.Barrier(ctx); err != nil {
				return 0, err
			}
			a0 := meter.read()
			if err := f(); err != nil {
				return 0, err
			}
			return meter.read() - a0, nil
		}
		// noSplit is the window of a split without one: the harness's own
		// allocations, subtracted below. Its first run warms the
		// collectives up (hundreds of KB at first use) and is not counted.
		noSplit := func() (uint64, error) {
			return window(func() error {
				if err := c.Barrier(ctx); err != nil {
					return err
				}
				_, err := agreeMax(ctx, c, 0)
				return err
			})
		}
		if _, err := noSplit(); err != nil {
			return err
		}
		var peak [2]uint64
		if cfg.Peak {
			var err error
			gc := cfg.PeakGCPercent
			if gc <= 0 {
				gc = PeakGCPercent
			}
			if peak, err = peakSplit(ctx, c, meter.on, gc, call); err != nil {
				return err
			}
		}
		allocs, harness := make([]float64, cfg.Reps), make([]float64, cfg.Reps)
		for rep := range cfg.Reps {
			if c.Rank() == 0 {
				step(rep, time.Duration(times[max(rep-1, 0)]*1e6))
			}
			h, err := noSplit()
			if err != nil {
				return err
			}
			var sub *scoll.Comm
			var worst float64
			a, err := window(func() error {
				if err := c.Barrier(ctx); err != nil {
					return err
				}
				t0 := time.Now()
				var err error
				sub, err = call(ctx, c, scoll.WithSplitStats(&st))
				el := time.Since(t0)
				if err != nil {
					return err
				}
				worst, err = agreeMax(ctx, c, el.Seconds())
				return err
			})
			if err != nil {
				return err
			}
			allocs[rep], harness[rep] = float64(a), float64(h)
			if c.Rank() == 0 {
				times[rep] = worst * 1e3
			}
			if rep == cfg.Reps-1 {
				if err := splitStats(ctx, c, sub, &st, res, int64(Median(allocs)-Median(harness)), peak); err != nil {
					return err
				}
			}
			if sub != nil {
				sub.Close()
			}
		}
		return nil
	}
	if err := cfg.run(ctx, body); err != nil {
		return err
	}
	res.MedianMs, res.MinMs, res.MaxMs = Median(times), slices.Min(times), slices.Max(times)
	return nil
}

// RecordSplit runs one split of cfg's first algorithm and group (with
// cfg's colors, keys, Bytes, ColorLen, NoReorder, NoSplit and Chain) on
// cfg.NP in-process ranks with the recorder rec attached
// (scoll.WithRecorder) and nothing else: the trace holds the split's
// messages only (with the collectives that agree on options and context
// id). It takes RunSplit's configuration but World (the default algorithm
// is merge); Reps and MaxMemory do not apply to its one split.
func RecordSplit(ctx context.Context, cfg SplitConfig, rec *record.Recorder) error {
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = []string{"merge"}
	}
	algs, groups, keys, _, err := cfg.prepare("bench.RecordSplit", 0)
	if err != nil {
		return err
	}
	alg, g := algs[0], groups[0]
	gs, _ := parseGroup(g)
	if err := split.Refusal(alg, cfg.options(alg, gs, cfg.NP)); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	call := cfg.splitCall(cfg.NP, alg, gs, keys)
	return cfg.run(ctx, func(ctx context.Context, c *scoll.Comm) error {
		sub, err := call(ctx, c)
		if sub != nil {
			sub.Close()
		}
		return err
	}, scoll.WithRecorder(rec))
}

// splitStats reduces one rank's statistics of a split over c into res (on
// rank 0): sums of messages, bytes, checksums and allocated bytes (alloc,
// this rank's heap reading: 0 where another rank reads the shared heap),
// group memory, phases.
func splitStats(ctx context.Context, c, sub *scoll.Comm, st *scoll.SplitStats, res *SplitResult, alloc int64, peak [2]uint64) error {
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
	sums := []uint64{sum, uint64(st.Messages), uint64(st.Bytes), uint64(st.GroupBytes), uint64(max(alloc, 0)), peak[0], peak[1]}
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
		res.AllocBytesPerRank = float64(sums[4]) / float64(c.Size())
		res.PeakBytesPerRank = float64(sums[5]) / float64(c.Size())
		res.PeakResolutionPerRank = float64(sums[6]) / float64(c.Size())
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

// Layout implements Row. The CSV's columns are the JSON fields (phases
// as "name=ms" pairs); its first sixteen are those of the integer-only
// benchmark, in its order (scripts read them by position). The table
// shows items and what the split did in words, the variant only when a
// row has one, and a skipped configuration with its reason in the last
// column.
func (SplitResult) Layout() *Layout[SplitResult] { return splitRows }

// splitRows is the layout of split results.
var splitRows = func() *Layout[SplitResult] {
	type S = SplitResult
	i := strconv.Itoa
	i64 := func(x int64) string { return strconv.FormatInt(x, 10) }
	b := strconv.FormatBool
	// measured shows a measurement in the table, or "-" when skipped.
	measured := func(f func(S) string) func(S) string {
		return func(r S) string {
			if r.Skipped != "" {
				return "-"
			}
			return f(r)
		}
	}
	ms := func(f func(S) float64) func(S) string { return func(r S) string { return fixed(f(r), 3) } }
	// msCell and bytesCell are a table's cells: with their units.
	msCell := func(f func(S) float64) func(S) string {
		return measured(func(r S) string { return human.Time(f(r) / 1e3) })
	}
	bytesCell := func(f func(S) float64) func(S) string {
		return measured(func(r S) string { return human.Bytes(math.Round(f(r))) })
	}
	median, least, most := ms(func(r S) float64 { return r.MedianMs }), ms(func(r S) float64 { return r.MinMs }), ms(func(r S) float64 { return r.MaxMs })
	phases := func(r S) string {
		var ph []string
		for _, p := range r.Phases {
			ph = append(ph, p.Name+"="+fixed(p.Ms, 3))
		}
		return strings.Join(ph, " ")
	}
	phaseCells := func(r S) string {
		var ph []string
		for _, p := range r.Phases {
			ph = append(ph, p.Name+" "+human.Time(p.Ms/1e3))
		}
		return strings.Join(ph, ", ")
	}
	return &Layout[SplitResult]{
		Rows: "split results",
		Columns: []Column[S]{
			{Name: "np", Text: func(r S) string { return i(r.NP) }, Head: "np"},
			{Name: "algorithm", Text: func(r S) string { return r.Algorithm }, Head: "algorithm", Left: true},
			{Head: "variant", Cell: func(r S) string { return r.Variant }, Left: true, Optional: true},
			{Head: "group", Cell: func(r S) string { return r.Group }, Left: true},
			{Name: "colors", Text: func(r S) string { return r.Colors }, Head: "colors", Left: true},
			{Name: "keys", Text: func(r S) string { return r.Keys }, Head: "keys", Left: true},
			{Head: "items", Cell: SplitResult.Items, Left: true},
			{Head: "does", Cell: SplitResult.Does, Left: true},
			{Name: "sorters", Text: func(r S) string { return i(r.Sorters) }},
			{Name: "group", Text: func(r S) string { return r.Group }},
			{Name: "reps", Text: func(r S) string { return i(r.Reps) }},
			{Name: "median_ms", Unit: "ms", Text: median, Head: "median", Cell: msCell(func(r S) float64 { return r.MedianMs })},
			{Name: "min_ms", Unit: "ms", Text: least, Head: "min", Cell: msCell(func(r S) float64 { return r.MinMs })},
			{Name: "max_ms", Unit: "ms", Text: most, Head: "max", Cell: msCell(func(r S) float64 { return r.MaxMs })},
			{Name: "group_bytes_mean", Unit: "B", Text: func(r S) string { return fixed(r.GroupBytesMean, 1) }, Head: "group/rank",
				Cell: bytesCell(func(r S) float64 { return r.GroupBytesMean })},
			{Name: "group_bytes_max", Unit: "B", Text: func(r S) string { return i(r.GroupBytesMax) }, Head: "group max",
				Cell: bytesCell(func(r S) float64 { return float64(r.GroupBytesMax) })},
			{Head: "alloc/rank", Cell: bytesCell(func(r S) float64 { return r.AllocBytesPerRank })},
			{Head: "peak/rank", Cell: measured(func(r S) string {
				if r.PeakBytesPerRank > 0 || r.PeakResolutionPerRank > 0 {
					return human.Bytes(math.Round(r.PeakBytesPerRank)) + " ± " + human.Bytes(math.Round(r.PeakResolutionPerRank))
				}
				return "-"
			})},
			{Name: "messages", Text: func(r S) string { return i64(r.Messages) }, Head: "messages", Cell: measured(func(r S) string { return i64(r.Messages) })},
			{Name: "bytes", Unit: "B", Text: func(r S) string { return i64(r.Bytes) }, Head: "bytes",
				Cell: bytesCell(func(r S) float64 { return float64(r.Bytes) })},
			{Name: "checksum", Text: func(r S) string { return r.Checksum }, Head: "checksum", Cell: measured(func(r S) string { return r.Checksum })},
			{Name: "phases", Text: phases, Head: "phases (slowest rank)", Left: true, Cell: func(r S) string {
				if r.Skipped != "" {
					return "skipped: " + r.Skipped
				}
				return phaseCells(r)
			}},
			{Name: "variant", Text: func(r S) string { return r.Variant }},
			{Name: "bytes_items", Text: func(r S) string { return b(r.ByteItems) }},
			{Name: "color_len", Text: func(r S) string { return i(r.ColorLen) }},
			{Name: "reorder", Text: func(r S) string { return b(r.Reorder) }},
			{Name: "split", Text: func(r S) string { return b(r.Split) }},
			{Name: "chain", Text: func(r S) string { return b(r.Chain) }},
			{Name: "alloc_bytes_per_rank", Unit: "B", Text: func(r S) string { return fixed(r.AllocBytesPerRank, 1) }},
			{Name: "est_bytes_per_rank", Unit: "B", Text: func(r S) string { return fixed(r.EstBytesPerRank, 1) }},
			{Name: "skipped", Text: func(r S) string { return r.Skipped }},
			{Name: "peak_bytes_per_rank", Unit: "B", Text: func(r S) string { return fixed(r.PeakBytesPerRank, 1) }},
			{Name: "peak_resolution_per_rank", Unit: "B", Text: func(r S) string { return fixed(r.PeakResolutionPerRank, 1) }},
		},
	}
}()

// Items names the call and its colors: "int" (Split), "bytes" (SplitBytes
// with 8-byte colors) or "strL" (SplitBytes with string colors of L bytes).
func (r SplitResult) Items() string {
	switch {
	case !r.ByteItems:
		return "int"
	case r.ColorLen > 0:
		return "str" + strconv.Itoa(r.ColorLen)
	}
	return "bytes"
}

// Does names what the split did: "split+reorder", "split" (WithoutReorder),
// "reorder" (WithoutSplit) or "none", with "+chain" for WithChainGroup.
func (r SplitResult) Does() string {
	var parts []string
	if r.Split {
		parts = append(parts, "split")
	}
	if r.Reorder {
		parts = append(parts, "reorder")
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	if r.Chain {
		parts = append(parts, "chain")
	}
	return strings.Join(parts, "+")
}

// ReadSplitCSV reads split results written as CSV (Write): the columns it
// knows, by name, and the phases ("gather=150.781 sort=82.702").
func ReadSplitCSV(r io.Reader) ([]SplitResult, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"np", "algorithm", "median_ms"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%w: split CSV without a %q column", ErrConfig, need)
		}
	}
	var out []SplitResult
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		num := func(name string) float64 { v, _ := strconv.ParseFloat(get(name), 64); return v }
		boo := func(name string) bool { v, _ := strconv.ParseBool(get(name)); return v }
		np, err := strconv.Atoi(get("np"))
		if err != nil {
			return nil, fmt.Errorf("%w: split CSV: np %q", ErrConfig, get("np"))
		}
		var phases []SplitPhase
		for _, f := range strings.Fields(get("phases")) {
			name, v, ok := strings.Cut(f, "=")
			ms, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("%w: split CSV: phase %q: want name=milliseconds", ErrConfig, f)
			}
			phases = append(phases, SplitPhase{Name: name, Ms: ms})
		}
		out = append(out, SplitResult{Phases: phases, NP: np, Algorithm: get("algorithm"), Colors: get("colors"), Keys: get("keys"),
			Sorters: int(num("sorters")), Group: get("group"), Reps: int(num("reps")),
			MedianMs: num("median_ms"), MinMs: num("min_ms"), MaxMs: num("max_ms"),
			GroupBytesMean: num("group_bytes_mean"), GroupBytesMax: int(num("group_bytes_max")),
			Messages: int64(num("messages")), Bytes: int64(num("bytes")), Checksum: get("checksum"),
			Variant: get("variant"), ByteItems: boo("bytes_items"), ColorLen: int(num("color_len")),
			Reorder: boo("reorder"), Split: boo("split"), Chain: boo("chain"),
			AllocBytesPerRank: num("alloc_bytes_per_rank"), EstBytesPerRank: num("est_bytes_per_rank"), Skipped: get("skipped"),
			PeakBytesPerRank: num("peak_bytes_per_rank"), PeakResolutionPerRank: num("peak_resolution_per_rank")})
	}
}

// peakSplit runs one untimed split (call) and measures its peak live
// memory (peakMeter) on the ranks that read the heap (on): the peak over
// the base and the resolution, in bytes; zero elsewhere. The barriers
// keep the other ranks out of the measured window's edges.
func peakSplit(ctx context.Context, c *scoll.Comm, on bool, gc int, call func(ctx context.Context, c *scoll.Comm, extra ...scoll.SplitOption) (*scoll.Comm, error)) ([2]uint64, error) {
	var out [2]uint64
	if err := c.Barrier(ctx); err != nil {
		return out, err
	}
	var m *peakMeter
	if on {
		m = startPeak(gc)
	}
	// Nobody starts before the base is read.
	err := c.Barrier(ctx)
	var sub *scoll.Comm
	if err == nil {
		sub, err = call(ctx, c)
	}
	if err == nil {
		err = c.Barrier(ctx)
	}
	if m != nil {
		out[0], out[1] = m.end()
	}
	if sub != nil {
		sub.Close()
	}
	return out, err
}
