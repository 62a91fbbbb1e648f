package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/scoll/scoll/internal/human"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll"
)

// The imbalance benchmark (Marendic et al., "A clairvoyant imbalance
// robust reduction", sec. 6): reduce algorithms timed under imposed
// process arrival patterns.
//
// # Method
//
// For every size and every level of the pattern's magnitude, the ranks run
// Reps rounds; in each round every algorithm is measured once, in turn (so
// that slow drifts of the machine affect all algorithms alike). One
// measurement on every rank r:
//
//  1. synchronises: "barrier", two barriers (as the Intel MPI benchmarks and
//     Marendic et al. do), the sync point s being the time this rank leaves
//     the second; "window", the sync point is the common-clock time
//     t0 + k·window of the k-th measurement, window being twice the longest
//     barrier-synchronised runtime of the warm-up calls at this level plus
//     200 µs (a rank that reaches its window late starts late: counted in
//     ImbalanceReport.LateStarts);
//  2. waits until s + a_r, a_r its delay in the measurement's arrival
//     vector (the same vector on every rank and for every algorithm);
//  3. records its arrival, calls scoll.Reduce (Sum over int32, root 0; the
//     clairvoyant algorithm gets the vector as scoll.WithArrivals), records
//     its exit.
//
// The runtime of the measurement is max(exit) − min(arrival) over the
// ranks (Marendic et al.'s Definition 3.4), on a common clock: in process
// the ranks share one; with Config.World each process estimates the
// offset of its clock to rank 0's by ping-pong before each level (the
// exchange of least round-trip time of 16; its half round trip is the
// uncertainty reported). Arrivals and exits are gathered to rank 0 with
// scoll.Gather after the level, outside the timed part.
//
// Waiting blocks (time.Sleep, then nanosleep(2) for the last 1.5 ms on
// Linux: Go's timers alone wake up to a millisecond late) for goroutine ranks: spinning
// would take a CPU from the ranks that work. Ranks that are processes with
// a CPU each may spin (Wait "spin", the default "auto" when the machine has
// a CPU per rank): they sleep until 1 ms before the target and then poll
// the clock. The achieved delay, arrival minus target, is reported
// (ImbalanceReport.Delay) for every rank that had to wait.

// DefaultImbalanceAlgorithms are the reduce algorithms ImbalanceConfig
// runs by default: those of Marendic et al.'s experiments (Butterfly is
// rabenseifner).
var DefaultImbalanceAlgorithms = []string{"binomial", "rabenseifner", "parallel-ring", "radix-k", "clairvoyant"}

// Defaults of ImbalanceConfig fields left zero.
const (
	// DefaultImbalanceReps is the default number of measurements per
	// algorithm and level.
	DefaultImbalanceReps = 30
	// DefaultResamples is the default number of relabellings of the
	// permutation test (Marendic et al.'s 20,000).
	DefaultResamples = 20000
	// DefaultBootstrap is the default number of bootstrap resamples of the
	// median's confidence interval.
	DefaultBootstrap = 2000
)

// ImbalanceConfig describes an imbalance benchmark run.
//
// Of Common, RunImbalance takes NP (0: DefaultNP), World (every rank
// calls RunImbalance alike; only rank 0's report holds the points),
// Algorithms (nil: DefaultImbalanceAlgorithms, those not registered
// skipped), Sizes (int32 elements; nil: 128 KiB), Reps (measurements per
// algorithm and level; 0: DefaultImbalanceReps), Warmup (unmeasured calls
// of each algorithm before them at each level; 0: 2, negative: none; the
// first call's result is always checked), Seed (of the random patterns
// and the resampling), Progress (before each level) and OnSkip.
type ImbalanceConfig struct {
	Common
	// Reference is the algorithm the others' median runtimes are divided
	// by and permutation-tested against; "" means clairvoyant when it
	// runs (the paper's normalisation), else the first algorithm.
	Reference string
	// Imbalance is the arrival pattern and its levels (ParseImbalance).
	// Level 0 (balanced arrivals) is measured first when the levels do not
	// start with it: the absorption time needs it, and "x" magnitudes are
	// multiples of the scale algorithm's balanced median (clairvoyant when
	// it runs, else Reference).
	Imbalance Imbalance
	// Sync is "barrier" (default) or "window".
	Sync string
	// Wait is how ranks wait for their arrival time: "sleep", "spin" or
	// "" / "auto" (spin only for process ranks with a CPU each).
	Wait string
	// Segments and RoundTime are the clairvoyant reduce's
	// scoll.WithSegments and scoll.WithRoundTime; 0 means its defaults.
	Segments  int
	RoundTime time.Duration
	// Resamples is the permutation test's number of relabellings (0 means
	// DefaultResamples); Bootstrap the bootstrap's resamples (0 means
	// DefaultBootstrap).
	Resamples, Bootstrap int
	// OnRow, if set, is given each point (on rank 0) as soon as its level
	// is measured.
	OnRow func(ImbalancePoint)
}

