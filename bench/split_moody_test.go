package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport/record"
)

// integerOnly says whether the registered algorithm alg runs on integer
// colors and keys only.
func integerOnly(alg string) bool {
	return split.Refusal(alg, &split.Options{Algorithm: alg}) != nil
}

// checkAgree fails unless every measured row of rows has the same
// checksum, and returns it.
func checkAgree(t *testing.T, what string, rows []SplitResult) string {
	t.Helper()
	sum := ""
	for _, r := range rows {
		if r.Skipped != "" {
			continue
		}
		if r.Checksum == "" || r.MedianMs <= 0 || r.Messages < 0 {
			t.Fatalf("%s: %s: measurements missing: %+v", what, r.Algorithm, r)
		}
		if sum == "" {
			sum = r.Checksum
		} else if r.Checksum != sum {
			t.Fatalf("%s: %s checksum %s, others %s", what, r.Algorithm, r.Checksum, sum)
		}
	}
	return sum
}

// TestRunSplitBytes runs SplitBytes with string and 8-byte colors under
// every combination of the generalized split's flags: the integer-only
// algorithms are skipped rows saying they refuse, the others agree with
// each other and with Split on the same partition and order.
func TestRunSplitBytes(t *testing.T) {
	ctx := context.Background()
	algs := []string{"allgather", "allgather-chain", "bitonic", "hash", "hash64"}
	if _, ok := split.Lookup("gather-scatter"); ok {
		algs = append(algs, "gather-scatter")
	}
	for _, flags := range []struct{ noReorder, noSplit, chain bool }{
		{false, false, false}, {true, false, true}, {false, true, false}, {true, true, true}, {false, false, true},
	} {
		for _, colors := range []string{"small", "N"} {
			for _, clen := range []int{0, 5, 80} {
				base := SplitConfig{Colors: colors, Keys: "random",
					NoReorder: flags.noReorder, NoSplit: flags.noSplit, Chain: flags.chain, Common: Common{NP: 33, Seed: 3, Reps: 1}}
				what := fmt.Sprintf("%+v colors %s len %d", flags, colors, clen)
				ints, err := RunSplit(ctx, SplitConfig{Colors: colors, Keys: "random",
					NoReorder: flags.noReorder, NoSplit: flags.noSplit, Chain: flags.chain, Common: Common{NP: 33, Seed: 3, Reps: 1, Algorithms: []string{"allgather"}}})
				if err != nil {
					t.Fatal(err)
				}
				want := checkAgree(t, what+" (Split)", ints.Rows)
				cfg := base
				cfg.Bytes, cfg.ColorLen, cfg.Algorithms = true, clen, algs
				rep, err := RunSplit(ctx, cfg)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if len(rep.Rows) != len(algs) {
					t.Fatalf("%s: %d rows for %d algorithms", what, len(rep.Rows), len(algs))
				}
				for _, r := range rep.Rows {
					if integerOnly(r.Algorithm) != strings.HasPrefix(r.Skipped, "refused: ") {
						t.Fatalf("%s: %s skipped %q", what, r.Algorithm, r.Skipped)
					}
					if !r.ByteItems || r.ColorLen != clen || r.Reorder == flags.noReorder || r.Split == flags.noSplit || r.Chain != flags.chain {
						t.Fatalf("%s: row describes %s %s", what, r.Items(), r.Does())
					}
					if r.Skipped == "" && flags.chain && r.GroupBytesMax > 64 {
						t.Fatalf("%s: %s: a chain of %d bytes", what, r.Algorithm, r.GroupBytesMax)
					}
				}
				if got := checkAgree(t, what, rep.Rows); got != want {
					t.Fatalf("%s: SplitBytes checksum %s, Split's %s", what, got, want)
				}
			}
		}
	}
}

