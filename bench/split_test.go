package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport/record"
)

// TestRunSplit measures every algorithm on a few colors: the checksums
// agree (identical results), traffic and memory are counted, and the
// writers print every row; progress is told before every repetition and
// at the end.
func TestRunSplit(t *testing.T) {
	nalg := len(scoll.SplitAlgorithms())
	for _, colors := range []string{"1", "3", "unique"} {
		var steps []Progress
		rep, err := RunSplit(context.Background(), SplitConfig{Colors: colors, Keys: "random", Sorters: 3,
			Common: Common{NP: 13, Seed: 7, Reps: 2, Progress: func(p Progress) { steps = append(steps, p) }}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != nalg || len(MeasuredSplits(rep.Rows)) != nalg {
			t.Fatalf("colors %s: %d results, %d measured, want one per algorithm (%d)", colors, len(rep.Rows), len(MeasuredSplits(rep.Rows)), nalg)
		}
		for i, p := range steps {
			if p.Done != i || p.Total != 2*nalg || (p.Step == "") != (i == 2*nalg) {
				t.Fatalf("colors %s: progress %d of %d: %+v", colors, i, len(steps), p)
			}
		}
		if len(steps) != 2*nalg+1 || !strings.Contains(steps[1].Step, "repetition 2 of 2 (repetition 1: ") {
			t.Fatalf("colors %s: %d progress steps (%+v), want one per repetition and the end", colors, len(steps), steps[1])
		}
		for _, r := range rep.Rows {
			if r.Checksum != rep.Rows[0].Checksum {
				t.Fatalf("colors %s: %s checksum %s, %s %s", colors, r.Algorithm, r.Checksum, rep.Rows[0].Algorithm, rep.Rows[0].Checksum)
			}
			if r.Messages <= 0 || r.Bytes <= 0 || r.GroupBytesMax <= 0 || r.MedianMs <= 0 || len(r.Phases) == 0 || r.EstBytesPerRank <= 0 {
				t.Fatalf("colors %s: %+v: counts missing", colors, r)
			}
			if (r.Algorithm == "cheng") != (r.Sorters == 3) {
				t.Fatalf("%s: sorters %d: only cheng takes --sorters", r.Algorithm, r.Sorters)
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, "csv", rep.Rows); err != nil || strings.Count(buf.String(), "\n") != nalg+1 {
			t.Fatalf("csv: %v\n%s", err, buf.String())
		}
		buf.Reset()
		if err := Write(&buf, "json", rep.Rows); err != nil || strings.Count(buf.String(), "\n") != nalg {
			t.Fatalf("json lines: %v\n%s", err, buf.String())
		}
		for line := range strings.Lines(buf.String()) {
			var back SplitResult
			if err := json.Unmarshal([]byte(line), &back); err != nil || back.NP != 13 {
				t.Fatalf("json line %q: %v", line, err)
			}
		}
	}
	// Different keys give a different result, hence checksum.
	a, _ := RunSplit(context.Background(), SplitConfig{Keys: "rank", Common: Common{NP: 9, Reps: 1, Algorithms: []string{"merge"}}})
	b, _ := RunSplit(context.Background(), SplitConfig{Keys: "reverse", Common: Common{NP: 9, Reps: 1, Algorithms: []string{"merge"}}})
	if a.Rows[0].Checksum == b.Rows[0].Checksum {
		t.Fatal("rank and reverse keys give the same checksum")
	}
}

func TestRunSplitConfigErrors(t *testing.T) {
	for _, cfg := range []SplitConfig{
		{Common: Common{NP: 0}},
		{Common: Common{NP: 4, Algorithms: []string{"nope"}}},
		{Colors: "x", Common: Common{NP: 4}},
		{Keys: "sideways", Common: Common{NP: 4}},
		{Groups: []string{"distributed:1"}, Common: Common{NP: 4}},
		{Common: Common{NP: 4, Reps: -1}},
		{ColorLen: -1, Common: Common{NP: 4}},
		{Colors: "N", ColorLen: 1, Common: Common{NP: 40}}, // 40 colors need two base-36 digits
	} {
		if _, err := RunSplit(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	nalg := len(scoll.SplitAlgorithms())
	rep, err := RunSplit(context.Background(), SplitConfig{Common: Common{NP: 64, MaxMemory: 1000, Reps: 1}})
	if err != nil || len(MeasuredSplits(rep.Rows)) != 0 || len(rep.Skipped) != nalg || len(rep.Rows) != nalg {
		t.Fatalf("memory guard: %v, %d results, %d measured, %d skipped", err, len(rep.Rows), len(MeasuredSplits(rep.Rows)), len(rep.Skipped))
	}
	for _, r := range rep.Rows {
		if !strings.HasPrefix(r.Skipped, "memory: ") {
			t.Fatalf("%s: skipped %q, want the memory guard's reason", r.Algorithm, r.Skipped)
		}
	}
}

// TestRecordSplit records a cheng split with distributed tables and checks
// that the trace is consistent and holds the split's traffic.
func TestRecordSplit(t *testing.T) {
	rec := record.New()
	cfg := SplitConfig{Groups: []string{"distributed:4"}, Sorters: 4, Colors: "3", Common: Common{NP: 40, Algorithms: []string{"cheng"}}}
	if err := RecordSplit(context.Background(), cfg, rec); err != nil {
		t.Fatal(err)
	}
	tr, err := rec.Trace()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := RunSplit(context.Background(), SplitConfig{Groups: cfg.Groups, Sorters: 4, Colors: "3", Common: Common{NP: 40, Algorithms: cfg.Algorithms, Reps: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// The trace also holds the agreement's collectives and drops messages
	// to self: at least the split's own messages minus those.
	if tr.Size != 40 || tr.Messages() < rep.Rows[0].Messages/2 {
		t.Fatalf("trace of %d ranks with %d messages; the split sends %d", tr.Size, tr.Messages(), rep.Rows[0].Messages)
	}
}