// ImbalancePoint is the measurement of one algorithm at one size and one
// level of imbalance. Times are in microseconds.
type ImbalancePoint struct {
	Bytes     int    `json:"bytes"`
	Algorithm string `json:"algorithm"`
	// Level is the level as given (a duration, or a multiple "1.5x");
	// LevelUs its duration.
	Level   string  `json:"level"`
	LevelUs float64 `json:"level_us"`
	// ImbalanceUs is the median of the requested vectors' absolute
	// imbalance I(ψ) = max(a) − min(a); AchievedUs the median of the
	// measured max(arrival) − min(arrival).
	ImbalanceUs float64 `json:"imbalance_us"`
	AchievedUs  float64 `json:"achieved_imbalance_us"`
	// N is the number of measurements.
	N int `json:"n"`
	// MedianUs is the median runtime, CILoUs and CIHiUs its 95% bootstrap
	// confidence interval; MinUs the fastest measurement.
	MedianUs float64 `json:"median_us"`
	CILoUs   float64 `json:"ci_lo_us"`
	CIHiUs   float64 `json:"ci_hi_us"`
	MinUs    float64 `json:"min_us"`
	// Ratio is MedianUs over the reference's at this size and level; P the
	// permutation test's two-sided p-value of it (1 for the reference).
	Ratio float64 `json:"ratio"`
	P     float64 `json:"p"`
	// RunsZ and RunsP are the runs test of the runtimes in the order
	// measured: RunsP < 0.05 flags serial correlation.
	RunsZ float64 `json:"runs_z"`
	RunsP float64 `json:"runs_p"`
	// AbsorptionUs is A = t(π) − t(ψ) + I(ψ) with medians for t and
	// ImbalanceUs for I; AbsorptionN = A/t(π) and ImbalanceN = I/t(π).
	AbsorptionUs float64 `json:"absorption_us"`
	AbsorptionN  float64 `json:"absorption_norm"`
	ImbalanceN   float64 `json:"imbalance_norm"`
	// WindowUs is the window of sync "window" (0 with barriers).
	WindowUs float64 `json:"window_us"`
}

// DelayAccuracy summarises achieved minus requested delays.
type DelayAccuracy struct {
	// N is the number of waits measured.
	N int `json:"n"`
	// MedianUs and P99Us are the median and 99th percentile of the error
	// (positive: late), MaxUs the largest.
	MedianUs float64 `json:"median_us"`
	P99Us    float64 `json:"p99_us"`
	MaxUs    float64 `json:"max_us"`
}

// String formats the accuracy as "median +12us, p99 +80us, max +300us (N waits)".
func (d DelayAccuracy) String() string {
	if d.N == 0 {
		return "no delayed ranks"
	}
	return fmt.Sprintf("median %+.1fus, p99 %+.1fus, max %+.1fus (%d waits)", d.MedianUs, d.P99Us, d.MaxUs, d.N)
}

// ImbalanceReport is the outcome of RunImbalance: the points by size,
// level, then algorithm, and the run's conditions.
type ImbalanceReport struct {
	Results[ImbalancePoint]
	Pattern, Sync, Wait, Reference string
	NP                             int
	// Delay is the accuracy of the imposed delays over the whole run.
	Delay DelayAccuracy
	// ClockUncertaintyUs bounds the error of the common clock across
	// processes (half the best ping-pong round trip, the largest over
	// ranks and levels); 0 in process.
	ClockUncertaintyUs float64
	// LateStarts counts, with sync "window", rank measurements that
	// reached their window after it had begun.
	LateStarts int
}