// TestSplitFigures runs every figure mode at two small sizes: one row per
// size, variant and line; the rows of one configuration agree; refusals
// and algorithms missing from the build are skipped rows; the writers and
// the memory guard handle figures.
func TestSplitFigures(t *testing.T) {
	ctx := context.Background()
	nps := []int{8, 33}
	for _, name := range SplitFigureNames() {
		fig, err := LookupSplitFigure(name)
		if err != nil {
			t.Fatal(err)
		}
		var streamed int
		rep, err := RunSplitFigure(ctx, fig, SplitConfig{Keys: "random", OnRow: func(SplitResult) { streamed++ }, Common: Common{Seed: 5, Reps: 1}}, nps)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := len(nps) * len(fig.Variants) * len(fig.Algorithms); len(rep.Rows) != want || streamed != want {
			t.Fatalf("%s: %d rows (%d streamed), want %d", name, len(rep.Rows), streamed, want)
		}
		for _, n := range nps {
			for _, v := range fig.Variants {
				var rows []SplitResult
				for _, r := range rep.Rows {
					if r.NP == n && r.Variant == v.Name() {
						rows = append(rows, r)
					}
				}
				what := fmt.Sprintf("%s n=%d %s", name, n, v.Name())
				checkAgree(t, what, rows)
				for _, r := range rows {
					_, registered := split.Lookup(r.Algorithm)
					refused := v.Bytes && integerOnly(r.Algorithm)
					switch {
					case !registered && !strings.HasPrefix(r.Skipped, "not registered"),
						registered && refused && !strings.HasPrefix(r.Skipped, "refused: "),
						registered && !refused && r.Skipped != "":
						t.Fatalf("%s: %s skipped %q", what, r.Algorithm, r.Skipped)
					}
					if !r.Chain || r.Reorder == v.NoReorder || r.Split == v.NoSplit || r.ColorLen != v.ColorLen {
						t.Fatalf("%s: %s: row describes %s %s", what, r.Algorithm, r.Items(), r.Does())
					}
				}
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, "table", rep.Rows); err != nil || strings.Count(buf.String(), "\n") != len(rep.Rows)+1 {
			t.Fatalf("%s: table: %v\n%s", name, err, buf.String())
		}
	}
	if _, err := LookupSplitFigure("moody9"); !errors.Is(err, ErrConfig) {
		t.Fatalf("unknown figure: %v", err)
	}
	// Fig. 4's allgather baseline holds n items per rank: a limit between
	// its estimate and bitonic's skips it alone.
	fig, _ := LookupSplitFigure("moody4")
	rep, err := RunSplitFigure(ctx, fig, SplitConfig{Common: Common{Reps: 1, MaxMemory: 100_000, Algorithms: []string{"bitonic", "allgather-chain"}}}, []int{33})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if (r.Algorithm == "allgather-chain") != strings.HasPrefix(r.Skipped, "memory: ") {
			t.Fatalf("memory guard at 100,000 bytes: %s skipped %q (estimate %.0f B per rank)", r.Algorithm, r.Skipped, r.EstBytesPerRank)
		}
	}
	if _, err := RunSplitFigure(ctx, fig, SplitConfig{Common: Common{Reps: 1, Algorithms: []string{"nope"}}}, []int{8}); !errors.Is(err, ErrConfig) {
		t.Fatalf("unknown --algorithm in a figure: %v", err)
	}
}

// TestSplitMemoryGrowth checks the memory columns' shapes between 16 and
// 128 ranks: a chain's group stays the same, the allgather baseline's
// estimate grows as n and the chain algorithms' at most as lg n.
func TestSplitMemoryGrowth(t *testing.T) {
	est := func(alg string, n int) float64 {
		return float64(splitMemory(alg, n, 1, 1, 5+KeyBytes+8, true)) / float64(n)
	}
	if r := est("allgather-chain", 1024) / est("allgather-chain", 128); r < 7 || r > 9 {
		t.Fatalf("allgather-chain estimate per rank grows %.1f× from 128 to 1024 ranks, want about 8×", r)
	}
	for _, alg := range []string{"bitonic", "hash", "hash64"} {
		if r := est(alg, 1024) / est(alg, 128); r > 1.5 {
			t.Fatalf("%s estimate per rank grows %.1f× from 128 to 1024 ranks", alg, r)
		}
	}
	var groups []int
	for _, n := range []int{16, 128} {
		rep, err := RunSplit(context.Background(), SplitConfig{ColorLen: 5, Colors: "small", NoReorder: true, Chain: true, Common: Common{NP: n, Reps: 1, Algorithms: []string{"hash"}}})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Rows[0]
		if r.AllocBytesPerRank <= 0 {
			t.Fatalf("n=%d: no allocation measured", n)
		}
		groups = append(groups, r.GroupBytesMax)
	}
	if !slices.Equal(groups, []int{groups[0], groups[0]}) {
		t.Fatalf("chain group bytes at 16 and 128 ranks: %v", groups)
	}
}

