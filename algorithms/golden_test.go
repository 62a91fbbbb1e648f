package algorithms

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/internal/golden"
	"github.com/scoll/scoll/schedule"
)

// Every registered algorithm's schedules are pinned in
// testdata/<coll>-<name>-p<P>.txt at a small P (goldenCase): a change to
// any schedule must be deliberate — rerun with -update and review the diff.

// goldenCase returns the call whose schedules algorithm in pins: the first
// of P = 5, 4, 6, 8 the algorithm takes, a count of 3 elements per block
// (none for barrier), the last rank as root, uneven counts for the
// v-variants (specsFor's).
func goldenCase(in *Info) (schedule.Spec, bool) {
	for _, p := range []int{5, 4, 6, 8} {
		for _, s := range specsFor(in.Coll, p) {
			if s.InPlace || (s.Count != 3 && in.Coll != schedule.Barrier) || (in.Coll.Rooted() && s.Root != p-1) {
				continue
			}
			if in.Check(&Params{Spec: s, Commutative: true, ElemSize: 4}) == nil {
				return s, true
			}
		}
	}
	return schedule.Spec{}, false
}

// goldenRender returns the schedules of every rank, rendered with
// schedule.WriteText, after checking that they match up.
func goldenRender(t *testing.T, in *Info, spec schedule.Spec) []byte {
	t.Helper()
	size := spec.Size
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %s %s, P=%d, count=%d, root=%d", in.Coll, in.Name, size, spec.Count, spec.Root)
	if spec.Counts != nil {
		fmt.Fprintf(&buf, ", counts=%v", spec.Counts)
	}
	if spec.Displs != nil {
		fmt.Fprintf(&buf, ", displs=%v", spec.Displs)
	}
	if spec.Matrix != nil {
		fmt.Fprintf(&buf, ", matrix=%v", spec.Matrix)
	}
	buf.WriteString("\n")
	ss := make([]*schedule.Schedule, size)
	for r := range size {
		s, err := in.Schedule(&Params{Spec: spec, Rank: r, Commutative: true, ElemSize: 4})
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		ss[r] = s
		if err := schedule.WriteText(&buf, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := schedule.Verify(&spec, schedule.FromSchedules(ss), schedule.Options{}); err != nil {
		t.Fatalf("materialised schedules do not verify: %v", err)
	}
	return buf.Bytes()
}

// TestGolden renders every registered algorithm's schedules and compares
// them with testdata (a missing file fails too: a new algorithm comes with
// its golden schedules).
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range List(c) {
			spec, ok := goldenCase(in)
			if !ok {
				t.Errorf("%s/%s takes none of the golden calls", c, in.Name)
				continue
			}
			name := fmt.Sprintf("%s-%s-p%d", c, in.Name, spec.Size)
			seen[name+".txt"] = true
			t.Run(name, func(t *testing.T) {
				golden.Check(t, filepath.Join("testdata", name+".txt"), goldenRender(t, in, spec))
			})
		}
	}
	// Files of algorithms no longer registered (or pinned at another P).
	golden.Prune(t, filepath.Join("testdata", "*-p*.txt"), seen)
}