// Summary describes the run's conditions and checks in a few lines: the
// achieved delays, the clock, late windows, serial correlation.
func (rep *ImbalanceReport) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pattern %s, %d ranks, sync %s, wait %s, reference %s\n", rep.Pattern, rep.NP, rep.Sync, rep.Wait, rep.Reference)
	fmt.Fprintf(&b, "delay accuracy (achieved − requested): %s\n", rep.Delay)
	if rep.ClockUncertaintyUs > 0 {
		fmt.Fprintf(&b, "common clock: offsets by ping-pong, uncertainty up to ±%.1fus\n", rep.ClockUncertaintyUs)
	}
	if rep.Sync == "window" {
		fmt.Fprintf(&b, "late window starts: %d\n", rep.LateStarts)
	}
	corr := 0
	for _, p := range rep.Rows {
		if p.RunsP < 0.05 {
			corr++
		}
	}
	fmt.Fprintf(&b, "runs test: %d of %d samples serially correlated at 5%%\n", corr, len(rep.Rows))
	return b.String()
}

// Layout implements Row: the CSV's columns are the JSON fields; the table
// shows sizes and levels, the median with its 95% confidence interval,
// the ratio to the reference with its p-value and significance (stars),
// the runs test's p and the absorption.
func (ImbalancePoint) Layout() *Layout[ImbalancePoint] { return imbalanceRows }

// imbalanceRows is the layout of imbalance points.
var imbalanceRows = func() *Layout[ImbalancePoint] {
	type P = ImbalancePoint
	g := func(f func(P) float64) func(P) string { return func(p P) string { return sig6(f(p)) } }
	cell := func(format string, f func(P) float64) func(P) string {
		return func(p P) string { return fmt.Sprintf(format, f(p)) }
	}
	// usCell is a table's cell of a time in µs: with its unit.
	usCell := func(f func(P) float64) func(P) string { return func(p P) string { return human.Time(f(p) / 1e6) } }
	imb, ach := func(p P) float64 { return p.ImbalanceUs }, func(p P) float64 { return p.AchievedUs }
	med, ratio, pv := func(p P) float64 { return p.MedianUs }, func(p P) float64 { return p.Ratio }, func(p P) float64 { return p.P }
	runsP, abs := func(p P) float64 { return p.RunsP }, func(p P) float64 { return p.AbsorptionUs }
	absN, imbN := func(p P) float64 { return p.AbsorptionN }, func(p P) float64 { return p.ImbalanceN }
	return &Layout[ImbalancePoint]{
		Rows: "imbalance points",
		Columns: []Column[P]{
			{Name: "bytes", Unit: "B", Text: func(p P) string { return strconv.Itoa(p.Bytes) }, Head: "size", Cell: func(p P) string { return human.Bytes(float64(p.Bytes)) }},
			{Name: "level", Text: func(p P) string { return p.Level }, Head: "level"},
			{Name: "level_us", Unit: "us", Text: g(func(p P) float64 { return p.LevelUs })},
			{Name: "imbalance_us", Unit: "us", Text: g(imb), Head: "I", Cell: usCell(imb)},
			{Name: "achieved_imbalance_us", Unit: "us", Text: g(ach), Head: "achieved", Cell: usCell(ach)},
			{Name: "algorithm", Text: func(p P) string { return p.Algorithm }, Head: "algorithm"},
			{Name: "n", Text: func(p P) string { return strconv.Itoa(p.N) }},
			{Name: "median_us", Unit: "us", Text: g(med), Head: "median", Cell: usCell(med)},
			{Head: "95% CI", Cell: func(p P) string { return "[" + human.Time(p.CILoUs/1e6) + ", " + human.Time(p.CIHiUs/1e6) + "]" }},
			{Name: "ci_lo_us", Unit: "us", Text: g(func(p P) float64 { return p.CILoUs })},
			{Name: "ci_hi_us", Unit: "us", Text: g(func(p P) float64 { return p.CIHiUs })},
			{Name: "min_us", Unit: "us", Text: g(func(p P) float64 { return p.MinUs })},
			{Name: "ratio", Text: g(ratio), Head: "ratio", Cell: cell("%.3f", ratio)},
			{Name: "p", Text: g(pv), Head: "p", Cell: cell("%.4f", pv)},
			{Head: "sig", Cell: func(p P) string { return stars(p.P) }},
			{Name: "runs_z", Text: g(func(p P) float64 { return p.RunsZ })},
			{Name: "runs_p", Text: g(runsP), Head: "runs p", Cell: cell("%.2f", runsP)},
			{Name: "absorption_us", Unit: "us", Text: g(abs), Head: "A", Cell: usCell(abs)},
			{Name: "absorption_norm", Text: g(absN), Head: "A_N", Cell: cell("%.3f", absN)},
			{Name: "imbalance_norm", Text: g(imbN), Head: "I_N", Cell: cell("%.3f", imbN)},
			{Name: "window_us", Unit: "us", Text: g(func(p P) float64 { return p.WindowUs })},
		},
	}
}()

