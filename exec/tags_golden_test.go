package exec

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/golden"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
)

// TestTagsGolden pins the message tags NewPlan gives every registered
// algorithm's schedules (rank by rank) at the golden call
// (workload.GoldenParams): the tag bookkeeping must not change when the
// way it is computed does. Rerun with -update only for a deliberate change.
func TestTagsGolden(t *testing.T) {
	dir := filepath.Join("testdata", "tags")
	seen := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			ap, ok := workload.GoldenParams(in)
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
				golden.Check(t, filepath.Join(dir, name), buf.Bytes())
			})
		}
	}
	golden.Prune(t, filepath.Join(dir, "*.txt"), seen)
}
