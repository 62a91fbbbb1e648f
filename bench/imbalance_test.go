package bench

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll"
)

func TestParseImbalance(t *testing.T) {
	us := func(n int) Magnitude { return Magnitude{D: time.Duration(n) * time.Microsecond} }
	for _, c := range []struct {
		spec string
		want Imbalance
	}{
		{"single:rank=P-1:delay=50us", Imbalance{Kind: "single", Rank: -1, Prob: 0.5, Levels: []Magnitude{us(50)}}},
		{"single:delay=0,100us,200us:rank=3", Imbalance{Kind: "single", Rank: 3, Prob: 0.5, Levels: []Magnitude{{}, us(100), us(200)}}},
		{"single:delay=0..3x/3", Imbalance{Kind: "single", Rank: -1, Prob: 0.5, Levels: []Magnitude{{}, {X: 1}, {X: 2}, {X: 3}}}},
		{"single:delay=0..300us", Imbalance{Kind: "single", Rank: -1, Prob: 0.5, Levels: []Magnitude{{}, us(50), us(100), us(150), us(200), us(250), us(300)}}},
		{"alternating:even=10us:odd=0.001", Imbalance{Kind: "alternating", Rank: -1, Prob: 0.5, Even: us(10), Levels: []Magnitude{us(1000)}}},
		{"alternating:delay=1ms", Imbalance{Kind: "alternating", Rank: -1, Prob: 0.5, Levels: []Magnitude{us(1000)}}},
		{"uniform:max=1ms", Imbalance{Kind: "uniform", Rank: -1, Prob: 0.5, Levels: []Magnitude{us(1000)}}},
		{"normal:sd=20us,40us", Imbalance{Kind: "normal", Rank: -1, Prob: 0.5, Levels: []Magnitude{us(20), us(40)}}},
		{"gamma:k=2,theta=50us", Imbalance{Kind: "gamma", Rank: -1, Prob: 0.5, Shape: 2, Levels: []Magnitude{us(50)}}},
		{"bernoulli:p=0.25:delay=1x", Imbalance{Kind: "bernoulli", Rank: -1, Prob: 0.25, Levels: []Magnitude{{X: 1}}}},
		{"trace:some/file.csv", Imbalance{Kind: "trace", Rank: -1, Prob: 0.5, File: "some/file.csv", Levels: []Magnitude{{}}}},
	} {
		got, err := ParseImbalance(c.spec)
		c.want.Spec = c.spec
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if got.Kind != c.want.Kind || got.Rank != c.want.Rank || got.Even != c.want.Even || got.Shape != c.want.Shape ||
			got.Prob != c.want.Prob || got.File != c.want.File || !slices.Equal(got.Levels, c.want.Levels) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.spec, got, c.want)
		}
	}
	for _, bad := range []string{"", "skewed:delay=1ms", "single", "single:delay=-1ms", "single:rank=P:delay=1ms", "single:rank=x:delay=1",
		"single:delay=1ms:max=2ms", "gamma:theta=1ms", "gamma:k=0:theta=1ms", "bernoulli:p=2:delay=1ms", "single:delay=0..1ms/0", "trace:", "uniform:max=1ms:5"} {
		if _, err := ParseImbalance(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%q: err %v, want ErrConfig", bad, err)
		}
	}
}

func TestMagnitudeString(t *testing.T) {
	for m, want := range map[Magnitude]string{{}: "0s", {D: 50 * time.Microsecond}: "50µs", {X: 1.5}: "1.5x", {D: time.Millisecond, X: 2}: "1ms+2x"} {
		if got := m.String(); got != want {
			t.Errorf("%+v: %q, want %q", m, got, want)
		}
	}
}