// TestRecordSplitBytes records generalized splits into valid traces
// (sorting ones with chain results among them: their contributors are
// asked until the last reply); a configuration the algorithm refuses is a
// configuration error.
func TestRecordSplitBytes(t *testing.T) {
	for _, cfg := range []SplitConfig{
		{ColorLen: 80, Colors: "small", NoReorder: true, Chain: true, Common: Common{NP: 33, Algorithms: []string{"hash"}}},
		{ColorLen: 5, Colors: "small", Chain: true, Common: Common{NP: 33, Algorithms: []string{"bitonic"}}},
		{Bytes: true, Colors: "N", Chain: true, Common: Common{NP: 33, Algorithms: []string{"hash64"}}},
		{NoSplit: true, Common: Common{NP: 33, Algorithms: []string{"allgather-chain"}}},
	} {
		rec := record.New()
		if err := RecordSplit(context.Background(), cfg, rec); err != nil {
			t.Fatalf("%s: %v", cfg.Algorithms[0], err)
		}
		tr, err := rec.Trace()
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if tr.Size != 33 || tr.Messages() == 0 {
			t.Fatalf("%s: trace of %d ranks, %d messages", cfg.Algorithms[0], tr.Size, tr.Messages())
		}
	}
	cfg := SplitConfig{ColorLen: 5, Common: Common{NP: 8, Algorithms: []string{"allgather"}}}
	if err := RecordSplit(context.Background(), cfg, record.New()); !errors.Is(err, ErrConfig) {
		t.Fatalf("recording a refused configuration: %v", err)
	}
}

// TestReadSplitCSV: results written as CSV read back equal, phases included.
func TestReadSplitCSV(t *testing.T) {
	rep, err := RunSplitFigure(context.Background(), mustFigure(t, "moody4"), SplitConfig{Common: Common{Reps: 1, Seed: 1}}, []int{8})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "csv", rep.Rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSplitCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rep.Rows) {
		t.Fatalf("%d rows read, %d written", len(got), len(rep.Rows))
	}
	// Equal as written (times have 3 decimals there).
	var again, want bytes.Buffer
	phases := 0
	for _, w := range rep.Rows {
		phases += len(w.Phases)
		if err := Write(&want, "csv", []SplitResult{w}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range got {
		if err := Write(&again, "csv", []SplitResult{g}); err != nil {
			t.Fatal(err)
		}
	}
	if phases == 0 {
		t.Fatal("no phases written: the test reads none back")
	}
	if again.String() != want.String() {
		t.Fatalf("read:\n%s\nwrote:\n%s", again.String(), want.String())
	}
	if _, err := ReadSplitCSV(strings.NewReader("a,b\n1,2\n")); err == nil {
		t.Fatal("a CSV without split columns read")
	}
}

func mustFigure(t *testing.T, name string) SplitFigure {
	t.Helper()
	f, err := LookupSplitFigure(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPeakMeter holds a known amount of live memory while the meter runs:
// its peak must cover it, within the resolution and some slack (memory
// live before the window may die in it; the runtime allocates too).
func TestPeakMeter(t *testing.T) {
	const size = 64 << 20
	m := startPeak(PeakGCPercent)
	block := make([]byte, size)
	for i := range block {
		block[i] = byte(i)
	}
	time.Sleep(20 * time.Millisecond) // a few samples while it lives
	runtime.GC()
	time.Sleep(5 * time.Millisecond)
	runtime.KeepAlive(block)
	peak, res := m.end()
	if peak < size-8<<20 || peak > size+res+16<<20 {
		t.Fatalf("peak %d B (resolution %d B) while %d B were live", peak, res, size)
	}
}

// TestSplitPeak: with Peak set, every configuration reports its peak and
// resolution. (How the peak grows with n is measured, not asserted: it is
// the sum over the ranks at one moment, which depends on how in step the
// goroutines run on a loaded machine.)
func TestSplitPeak(t *testing.T) {
	for _, alg := range []string{"allgather", "bitonic"} {
		rep, err := RunSplit(context.Background(), SplitConfig{NoSplit: true, Chain: true, Peak: true, Common: Common{NP: 64, Reps: 1, Algorithms: []string{alg}}})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Rows[0]
		if r.Skipped != "" || r.PeakBytesPerRank < 0 || r.PeakResolutionPerRank <= 0 {
			t.Fatalf("%s: peak %.0f±%.0f (%s)", alg, r.PeakBytesPerRank, r.PeakResolutionPerRank, r.Skipped)
		}
		var buf bytes.Buffer
		if err := Write(&buf, "csv", rep.Rows); err != nil {
			t.Fatal(err)
		}
		back, err := ReadSplitCSV(&buf)
		if err != nil || len(back) != 1 || math.Abs(back[0].PeakBytesPerRank-r.PeakBytesPerRank) > 0.051 || math.Abs(back[0].PeakResolutionPerRank-r.PeakResolutionPerRank) > 0.051 {
			t.Fatalf("%s: CSV round trip: %+v, %v", alg, back, err)
		}
	}
}
