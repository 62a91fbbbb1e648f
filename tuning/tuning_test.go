package tuning

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

const sample = `{
  "version": 1,
  "source": "test",
  "rules": [
    {"collective": "allreduce", "ranks": 8, "min_bytes": 0, "algorithm": "recursive-doubling"},
    {"collective": "allreduce", "ranks": 8, "min_bytes": 65536, "algorithm": "ring"},
    {"collective": "allreduce", "ranks": 64, "min_bytes": 1024, "algorithm": "rabenseifner"},
    {"collective": "bcast", "ranks": 16, "min_bytes": 0, "algorithm": "binomial"}
  ]
}`

func TestLookup(t *testing.T) {
	f, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		coll         schedule.Collective
		ranks, bytes int
		want         string
		ok           bool
	}{
		{schedule.Allreduce, 8, 0, "recursive-doubling", true},
		{schedule.Allreduce, 8, 65535, "recursive-doubling", true},
		{schedule.Allreduce, 8, 65536, "ring", true},
		{schedule.Allreduce, 8, 1 << 30, "ring", true},
		{schedule.Allreduce, 64, 8, "rabenseifner", true}, // below the smallest: the smallest
		{schedule.Allreduce, 9, 8, "recursive-doubling", true},
		{schedule.Allreduce, 12, 8, "recursive-doubling", true}, // 12/8 < 64/12
		{schedule.Allreduce, 23, 8, "rabenseifner", true},       // 64/23 ≈ 2.78 < 23/8 ≈ 2.88
		{schedule.Allreduce, 1000, 1 << 20, "rabenseifner", true},
		{schedule.Bcast, 2, 1 << 20, "binomial", true},
		{schedule.Reduce, 8, 8, "", false},
	} {
		got, ok := f.Lookup(tc.coll, tc.ranks, tc.bytes)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s on %d ranks, %d bytes: %q %v, want %q %v", tc.coll, tc.ranks, tc.bytes, got, ok, tc.want, tc.ok)
		}
	}
	var none *File
	if _, ok := none.Lookup(schedule.Allreduce, 8, 8); ok {
		t.Error("a nil file chose an algorithm")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		`{"version": 2, "rules": []}`,
		`{"version": 1, "rules": [{"collective": "allsum", "ranks": 8, "min_bytes": 0, "algorithm": "ring"}]}`,
		`{"version": 1, "rules": [{"collective": "allreduce", "ranks": 0, "min_bytes": 0, "algorithm": "ring"}]}`,
		`{"version": 1, "rules": [{"collective": "allreduce", "ranks": 8, "min_bytes": -1, "algorithm": "ring"}]}`,
		`{"version": 1, "rules": [{"collective": "allreduce", "ranks": 8, "min_bytes": 0, "algorithm": "rign"}]}`,
		`{"version": 1, "rules": [{"collective": "allreduce", "ranks": 8, "min_bytes": 0, "algorithm": "ring"},
		  {"collective": "allreduce", "ranks": 8, "min_bytes": 0, "algorithm": "rabenseifner"}]}`,
		`{"version": 1, "rules": [], "extra": 1}`,
		`not json`,
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%s: %v, want an invalid-argument error", bad, err)
		}
	}
}

func TestAddWriteRead(t *testing.T) {
	var f File
	for _, r := range []struct {
		bytes int
		alg   string
	}{{8, "recursive-doubling"}, {64, "recursive-doubling"}, {4096, "rabenseifner"}, {65536, "ring"}, {1 << 20, "ring"}} {
		f.Add(schedule.Allreduce, 4, r.bytes, r.alg)
	}
	f.Add(schedule.Bcast, 4, 8, "binomial")
	if len(f.Rules) != 4 {
		t.Fatalf("rules %+v, want runs of one algorithm merged (4 rules)", f.Rules)
	}
	path := filepath.Join(t.TempDir(), "rules.json")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Lookup(schedule.Allreduce, 4, 100000); got != "ring" || g.Rules[0].Collective != "allreduce" || g.Version != Version {
		t.Errorf("read back %+v", g)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("missing file: %v", err)
	}
}

func TestMessageBytes(t *testing.T) {
	for _, tc := range []struct {
		spec schedule.Spec
		want int
	}{
		{schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: 10}, 40},
		{schedule.Spec{Coll: schedule.Allgather, Size: 4, Count: 10}, 40},
		{schedule.Spec{Coll: schedule.ReduceScatterBlock, Size: 4, Count: 10}, 160},
		{schedule.Spec{Coll: schedule.Barrier, Size: 4}, 0},
		{schedule.Spec{Coll: schedule.Allgatherv, Size: 2, Counts: []int{2, 4}}, 12},
		{schedule.Spec{Coll: schedule.ReduceScatter, Size: 2, Counts: []int{2, 4}}, 24},
		{schedule.Spec{Coll: schedule.Alltoallv, Size: 2, Matrix: [][]int{{1, 3}, {2, 2}}}, 8},
	} {
		if got := MessageBytes(&tc.spec, 4); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.spec.Coll, got, tc.want)
		}
	}
}

// A rule may name Native (the MPI library's own collective): Lookup and
// For return it like any algorithm, For in size order.
func TestNative(t *testing.T) {
	f, err := Parse([]byte(`{"version": 1, "rules": [
	  {"collective": "allreduce", "ranks": 2, "min_bytes": 65536, "algorithm": "ring"},
	  {"collective": "allreduce", "ranks": 2, "min_bytes": 0, "algorithm": "native"},
	  {"collective": "allreduce", "ranks": 4, "min_bytes": 0, "algorithm": "ring"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := f.Lookup(schedule.Allreduce, 2, 8); a != Native {
		t.Errorf("8 bytes on 2 ranks: %q, want native", a)
	}
	if a, _ := f.Lookup(schedule.Allreduce, 2, 1<<20); a != "ring" {
		t.Errorf("1 MiB on 2 ranks: %q, want ring", a)
	}
	rules := f.For(schedule.Allreduce, 2)
	if len(rules) != 2 || rules[0].Algorithm != Native || rules[1].MinBytes != 65536 || Choose(rules, 65535) != Native {
		t.Errorf("For(allreduce, 2) = %v", rules)
	}
	if rules := f.For(schedule.Allreduce, 3); len(rules) != 1 || rules[0].Ranks != 4 { // 4/3 is nearer than 3/2
		t.Errorf("For(allreduce, 3) = %v", rules)
	}
	if f.For(schedule.Bcast, 2) != nil {
		t.Error("rules for bcast, which has none")
	}
}
