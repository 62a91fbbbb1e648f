package exec

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

var update = flag.Bool("update", false, "rewrite the golden tags in testdata/tags")

// TestTagsGolden pins the message tags NewPlan gives every registered
// algorithm's schedules (rank by rank, round by round) at the first of
// P = 5, 4, 6, 8 the algorithm takes with 3 elements per block: the tag
// bookkeeping must not change when the way it is computed does. Rerun with
// -update only for a deliberate change.
func TestTagsGolden(t *testing.T) {
	dir := filepath.Join("testdata", "tags")
	seen := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			var ap algorithms.Params
			ok := false
			for _, p := range []int{5, 4, 6, 8} {
				spec := schedule.Spec{Coll: c, Size: p, Count: 3}
				if c == schedule.Barrier {
					spec.Count = 0
				}
				if c.Rooted() {
					spec.Root = p - 1
				}
				if c.Vector() {
					spec.Count = 0
					spec.Counts = make([]int, p)
					spec.Matrix = make([][]int, p)
					for i := range p {
						spec.Counts[i] = i%3 + 1
						spec.Matrix[i] = make([]int, p)
						for j := range p {
							spec.Matrix[i][j] = (i+2*j)%4 + i%2
						}
					}
					if c == schedule.Alltoallv {
						spec.Counts = nil
					} else {
						spec.Matrix = nil
					}
				}
				ap = algorithms.Params{Spec: spec, Commutative: true, ElemSize: 4}
				if spec.Check() == nil && in.Check(&ap) == nil {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("%s/%s takes none of the golden calls", c, in.Name)
				continue
			}
			name := fmt.Sprintf("%s-%s.txt", c, in.Name)
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				fmt.Fprintf(&buf, "# %s %s P=%d\n", c, in.Name, ap.Size)
				for r := range ap.Size {
					ap.Rank = r
					s, err := in.Schedule(&ap)
					if err != nil {
						t.Fatal(err)
					}
					p := NewPlan(s)
					fmt.Fprintf(&buf, "rank %d: tags %v maxcomm %d maxfused %d early %v\n", r, p.tags, p.maxComm, p.maxFused, p.early)
				}
				path := filepath.Join(dir, name)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -run TagsGolden -update creates it)", err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Errorf("%s differs:\nwant:\n%s\ngot:\n%s", path, want, buf.Bytes())
				}
			})
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s pins no registered algorithm (go test -run TagsGolden -update removes it)", f)
		}
	}
}