// stars marks a p-value: *** ≤ 0.001, ** ≤ 0.01, * ≤ 0.05, "ns" above.
func stars(p float64) string {
	switch {
	case p <= 0.001:
		return "***"
	case p <= 0.01:
		return "**"
	case p <= 0.05:
		return "*"
	}
	return "ns"
}

// imbConfig is a validated ImbalanceConfig.
type imbConfig struct {
	ImbalanceConfig
	algs  []string
	ref   int // index of the reference in algs
	scale int // index of the algorithm whose balanced median is 1x
	spin  bool
}

func (cfg ImbalanceConfig) normalize() (*imbConfig, []Skip, error) {
	c := &imbConfig{ImbalanceConfig: cfg}
	err := c.Common.normalize(defaults{harness: "bench.RunImbalance", np: DefaultNP, reps: DefaultImbalanceReps, sizes: []int{128 << 10},
		takes: takesNP | takesWorld | takesAlgorithms | takesSizes | takesReps | takesWarmup | takesSeed})
	if err != nil {
		return nil, nil, err
	}
	if err := c.Imbalance.check(c.NP); err != nil {
		return nil, nil, err
	}
	for _, s := range c.Sizes {
		if s < 4 {
			return nil, nil, fmt.Errorf("%w: size %d: want at least one int32", ErrConfig, s)
		}
	}
	switch c.Sync {
	case "":
		c.Sync = "barrier"
	case "barrier", "window":
	default:
		return nil, nil, fmt.Errorf("%w: sync %q: want barrier or window", ErrConfig, c.Sync)
	}
	switch c.Wait {
	case "", "auto":
		c.Wait = "sleep"
		if c.World != nil && runtime.NumCPU() >= c.NP {
			c.Wait = "spin"
		}
	case "sleep", "spin":
	default:
		return nil, nil, fmt.Errorf("%w: wait %q: want auto, sleep or spin", ErrConfig, c.Wait)
	}
	c.spin = c.Wait == "spin"
	if c.Warmup == 0 {
		c.Warmup = 2
	}
	c.Warmup = max(c.Warmup, 0)
	if c.Resamples == 0 {
		c.Resamples = DefaultResamples
	}
	if c.Bootstrap == 0 {
		c.Bootstrap = DefaultBootstrap
	}
	if c.Segments < 0 || c.RoundTime < 0 || c.Resamples < 0 || c.Bootstrap < 0 {
		return nil, nil, fmt.Errorf("%w: negative segments, round time or resamples", ErrConfig)
	}
	names := c.Algorithms
	lenient := names == nil
	if lenient {
		names = DefaultImbalanceAlgorithms
	}
	base := &config{Config: Config{Op: "reduce", Common: Common{NP: c.NP}}}
	var skipped []Skip
	for _, n := range names {
		if n == Auto {
			return nil, nil, fmt.Errorf("%w: the imbalance benchmark names its algorithms (%s is not one)", ErrConfig, Auto)
		}
		base.Algorithms = []string{n}
		run, skip, err := base.algorithms()
		if err != nil && lenient {
			skipped = append(skipped, Skip{Algorithm: n, Bytes: -1, Reason: "not registered"})
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, skip...)
		for _, a := range run {
			if !slices.Contains(c.algs, a) {
				c.algs = append(c.algs, a)
			}
		}
	}
	if len(c.algs) == 0 {
		return nil, nil, fmt.Errorf("%w: no algorithm to run", ErrConfig)
	}
	c.ref = 0
	if c.Reference == "" && slices.Contains(c.algs, "clairvoyant") {
		c.Reference = "clairvoyant"
	}
	if c.Reference != "" {
		if c.ref = slices.Index(c.algs, c.Reference); c.ref < 0 {
			return nil, nil, fmt.Errorf("%w: reference %q is not among the algorithms run (%v)", ErrConfig, c.Reference, c.algs)
		}
	}
	c.Reference = c.algs[c.ref]
	c.scale = c.ref
	if i := slices.Index(c.algs, "clairvoyant"); i >= 0 {
		c.scale = i
	}
	return c, skipped, nil
}

