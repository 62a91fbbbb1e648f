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
// writers print every row.
func TestRunSplit(t *testing.T) {
	nalg := len(scoll.SplitAlgorithms())
	for _, colors := range []string{"1", "3", "unique"} {
		rep, err := RunSplit(context.Background(), SplitConfig{NP: 13, Colors: colors, Keys: "random", Seed: 7, Reps: 2, Sorters: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != nalg || len(rep.Measured()) != nalg {
			t.Fatalf("colors %s: %d results, %d measured, want one per algorithm (%d)", colors, len(rep.Results), len(rep.Measured()), nalg)
		}
		for _, r := range rep.Results {
			if r.Checksum != rep.Results[0].Checksum {
				t.Fatalf("colors %s: %s checksum %s, %s %s", colors, r.Algorithm, r.Checksum, rep.Results[0].Algorithm, rep.Results[0].Checksum)
			}
			if r.Messages <= 0 || r.Bytes <= 0 || r.GroupBytesMax <= 0 || r.MedianMs <= 0 || len(r.Phases) == 0 || r.EstBytesPerRank <= 0 {
				t.Fatalf("colors %s: %+v: counts missing", colors, r)
			}
			if (r.Algorithm == "cheng") != (r.Sorters == 3) {
				t.Fatalf("%s: sorters %d: only cheng takes --sorters", r.Algorithm, r.Sorters)
			}
		}
		var buf bytes.Buffer
		if err := WriteSplit(&buf, "csv", rep.Results); err != nil || strings.Count(buf.String(), "\n") != nalg+1 {
			t.Fatalf("csv: %v\n%s", err, buf.String())
		}
		buf.Reset()
		var back []SplitResult
		if err := WriteSplit(&buf, "json", rep.Results); err != nil || json.Unmarshal(buf.Bytes(), &back) != nil || len(back) != nalg {
			t.Fatalf("json: %v\n%s", err, buf.String())
		}
	}
	// Different keys give a different result, hence checksum.
	a, _ := RunSplit(context.Background(), SplitConfig{NP: 9, Keys: "rank", Reps: 1, Algorithms: []string{"merge"}})
	b, _ := RunSplit(context.Background(), SplitConfig{NP: 9, Keys: "reverse", Reps: 1, Algorithms: []string{"merge"}})
	if a.Results[0].Checksum == b.Results[0].Checksum {
		t.Fatal("rank and reverse keys give the same checksum")
	}
}

func TestRunSplitConfigErrors(t *testing.T) {
	for _, cfg := range []SplitConfig{
		{NP: 0},
		{NP: 4, Algorithms: []string{"nope"}},
		{NP: 4, Colors: "x"},
		{NP: 4, Keys: "sideways"},
		{NP: 4, Groups: []string{"distributed:1"}},
		{NP: 4, Reps: -1},
		{NP: 4, ColorLen: -1},
		{NP: 40, Colors: "N", ColorLen: 1}, // 40 colors need two base-36 digits
	} {
		if _, err := RunSplit(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	nalg := len(scoll.SplitAlgorithms())
	rep, err := RunSplit(context.Background(), SplitConfig{NP: 64, MaxMemory: 1000, Reps: 1})
	if err != nil || len(rep.Measured()) != 0 || len(rep.Skipped) != nalg || len(rep.Results) != nalg {
		t.Fatalf("memory guard: %v, %d results, %d measured, %d skipped", err, len(rep.Results), len(rep.Measured()), len(rep.Skipped))
	}
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Skipped, "memory: ") {
			t.Fatalf("%s: skipped %q, want the memory guard's reason", r.Algorithm, r.Skipped)
		}
	}
}

// TestRecordSplit records a cheng split with distributed tables and checks
// that the trace is consistent and holds the split's traffic.
func TestRecordSplit(t *testing.T) {
	rec := record.New()
	cfg := SplitConfig{NP: 40, Algorithms: []string{"cheng"}, Groups: []string{"distributed:4"}, Sorters: 4, Colors: "3"}
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
	rep, err := RunSplit(context.Background(), SplitConfig{NP: 40, Algorithms: cfg.Algorithms, Groups: cfg.Groups, Sorters: 4, Colors: "3", Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The trace also holds the agreement's collectives and drops messages
	// to self: at least the split's own messages minus those.
	if tr.Size != 40 || tr.Messages() < rep.Results[0].Messages/2 {
		t.Fatalf("trace of %d ranks with %d messages; the split sends %d", tr.Size, tr.Messages(), rep.Results[0].Messages)
	}
}
