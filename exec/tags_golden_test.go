package exec

// (Its imports are workload/replay_golden_test.go's first lines, as both
// tests render registry goldens through registrytest.Golden.)
import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/registrytest"
)

// TestTagsGolden pins the message tags NewPlan gives every registered
// algorithm's schedules (rank by rank) at the golden call: the tag
// bookkeeping must not change when the way it is computed does. Rerun
// with -update only for a deliberate change.
func TestTagsGolden(t *testing.T) {
	registrytest.Golden(t, filepath.Join("testdata", "tags"), func(t *testing.T, in *algorithms.Info, ap algorithms.Params) []byte {
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "# %s %s P=%d\n", in.Coll, in.Name, ap.Size)
		for r := range ap.Size {
			ap.Rank = r
			s, err := in.Schedule(&ap)
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlan(s)
			fmt.Fprintf(&buf, "rank %d: tags %v maxcomm %d maxfused %d early %v\n", r, p.tags, p.maxComm, p.maxFused, p.early)
		}
		return buf.Bytes()
	})
}