// RunImbalance runs the imbalance benchmark cfg describes. It fails with an
// error wrapping ErrConfig for a bad configuration, ErrVerify when a
// reduction's result is wrong, or the collective's own error.
func RunImbalance(ctx context.Context, cfg ImbalanceConfig) (*ImbalanceReport, error) {
	c, skipped, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	rep := &ImbalanceReport{Pattern: c.Imbalance.Spec, Sync: c.Sync, Wait: c.Wait, Reference: c.Reference, NP: c.NP}
	for _, s := range skipped {
		skip(&c.Common, &rep.Results, s)
	}
	levels := c.levels()
	root := c.World == nil || c.World.Rank() == 0
	rng := rand.New(rand.NewPCG(c.Seed, 0x1b5))
	var delayErrs []float64
	total := len(c.Sizes) * len(levels)
	for si, size := range c.Sizes {
		var scale time.Duration
		var balanced []float64 // per algorithm, µs
		for li, lv := range levels {
			c.step(si*len(levels)+li, total, "%s B, imbalance %s", FormatSize(size), lv)
			arr := lv.arrivals(&c.Imbalance, c.NP, c.Reps, scale, c.Seed)
			warm := lv.arrivals(&c.Imbalance, c.NP, max(1, c.Warmup), scale, c.Seed+1)
			ld, err := c.level(ctx, size/4, arr, warm)
			if err != nil {
				return rep, fmt.Errorf("reduce %d bytes, level %s: %w", size, lv, err)
			}
			if root {
				rep.LateStarts += ld.late
				rep.ClockUncertaintyUs = max(rep.ClockUncertaintyUs, ld.clockUnc*1e6)
				delayErrs = append(delayErrs, ld.delayErrs...)
				pts := c.points(ld, size, lv, scale, arr, rng)
				if li == 0 {
					balanced = make([]float64, len(pts))
					for i, p := range pts {
						balanced[i] = p.MedianUs
					}
					scale = time.Duration(balanced[c.scale] * 1e3)
				}
				for i := range pts {
					a := AbsorptionOf(balanced[i], pts[i].MedianUs, pts[i].ImbalanceUs)
					pts[i].AbsorptionUs, pts[i].AbsorptionN, pts[i].ImbalanceN = a.A, a.AN, a.IN
				}
				for _, p := range pts {
					add(&rep.Results, c.OnRow, p)
				}
			}
			if li == 0 && c.World != nil && c.Imbalance.relative() {
				// Every rank needs the scale of "x" levels: rank 0's.
				s := []float64{scale.Seconds()}
				if err := scoll.Bcast(ctx, c.World, s, 0); err != nil {
					return rep, err
				}
				scale = time.Duration(s[0] * 1e9)
			}
		}
	}
	c.ended(total)
	if len(delayErrs) > 0 {
		rep.Delay = DelayAccuracy{N: len(delayErrs), MedianUs: Median(delayErrs) * 1e6, P99Us: Quantile(delayErrs, 0.99) * 1e6, MaxUs: slices.Max(delayErrs) * 1e6}
	}
	return rep, nil
}

