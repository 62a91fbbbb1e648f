package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ImbalanceKinds returns the arrival patterns ParseImbalance knows, each
// with its parameters; the one marked with [levels] is the magnitude that
// takes a list or range of levels.
func ImbalanceKinds() []string {
	return []string{
		"single:rank=P-1:delay=[levels]   one rank (default P-1) arrives delay late",
		"alternating:even=D:odd=[levels]  even ranks arrive even (default 0) late, odd ranks odd late (delay= names odd too)",
		"uniform:max=[levels]             every rank's delay uniform in [0, max), drawn anew for each measurement",
		"normal:sd=[levels]               delays sd·Z (Z standard normal), shifted so that the earliest rank is at 0",
		"gamma:k=K:theta=[levels]         delays gamma-distributed with shape k and scale theta",
		"bernoulli:p=Q:delay=[levels]     each rank arrives delay late with probability p (default 0.5)",
		"trace:FILE                       one arrival vector of P values per line (seconds, or durations like 50us), used in turn and cycled",
	}
}

// Magnitude is a delay of an imbalance pattern: D plus X times a scale
// measured by the benchmark (the reference or clairvoyant algorithm's
// balanced median runtime), so that "2x" means twice that runtime.
type Magnitude struct {
	D time.Duration
	X float64
}

// String formats m as it is written: "50us", "1.5x", "1ms+0.5x".
func (m Magnitude) String() string {
	x := strconv.FormatFloat(m.X, 'g', -1, 64) + "x"
	switch {
	case m.X == 0:
		return m.D.String()
	case m.D == 0:
		return x
	}
	return m.D.String() + "+" + x
}

// Resolve returns m's duration for the scale that "1x" stands for.
func (m Magnitude) Resolve(scale time.Duration) time.Duration {
	return m.D + time.Duration(m.X*float64(scale))
}

// Imbalance is a parsed --imbalance pattern: how the ranks' arrival delays
// are drawn, and the levels of its magnitude the benchmark sweeps.
type Imbalance struct {
	// Kind is one of single, alternating, uniform, normal, gamma, bernoulli
	// or trace.
	Kind string
	// Rank is single's delayed rank; negative counts from the end (−1 is
	// P−1).
	Rank int
	// Even is alternating's delay of the even ranks.
	Even Magnitude
	// Shape is gamma's k; Prob bernoulli's p.
	Shape, Prob float64
	// Levels are the magnitudes swept: single's and bernoulli's delay,
	// alternating's odd, uniform's max, normal's sd, gamma's theta. A
	// trace has the one level 0 (its vectors are what they are).
	Levels []Magnitude
	// Trace holds a trace's arrival vectors (set by the caller from
	// TraceFile, with ReadTrace); File is the trace file named.
	Trace [][]time.Duration
	File  string
	// Spec is the text parsed.
	Spec string
}

// ParseImbalance parses an imbalance pattern, kind[:name=value]...: see
// ImbalanceKinds. Parameters are separated by colons (or by commas before
// a name=, as in gamma:k=2,theta=50us). Durations are Go durations (50us,
// 1.5ms) or bare seconds, or multiples of the measured balanced runtime
// (0.5x); the swept magnitude takes a list (0,100us,200us) and ranges
// lo..hi (7 levels) or lo..hi/N (N+1 levels), like 0..3x/6. A trace's
// vectors are read by the caller (ReadTrace) into Trace.
func ParseImbalance(spec string) (Imbalance, error) {
	im := Imbalance{Spec: spec, Rank: -1, Prob: 0.5}
	kind, rest, _ := strings.Cut(spec, ":")
	im.Kind = strings.ToLower(strings.TrimSpace(kind))
	bad := func(format string, a ...any) (Imbalance, error) {
		return Imbalance{}, fmt.Errorf("%w: --imbalance %q: %s", ErrConfig, spec, fmt.Sprintf(format, a...))
	}
	if im.Kind == "trace" {
		if rest == "" {
			return bad("want trace:FILE")
		}
		im.File = rest
		im.Levels = []Magnitude{{}}
		return im, nil
	}
	// The magnitude parameter of each kind, and the others it takes.
	sweep := map[string]string{"single": "delay", "alternating": "odd", "uniform": "max", "normal": "sd", "gamma": "theta", "bernoulli": "delay"}[im.Kind]
	if sweep == "" {
		return bad("unknown pattern %q (have single, alternating, uniform, normal, gamma, bernoulli, trace)", kind)
	}
	params, err := splitParams(rest)
	if err != nil {
		return bad("%v", err)
	}
	for _, kv := range params {
		name, val := kv[0], kv[1]
		if im.Kind == "alternating" && name == "delay" {
			name = "odd"
		}
		switch {
		case name == sweep:
			if im.Levels, err = parseLevels(val); err != nil {
				return bad("%s: %v", name, err)
			}
		case im.Kind == "single" && name == "rank":
			if im.Rank, err = parseRank(val); err != nil {
				return bad("rank: %v", err)
			}
		case im.Kind == "alternating" && name == "even":
			if im.Even, err = parseMagnitude(val); err != nil {
				return bad("even: %v", err)
			}
		case im.Kind == "gamma" && name == "k":
			if im.Shape, err = strconv.ParseFloat(val, 64); err != nil || !(im.Shape > 0) || math.IsInf(im.Shape, 0) {
				return bad("k %q: want a positive number", val)
			}
		case im.Kind == "bernoulli" && name == "p":
			if im.Prob, err = strconv.ParseFloat(val, 64); err != nil || !(im.Prob >= 0 && im.Prob <= 1) {
				return bad("p %q: want a probability in [0, 1]", val)
			}
		default:
			return bad("%s takes no parameter %q", im.Kind, name)
		}
	}
	if im.Levels == nil {
		return bad("missing %s=", sweep)
	}
	if im.Kind == "gamma" && im.Shape == 0 {
		return bad("missing k=")
	}
	return im, nil
}

