package bench

import (
	"context"
	"errors"
	"github.com/scoll/scoll/algorithms"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll"
)

// A tiny real run: np=2, sizes 8 and 1K, every allreduce algorithm.
func TestRunTiny(t *testing.T) {
	var calls int
	rep, err := Run(context.Background(), Config{
		Op: "allreduce", Common: Common{NP: 2, Sizes: []int{8, 1024}, Reps: 5, Warmup: 2, Budget: time.Second, Progress: func(Progress) { calls++ }},
	})
	if err != nil {
		t.Fatal(err)
	}
	algs := scoll.Algorithms("allreduce")
	if len(rep.Rows)+len(rep.Skipped) != 2*len(algs) || len(rep.Rows) == 0 {
		t.Fatalf("%d results and %d skipped for %d algorithms × 2 sizes: %v", len(rep.Rows), len(rep.Skipped), len(algs), rep.Skipped)
	}
	if calls != 2*len(algs)+1 {
		t.Errorf("Progress called %d times, want %d", calls, 2*len(algs)+1)
	}
	for i, r := range rep.Rows {
		wantBytes := []int{8, 1024}[i%2]
		if r.Op != "allreduce" || r.NP != 2 || r.Type != "float32" || r.Bytes != wantBytes || r.Count != wantBytes/4 {
			t.Errorf("row %d: %+v", i, r)
		}
		if r.Iters != 5 || r.Warmup != 2 {
			t.Errorf("row %d: %d warm-up and %d timed calls, want 2 and 5", i, r.Warmup, r.Iters)
		}
		if !(r.AvgUs > 0 && r.MinUs <= r.AvgUs && r.AvgUs <= r.MaxUs) || r.GBps <= 0 {
			t.Errorf("row %d: times %+v", i, r)
		}
	}
	if rep.Rows[0].Algorithm != algs[0].Name {
		t.Errorf("first row %s, want the first registered algorithm %s", rep.Rows[0].Algorithm, algs[0].Name)
	}
}

// Every op, several types and a non-power-of-two rank count: every result
// is verified, so an error here is a wrong result or a failed call.
func TestRunEveryOp(t *testing.T) {
	for _, op := range Ops() {
		for _, typ := range []string{"int8", "int32", "float64"} {
			if testing.Short() && typ != "int32" {
				continue
			}
			rep, err := Run(context.Background(), Config{
				Op: op, Root: 1, Type: typ, Common: Common{NP: 3, Sizes: []int{0, 8, 1000}, Reps: 2, Warmup: 1, Budget: time.Second},
			})
			if err != nil {
				t.Errorf("%s %s: %v", op, typ, err)
				continue
			}
			if len(rep.Rows) == 0 {
				t.Errorf("%s %s: no results (skipped %v)", op, typ, rep.Skipped)
			}
		}
	}
}