func TestArrivals(t *testing.T) {
	const np, n = 6, 200
	ms := time.Millisecond
	parse := func(spec string) *Imbalance {
		im, err := ParseImbalance(spec)
		if err != nil {
			t.Fatal(err)
		}
		return &im
	}
	single := parse("single:rank=P-2:delay=1x").Arrivals(np, 2, Magnitude{X: 2}, ms, 1)
	if want := []time.Duration{0, 0, 0, 0, 2 * ms, 0}; !slices.Equal(single[1], want) {
		t.Errorf("single: %v, want %v", single[1], want)
	}
	alt := parse("alternating:even=1ms:odd=3ms").Arrivals(np, 1, Magnitude{D: 3 * ms}, 0, 1)
	if want := []time.Duration{ms, 3 * ms, ms, 3 * ms, ms, 3 * ms}; !slices.Equal(alt[0], want) {
		t.Errorf("alternating: %v, want %v", alt[0], want)
	}
	for _, spec := range []string{"uniform:max=1ms", "normal:sd=1ms", "gamma:k=2:theta=1ms", "gamma:k=0.5:theta=1ms", "bernoulli:p=0.3:delay=1ms"} {
		im := parse(spec)
		a := im.Arrivals(np, n, im.Levels[0], 0, 7)
		if b := im.Arrivals(np, n, im.Levels[0], 0, 7); !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("%s: not reproducible", spec)
		}
		var sum float64
		for _, v := range a {
			for _, d := range v {
				if d < 0 {
					t.Fatalf("%s: negative delay %v", spec, d)
				}
				sum += d.Seconds() / ms.Seconds()
			}
		}
		mean := sum / (np * n)
		// Loose bounds on the mean delay in ms: uniform 0.5, gamma kθ,
		// bernoulli p, normal shifted by its minimum (about 1.27 for 6).
		want := map[string]float64{"uniform": 0.5, "normal": 1.27, "gamma": 2, "bernoulli": 0.3}[im.Kind]
		if im.Shape == 0.5 {
			want = 0.5
		}
		if math.Abs(mean-want) > 0.25*want {
			t.Errorf("%s: mean delay %.3f ms, want about %.2f", spec, mean, want)
		}
		if im.Kind == "normal" && slices.Min(a[0]) != 0 {
			t.Errorf("normal: earliest delay %v, want 0", slices.Min(a[0]))
		}
	}
	tr, err := ReadTrace(strings.NewReader("# a trace\n0, 1ms, 0.002\n\n5us 5us 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	im := parse("trace:x")
	im.Trace = tr
	got := im.Arrivals(3, 3, Magnitude{}, 0, 0)
	want := [][]time.Duration{{0, ms, 2 * ms}, {0, 0, time.Second - 5*time.Microsecond}, {0, ms, 2 * ms}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("trace: %v, want %v", got, want)
	}
	for _, bad := range []string{"", "# only\n", "1,2\n1\n", "1,x\n", "-1\n"} {
		if _, err := ReadTrace(strings.NewReader(bad)); !errors.Is(err, ErrConfig) {
			t.Errorf("ReadTrace(%q): %v", bad, err)
		}
	}
}

// The clock exchange on in-process ranks, which share a clock: every offset
// it estimates is small (up to the scheduling noise of a loaded machine).
func TestSyncClock(t *testing.T) {
	offsets := make([]float64, 3)
	epoch := time.Now()
	err := scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		k := &rankClock{epoch: epoch}
		unc, err := syncClock(ctx, c, k)
		offsets[c.Rank()] = k.offset
		if c.Rank() == 0 && !(unc > 0) {
			t.Errorf("uncertainty %v, want > 0", unc)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, off := range offsets {
		if math.Abs(off) > 0.05 {
			t.Errorf("rank %d: offset %v s to a shared clock", r, off)
		}
	}
}

// A small run: 4 ranks, rank 3 late by 2 ms, binomial and clairvoyant.
func TestRunImbalanceSingle(t *testing.T) {
	im, err := ParseImbalance("single:rank=P-1:delay=0,2ms")
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	rep, err := RunImbalance(context.Background(), ImbalanceConfig{Imbalance: im, Resamples: 200, Bootstrap: 200, Common: Common{NP: 4, Algorithms: []string{"binomial", "clairvoyant"}, Sizes: []int{4096}, Reps: 6, Warmup: 1, Seed: 1, Progress: func(Progress) { progress++ }}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reference != "clairvoyant" || rep.Sync != "barrier" || rep.Wait != "sleep" || rep.NP != 4 || progress != 3 {
		t.Errorf("report %+v, %d progress calls", rep, progress)
	}
	if len(rep.Rows) != 4 {
		t.Fatalf("%d points, want 2 levels × 2 algorithms", len(rep.Rows))
	}
	for i, p := range rep.Rows {
		alg := []string{"binomial", "clairvoyant"}[i%2]
		level := []float64{0, 2000}[i/2]
		if p.Algorithm != alg || p.LevelUs != level || p.ImbalanceUs != level || p.N != 6 || p.Bytes != 4096 {
			t.Errorf("point %d: %+v", i, p)
		}
		if !(p.CILoUs <= p.MedianUs && p.MedianUs <= p.CIHiUs && p.MinUs <= p.MedianUs && p.MinUs > 0) {
			t.Errorf("point %d: median %v, CI [%v, %v], min %v", i, p.MedianUs, p.CILoUs, p.CIHiUs, p.MinUs)
		}
		if !(p.P > 0 && p.P <= 1) || (alg == "clairvoyant" && (p.Ratio != 1 || p.P != 1)) {
			t.Errorf("point %d: ratio %v, p %v", i, p.Ratio, p.P)
		}
		if level == 0 && (p.AbsorptionUs != 0 || p.ImbalanceN != 0) {
			t.Errorf("balanced point %d: absorption %v", i, p.AbsorptionUs)
		}
		// The last rank arrives 2 ms after the first: no algorithm ends
		// before it has its data.
		if level > 0 && (p.MedianUs < 2000 || p.AchievedUs < 2000) {
			t.Errorf("%s under a 2 ms delay: median %v µs, achieved imbalance %v µs", alg, p.MedianUs, p.AchievedUs)
		}
	}
	if rep.Delay.N != 12 || rep.Delay.MedianUs < 0 {
		t.Errorf("delay accuracy %+v: want 12 waits (one delayed rank, 2 algorithms, 6 measurements), none early", rep.Delay)
	}
}

// The window synchronisation and a random pattern with a relative level.
func TestRunImbalanceWindow(t *testing.T) {
	im, err := ParseImbalance("uniform:max=1x")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunImbalance(context.Background(), ImbalanceConfig{Imbalance: im,
		Sync: "window", Resamples: 100, Bootstrap: 100, Common: Common{NP: 3, Algorithms: []string{"binomial", "pipeline"}, Sizes: []int{1024}, Reps: 4, Warmup: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reference != "binomial" || len(rep.Rows) != 4 {
		t.Fatalf("reference %s, %d points", rep.Reference, len(rep.Rows))
	}
	scale := rep.Rows[0].MedianUs // binomial's balanced median is 1x
	for _, p := range rep.Rows {
		if !(p.WindowUs > 0) {
			t.Errorf("%+v: no window", p)
		}
	}
	if got := rep.Rows[2].LevelUs; math.Abs(got-scale) > 0.01 {
		t.Errorf("level 1x = %v µs, want binomial's balanced median %v", got, scale)
	}
	if rep.Delay.N == 0 {
		t.Error("no delays measured: every rank waits for its window")
	}
	bad := []ImbalanceConfig{
		{Imbalance: im, Sync: "double", Common: Common{NP: 4}},
		{Imbalance: im, Wait: "nap", Common: Common{NP: 4}},
		{Imbalance: im, Reference: "clairvoyant", Common: Common{NP: 4, Algorithms: []string{"binomial"}}},
		{Imbalance: im, Common: Common{NP: 4, Algorithms: []string{"nope"}}},
		{Common: Common{NP: 4}},
		{Imbalance: Imbalance{Kind: "single", Rank: 4, Levels: []Magnitude{{}}}, Common: Common{NP: 4}},
	}
	for _, cfg := range bad {
		if _, err := RunImbalance(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", cfg, err)
		}
	}
}