// splitParams splits name=value pairs separated by colons, or by commas
// that come before a name=; other commas stay in the value (a list).
func splitParams(s string) ([][2]string, error) {
	var out [][2]string
	if s == "" {
		return nil, nil
	}
	for _, piece := range strings.Split(s, ":") {
		for _, part := range strings.Split(piece, ",") {
			name, val, ok := strings.Cut(part, "=")
			switch {
			case ok:
				out = append(out, [2]string{strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(val)})
			case len(out) > 0 && strings.Contains(piece, "="):
				out[len(out)-1][1] += "," + strings.TrimSpace(part)
			default:
				return nil, fmt.Errorf("parameter %q: want name=value", piece)
			}
		}
	}
	return out, nil
}

// parseRank parses a rank: an integer ≥ 0, or P-k (returned as −k).
func parseRank(s string) (int, error) {
	s = strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(s)), " ", "")
	if k, ok := strings.CutPrefix(s, "P-"); ok {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q: want P-k with k ≥ 1", s)
		}
		return -n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a rank ≥ 0 or P-k", s)
	}
	return n, nil
}

// parseMagnitude parses a duration (50us), bare seconds (0.001) or a
// multiple of the balanced runtime (1.5x); none may be negative.
func parseMagnitude(s string) (Magnitude, error) {
	s = strings.TrimSpace(s)
	if x, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return Magnitude{}, fmt.Errorf("%q: want a non-negative multiple like 1.5x", s)
		}
		return Magnitude{X: v}, nil
	}
	d, err := parseDelay(s)
	return Magnitude{D: d}, err
}

// parseDelay parses a non-negative duration or bare seconds.
func parseDelay(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("%q: want a non-negative time", s)
		}
		return time.Duration(v * 1e9), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a non-negative time like 50us, 1.5ms or 0.001 (seconds)", s)
	}
	return d, nil
}

// parseLevels parses a comma-separated list of magnitudes and ranges
// lo..hi[/N].
func parseLevels(s string) ([]Magnitude, error) {
	var out []Magnitude
	for _, item := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(item, "..")
		if !isRange {
			m, err := parseMagnitude(item)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		}
		n := 6
		if h, k, ok := strings.Cut(hi, "/"); ok {
			var err error
			if n, err = strconv.Atoi(k); err != nil || n < 1 || n > 1000 {
				return nil, fmt.Errorf("range %q: want lo..hi/N with 1 ≤ N ≤ 1000", item)
			}
			hi = h
		}
		a, err := parseMagnitude(lo)
		if err != nil {
			return nil, err
		}
		b, err := parseMagnitude(hi)
		if err != nil {
			return nil, err
		}
		for i := 0; i <= n; i++ {
			f := float64(i) / float64(n)
			out = append(out, Magnitude{
				D: a.D + time.Duration(f*float64(b.D-a.D)),
				X: a.X + f*(b.X-a.X),
			})
		}
	}
	return out, nil
}