// level is one level of a run: a magnitude of the pattern, or balanced
// arrivals.
type level struct {
	m        Magnitude
	balanced bool
}

// String is the level's label: its magnitude, or "balanced".
func (l level) String() string {
	if l.balanced {
		return "balanced"
	}
	return l.m.String()
}

// arrivals returns the level's n arrival vectors (see Imbalance.Arrivals).
func (l level) arrivals(im *Imbalance, np, n int, scale time.Duration, seed uint64) [][]time.Duration {
	if !l.balanced {
		return im.Arrivals(np, n, l.m, scale, seed)
	}
	out := make([][]time.Duration, n)
	for j := range out {
		out[j] = make([]time.Duration, np)
	}
	return out
}

// levels returns the levels to run: the pattern's, after a balanced one
// unless its first level is balanced arrivals already (magnitude 0, and
// for alternating an even delay of 0).
func (c *imbConfig) levels() []level {
	im := &c.Imbalance
	var out []level
	first := im.Levels[0]
	if first != (Magnitude{}) || im.Kind == "trace" || im.Kind == "alternating" && im.Even != (Magnitude{}) {
		out = append(out, level{balanced: true})
	}
	for _, m := range im.Levels {
		out = append(out, level{m: m})
	}
	return out
}

// levelData is what rank 0 gathers from one level: per algorithm and
// measurement the runtime and the achieved imbalance, in seconds.
type levelData struct {
	runtime, achieved [][]float64
	delayErrs         []float64
	late              int
	clockUnc          float64
	window            float64
}

// points computes the statistics of one level.
func (c *imbConfig) points(ld *levelData, size int, lv level, scale time.Duration, arr [][]time.Duration, rng *rand.Rand) []ImbalancePoint {
	imb := make([]float64, len(arr))
	for j, a := range arr {
		imb[j] = spread(a).Seconds() * 1e6
	}
	pts := make([]ImbalancePoint, len(c.algs))
	us := func(x []float64) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = v * 1e6
		}
		return out
	}
	ref := us(ld.runtime[c.ref])
	for i, alg := range c.algs {
		t := us(ld.runtime[i])
		p := ImbalancePoint{
			Bytes: size, Algorithm: alg, Level: lv.String(), LevelUs: float64(lv.m.Resolve(scale)) / 1e3,
			ImbalanceUs: Median(imb), AchievedUs: Median(us(ld.achieved[i])), N: len(t),
			MedianUs: Median(t), MinUs: slices.Min(t), Ratio: 1, P: 1, WindowUs: ld.window * 1e6,
		}
		p.CILoUs, p.CIHiUs = BootstrapMedianCI(t, 0.95, c.Bootstrap, rng)
		if i != c.ref {
			p.Ratio, p.P = PermutationTest(t, ref, c.Resamples, rng)
		}
		r := RunsTest(t)
		p.RunsZ, p.RunsP = r.Z, r.P
		pts[i] = p
	}
	return pts
}

// level runs one level: warm-up calls on the warm vectors, then the
// measurements on arr, every algorithm once per round; count is the
// number of int32 elements.
func (c *imbConfig) level(ctx context.Context, count int, arr, warm [][]time.Duration) (*levelData, error) {
	var out *levelData
	epoch := time.Now() // in process, the ranks' common clock
	body := func(ctx context.Context, comm *scoll.Comm) error {
		ld, err := c.rankLevel(ctx, comm, epoch, count, arr, warm)
		if comm.Rank() == 0 {
			out = ld
		}
		return err
	}
	err := c.run(ctx, body)
	return out, err
}

// rankClock is a rank's view of the common clock: seconds since a local
// epoch, minus the estimated offset of this clock to rank 0's.
type rankClock struct {
	epoch  time.Time
	offset float64
}

func (k *rankClock) now() float64 { return time.Since(k.epoch).Seconds() - k.offset }

