package algorithms

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scoll/scoll/schedule"
)

var goldenUpdate = flag.Bool("update", false, "rewrite the golden schedules in testdata/")

// goldenCases are the algorithms whose rendered schedules are pinned in
// testdata/<coll>-<name>-p<P>.txt. A change to one of these schedules must be
// deliberate: rerun with -update and review the diff.
var goldenCases = []struct {
	coll schedule.Collective
	name string
	size int
}{
	{schedule.Allgather, "ring", 4},
	{schedule.Allreduce, "recursive-doubling", 5},
	{schedule.Alltoall, "bruck", 5},
	{schedule.Alltoall, "pairwise", 4},
	{schedule.Scan, "butterfly", 5},
	{schedule.Exscan, "butterfly", 5},
	{schedule.Exscan, "recursive-doubling", 5},
	{schedule.Scan, "linear", 4},
	{schedule.Barrier, "dissemination", 5},
	{schedule.Barrier, "recursive-doubling", 5},
	{schedule.Barrier, "tree", 5},
}

// goldenRender returns the schedules of every rank, rendered with
// schedule.WriteText, after checking that they match up.
func goldenRender(t *testing.T, in *Info, size, count int) []byte {
	t.Helper()
	spec := schedule.Spec{Coll: in.Coll, Size: size, Count: count}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %s %s, P=%d, count=%d\n", in.Coll, in.Name, size, count)
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
	if err := schedule.Verify(&spec, schedule.FromSchedules(ss), schedule.Options{Ordered: true}); err != nil {
		t.Fatalf("materialised schedules do not verify: %v", err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		name := fmt.Sprintf("%s-%s-p%d", c.coll, c.name, c.size)
		t.Run(name, func(t *testing.T) {
			in, ok := Lookup(c.coll, c.name)
			if !ok {
				t.Fatalf("%s/%s is not registered", c.coll, c.name)
			}
			count := 5
			if c.coll == schedule.Barrier {
				count = 0
			}
			got := goldenRender(t, in, c.size, count)
			path := filepath.Join("testdata", name+".txt")
			if *goldenUpdate {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run Golden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the generated schedule (go test -run Golden -update rewrites it):\n%s",
					path, goldenDiff(string(want), string(got)))
			}
		})
	}
}

// goldenDiff describes the first line where want and got differ.
func goldenDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(equal lines; line endings differ)"
}