// ReadTrace reads arrival vectors, one a line: values separated by commas
// or white space, each bare seconds (0.00012) or a duration (120us).
// Blank lines and lines starting with # are skipped. Every vector must
// have the same length.
func ReadTrace(r io.Reader) ([][]time.Duration, error) {
	var out [][]time.Duration
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var v []time.Duration
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			d, err := parseDelay(f)
			if err != nil {
				return nil, fmt.Errorf("%w: trace line %d: %v", ErrConfig, line, err)
			}
			v = append(v, d)
		}
		if len(out) > 0 && len(v) != len(out[0]) {
			return nil, fmt.Errorf("%w: trace line %d has %d values, the first had %d", ErrConfig, line, len(v), len(out[0]))
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty trace", ErrConfig)
	}
	return out, nil
}

// check reports whether the pattern fits np ranks.
func (im *Imbalance) check(np int) error {
	if im.Kind == "" {
		return fmt.Errorf("%w: no imbalance pattern", ErrConfig)
	}
	if im.Kind == "single" {
		if r := im.rank(np); r < 0 || r >= np {
			return fmt.Errorf("%w: --imbalance %q: rank out of range for %d ranks", ErrConfig, im.Spec, np)
		}
	}
	if im.Kind == "trace" {
		if len(im.Trace) == 0 {
			return fmt.Errorf("%w: trace %q has no vectors", ErrConfig, im.File)
		}
		if len(im.Trace[0]) != np {
			return fmt.Errorf("%w: trace %q has %d values a line, not one per rank (%d)", ErrConfig, im.File, len(im.Trace[0]), np)
		}
	}
	if len(im.Levels) == 0 {
		return fmt.Errorf("%w: --imbalance %q: no levels", ErrConfig, im.Spec)
	}
	return nil
}

func (im *Imbalance) rank(np int) int {
	if im.Rank < 0 {
		return np + im.Rank
	}
	return im.Rank
}

// relative reports whether some level or parameter is a multiple of the
// balanced runtime.
func (im *Imbalance) relative() bool {
	return im.Even.X != 0 || slices.ContainsFunc(im.Levels, func(m Magnitude) bool { return m.X != 0 })
}

// Arrivals returns n arrival vectors of np delays each, for the level of
// magnitude m (scale is what 1x stands for), drawn from a generator
// seeded with seed: the same vectors for the same arguments, so every
// algorithm and every rank sees the same ones. Every vector's earliest
// delay is 0 for the random kinds and traces.
func (im *Imbalance) Arrivals(np, n int, m Magnitude, scale time.Duration, seed uint64) [][]time.Duration {
	rng := rand.New(rand.NewPCG(seed, uint64(m.D)^math.Float64bits(m.X)))
	d := float64(m.Resolve(scale))
	out := make([][]time.Duration, n)
	for j := range out {
		a := make([]float64, np)
		switch im.Kind {
		case "single":
			a[im.rank(np)] = d
		case "alternating":
			even := float64(im.Even.Resolve(scale))
			for i := range a {
				a[i] = even
				if i%2 == 1 {
					a[i] = d
				}
			}
		case "uniform":
			for i := range a {
				a[i] = d * rng.Float64()
			}
		case "normal":
			for i := range a {
				a[i] = d * rng.NormFloat64()
			}
		case "gamma":
			for i := range a {
				a[i] = d * gammaVariate(rng, im.Shape)
			}
		case "bernoulli":
			for i := range a {
				if rng.Float64() < im.Prob {
					a[i] = d
				}
			}
		case "trace":
			for i, v := range im.Trace[j%len(im.Trace)] {
				a[i] = float64(v)
			}
		}
		if im.Kind == "normal" || im.Kind == "trace" {
			lo := slices.Min(a)
			for i := range a {
				a[i] -= lo
			}
		}
		out[j] = make([]time.Duration, np)
		for i, v := range a {
			out[j][i] = time.Duration(v)
		}
	}
	return out
}

// gammaVariate draws from the gamma distribution of shape k and scale 1
// (Marsaglia and Tsang, 2000; for k < 1 boosted by U^(1/k)).
func gammaVariate(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaVariate(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// spread returns max(a) − min(a), the absolute imbalance I(a).
func spread(a []time.Duration) time.Duration {
	return slices.Max(a) - slices.Min(a)
}