// waitUntil waits until the common time target; it returns whether the
// target was still ahead (the rank had to wait).
func (k *rankClock) waitUntil(target float64, spin bool) bool {
	d := target - k.now()
	if d <= 0 {
		return false
	}
	if !spin {
		blockFor(time.Duration(d * 1e9))
		return true
	}
	if d > 1e-3 {
		blockFor(time.Duration((d - 1e-3) * 1e9))
	}
	for k.now() < target {
	}
	return true
}

// Tags of the clock's ping-pong messages.
const (
	pingTag = 0x5c011
	pongTag = 0x5c012
)

// syncClock estimates, on every rank, the offset of its clock to rank 0's:
// rank 0 exchanges 16 ping-pongs with each rank in turn and keeps the
// exchange of least round trip, whose middle it takes as simultaneous with
// the other rank's reply; it sends each rank its offset. It returns the
// largest half round trip (the offsets' uncertainty) on rank 0.
func syncClock(ctx context.Context, comm *scoll.Comm, k *rankClock) (float64, error) {
	const rounds = 16
	var buf [8]byte
	put := func(x float64) []byte { binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x)); return buf[:] }
	get := func() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(buf[:])) }
	if comm.Rank() != 0 {
		for range rounds {
			if _, err := comm.Recv(ctx, 0, pingTag, buf[:]); err != nil {
				return 0, err
			}
			if err := comm.Send(ctx, 0, pongTag, put(k.now())); err != nil {
				return 0, err
			}
		}
		if _, err := comm.Recv(ctx, 0, pingTag, buf[:]); err != nil {
			return 0, err
		}
		k.offset = get()
		return 0, nil
	}
	worst := 0.0
	for r := 1; r < comm.Size(); r++ {
		best, off := math.Inf(1), 0.0
		for range rounds {
			t0 := k.now()
			if err := comm.Send(ctx, r, pingTag, put(t0)); err != nil {
				return 0, err
			}
			if _, err := comm.Recv(ctx, r, pongTag, buf[:]); err != nil {
				return 0, err
			}
			t1 := k.now()
			if t1-t0 < best {
				best, off = t1-t0, get()-(t0+t1)/2
			}
		}
		if err := comm.Send(ctx, r, pingTag, put(off)); err != nil {
			return 0, err
		}
		worst = max(worst, best/2)
	}
	return worst, nil
}

// Offsets in a rank's record of one measurement.
const (
	recArrival = iota
	recExit
	recErr // achieved − requested delay, NaN when the rank did not wait
	recLen
)