func TestRunAuto(t *testing.T) {
	rep, err := Run(context.Background(), Config{Op: "bcast", Root: 4, Common: Common{NP: 5, Algorithms: []string{Auto}, Sizes: []int{64}, Reps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Algorithm != Auto {
		t.Fatalf("results %+v", rep.Rows)
	}
	// The row names the algorithm scoll chose, one registered for bcast.
	r := rep.Rows[0]
	if !slices.ContainsFunc(scoll.Algorithms("bcast"), func(a scoll.AlgorithmInfo) bool { return a.Name == r.Chosen }) {
		t.Errorf("auto row chose %q, not a bcast algorithm", r.Chosen)
	}
	if r.Name() != "auto ("+r.Chosen+")" {
		t.Errorf("Name() = %q", r.Name())
	}
}

// A named algorithm's row has no Chosen: the name says it.
func TestRunNamedHasNoChoice(t *testing.T) {
	rep, err := Run(context.Background(), Config{Op: "allreduce", Common: Common{NP: 2, Algorithms: []string{"ring"}, Sizes: []int{64}, Reps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.Chosen != "" || r.Name() != "ring" {
		t.Errorf("ring row: chosen %q, name %q", r.Chosen, r.Name())
	}
}

// OnRow and OnSkip see every row and skip as it happens, in the
// Report's order; cancelling the run after the first result leaves it in
// the Report with an error wrapping context.Canceled.
func TestRunStreamsAndCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []Result
	var skips []Skip
	rep, err := Run(ctx, Config{
		Op: "allreduce", Type: "int32",
		OnRow: func(r Result) {
			got = append(got, r)
			if len(got) == 2 {
				cancel()
			}
		}, Common: Common{NP: 3, Algorithms: []string{"recursive-doubling", "ring", "rabenseifner"}, Sizes: []int{2, 64, 256}, Reps: 2, OnSkip: func(s Skip) { skips = append(skips, s) }},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(got) != 2 || !slices.Equal(got, rep.Rows) {
		t.Errorf("streamed %v, report %v", got, rep.Rows)
	}
	if len(skips) != 1 || !slices.Equal(skips, rep.Skipped) || skips[0].Bytes != 2 {
		t.Errorf("skips streamed %v, report %v", skips, rep.Skipped)
	}
}

func TestBudgetStopsIterating(t *testing.T) {
	rep, err := Run(context.Background(), Config{Op: "allreduce", Common: Common{NP: 2, Algorithms: []string{Auto}, Sizes: []int{1 << 20}, Reps: 1 << 30, Warmup: -1, Budget: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if r.Iters < 1 || r.Iters >= 1<<30 || r.Warmup != 0 {
		t.Errorf("%d timed and %d warm-up calls; want the budget to stop the loop, no warm-up", r.Iters, r.Warmup)
	}
}

func TestSkips(t *testing.T) {
	var pow2 string
	for _, a := range scoll.Algorithms("allgather") {
		if a.PowerOfTwo {
			pow2 = a.Name
		}
	}
	if pow2 == "" {
		t.Skip("no power-of-two-only allgather algorithm registered")
	}
	rep, err := Run(context.Background(), Config{Op: "allgather", Type: "int32", Common: Common{NP: 3, Algorithms: []string{pow2, Auto}, Sizes: []int{2, 8}, Reps: 1, MaxMemory: 95}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rep.Skipped {
		got = append(got, s.String())
	}
	want := []string{
		"skipped " + pow2 + ": needs a power-of-two number of ranks (np=3)",
		"skipped auto at 2 bytes: smaller than one int32 element",
		"skipped auto at 8 bytes: estimated memory at least 192.1 KiB (buffers 96 B, 3 ranks × 64 KiB, schedules not counted) over 3 ranks exceeds the limit of 95",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(rep.Rows) != 0 {
		t.Errorf("skipped:\n%s\nwant:\n%s\nresults %v", strings.Join(got, "\n"), strings.Join(want, "\n"), rep.Rows)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Op: "allreduction"},
		{Type: "complex64"},
		{Common: Common{NP: -1}},
		{Op: "bcast", Root: 4, Common: Common{NP: 4}},
		{Op: "reduce", Root: -1},
		{Common: Common{Algorithms: []string{"no-such-algorithm"}}},
		{Common: Common{Sizes: []int{}}},
		{Common: Common{Sizes: []int{-8}}},
		{Common: Common{Reps: -1}},
		{Common: Common{Budget: -time.Second}},
		{Knobs: negativeSegment()},
	} {
		cfg.Progress = func(Progress) { t.Errorf("%+v: ran", cfg) }
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("Run(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

// check must catch a wrong result.
func TestCheckDetectsWrongResult(t *testing.T) {
	k := &typed[float32]{op: "allreduce", rank: 1, np: 2, n: 3, recv: []float32{
		val[float32](0, 0) + val[float32](1, 0),
		val[float32](0, 1) + val[float32](1, 1),
		val[float32](0, 2) + val[float32](1, 2),
	}}
	if err := k.check(); err != nil {
		t.Fatalf("right result rejected: %v", err)
	}
	k.recv[2]++
	if err := k.check(); err == nil || !strings.Contains(err.Error(), "recv[2]") {
		t.Errorf("wrong result: %v", err)
	}
	g := &typed[int16]{op: "alltoall", rank: 0, np: 2, n: 2, recv: []int16{val[int16](0, 0), val[int16](0, 1), val[int16](2, 1), val[int16](2, 0)}}
	if err := g.check(); err == nil || !strings.Contains(err.Error(), "recv block 1: element[0]") {
		t.Errorf("swapped alltoall elements: %v", err)
	}
	e := &typed[int32]{op: "exscan", rank: 0, np: 2, n: 1, recv: []int32{0}}
	if err := e.check(); err == nil {
		t.Error("exscan: rank 0's overwritten recv accepted")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{Common: Common{NP: 2, Sizes: []int{8}, Algorithms: []string{Auto}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// negativeSegment returns knob values with a segment size of -1 bytes.
func negativeSegment() (kv algorithms.KnobValues) {
	kv[algorithms.SegmentKnob.Index()] = -1
	return kv
}