// rankLevel is one rank's part of a level; epoch is the origin of the
// clock (with World, adjusted to rank 0's by syncClock).
func (c *imbConfig) rankLevel(ctx context.Context, comm *scoll.Comm, epoch time.Time, count int, arr, warm [][]time.Duration) (*levelData, error) {
	me, np := comm.Rank(), comm.Size()
	k := &rankClock{epoch: epoch}
	var clockUnc float64
	if c.World != nil {
		var err error
		if clockUnc, err = syncClock(ctx, comm, k); err != nil {
			return nil, err
		}
	}
	send, recv := make([]int32, count), make([]int32, count)
	for i := range send {
		send[i] = int32((me + i) % 13)
	}
	opts := func(alg string, a []time.Duration) []scoll.CallOption {
		o := []scoll.CallOption{scoll.WithAlgorithm(alg)}
		if alg == "clairvoyant" {
			o = append(o, scoll.WithArrivals(a))
			if c.Segments > 0 {
				o = append(o, scoll.WithSegments(c.Segments))
			}
			if c.RoundTime > 0 {
				o = append(o, scoll.WithRoundTime(c.RoundTime))
			}
		}
		return o
	}
	// Warm-up, barrier-synchronised with the level's delays; the first
	// call of each algorithm is checked, and the longest runtime sizes
	// the window.
	longest := 0.0
	for w := 0; w < max(1, c.Warmup); w++ {
		for _, alg := range c.algs {
			a := warm[w%len(warm)]
			if err := barriers(ctx, comm); err != nil {
				return nil, err
			}
			k.waitUntil(k.now()+a[me].Seconds(), c.spin)
			t0 := k.now()
			if err := scoll.Reduce(ctx, comm, send, recv, scoll.Sum, 0, opts(alg, a)...); err != nil {
				return nil, fmt.Errorf("%s: %w", alg, err)
			}
			span := []float64{-t0, k.now()}
			if err := scoll.Allreduce(ctx, comm, nil, span, scoll.Max); err != nil {
				return nil, err
			}
			longest = max(longest, span[0]+span[1])
			if w == 0 && me == 0 {
				if err := checkSum(recv, np); err != nil {
					return nil, fmt.Errorf("%w: %s: %w", ErrVerify, alg, err)
				}
			}
		}
	}
	var t0, window float64
	if c.Sync == "window" {
		window = 2*longest + 200e-6
		start := []float64{k.now() + window + 1e-3}
		if err := scoll.Bcast(ctx, comm, start, 0); err != nil {
			return nil, err
		}
		t0 = start[0]
	} else if err := barriers(ctx, comm); err != nil {
		return nil, err
	}
	// The measurements.
	nalg := len(c.algs)
	rec := make([]float64, nalg*len(arr)*recLen+1)
	late := 0
	for j, a := range arr {
		for ai, alg := range c.algs {
			var s float64
			if c.Sync == "window" {
				s = t0 + float64(j*nalg+ai)*window
				if k.now() > s {
					late++
				}
			} else {
				if err := barriers(ctx, comm); err != nil {
					return nil, err
				}
				s = k.now()
			}
			target := s + a[me].Seconds()
			waited := k.waitUntil(target, c.spin)
			arrival := k.now()
			if err := scoll.Reduce(ctx, comm, send, recv, scoll.Sum, 0, opts(alg, a)...); err != nil {
				return nil, fmt.Errorf("%s: %w", alg, err)
			}
			exit := k.now()
			r := rec[(j*nalg+ai)*recLen:]
			r[recArrival], r[recExit], r[recErr] = arrival, exit, math.NaN()
			if waited {
				r[recErr] = arrival - target
			}
		}
	}
	rec[len(rec)-1] = float64(late)
	var all []float64
	if me == 0 {
		all = make([]float64, np*len(rec))
	}
	if err := scoll.Gather(ctx, comm, rec, all, 0); err != nil {
		return nil, err
	}
	if me != 0 {
		return nil, nil
	}
	ld := &levelData{clockUnc: clockUnc, window: window}
	for ai := range c.algs {
		rt, ach := make([]float64, len(arr)), make([]float64, len(arr))
		for j := range arr {
			lo, hi, last := math.Inf(1), math.Inf(-1), math.Inf(-1)
			for r := range np {
				m := all[r*len(rec)+(j*nalg+ai)*recLen:]
				lo, hi, last = min(lo, m[recArrival]), max(hi, m[recArrival]), max(last, m[recExit])
				if !math.IsNaN(m[recErr]) {
					ld.delayErrs = append(ld.delayErrs, m[recErr])
				}
			}
			rt[j], ach[j] = last-lo, hi-lo
		}
		ld.runtime = append(ld.runtime, rt)
		ld.achieved = append(ld.achieved, ach)
	}
	for r := range np {
		ld.late += int(all[(r+1)*len(rec)-1])
	}
	return ld, nil
}

// barriers is the double barrier before a measurement.
func barriers(ctx context.Context, comm *scoll.Comm) error {
	if err := comm.Barrier(ctx); err != nil {
		return err
	}
	return comm.Barrier(ctx)
}

// checkSum checks the root's result of the reduction of the inputs
// rankLevel fills in: element i is the sum over ranks r of (r+i) mod 13.
func checkSum(recv []int32, np int) error {
	for i, v := range recv {
		// The sum over r of (r+i) mod 13 depends on i mod 13 only.
		if i >= 13 {
			if v != recv[i%13] {
				return fmt.Errorf("element %d = %d, element %d = %d", i, v, i%13, recv[i%13])
			}
			continue
		}
		var want int32
		for r := range np {
			want += int32((r + i) % 13)
		}
		if v != want {
			return fmt.Errorf("element %d = %d, want %d", i, v, want)
		}
	}
	return nil
}
