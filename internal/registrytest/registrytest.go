// Package registrytest runs a golden-file test over every registered
// algorithm: the tests of the layers that consume schedules (the replay's
// users, the executor) pin what they make of each algorithm's schedules.
package registrytest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/golden"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
)

// Golden renders every registered algorithm at its golden call
// (workload.GoldenParams) with render and compares the text with
// dir/<collective>-<name>.txt (golden.Check: -update rewrites). An
// algorithm that takes none of the golden calls fails, and so does a file
// that pins no registered algorithm.
func Golden(t *testing.T, dir string, render func(t *testing.T, in *algorithms.Info, ap algorithms.Params) []byte) {
	t.Helper()
	GoldenOf(t, dir, render, nil)
}

// GoldenOf is Golden for the algorithms only takes (nil: all).
func GoldenOf(t *testing.T, dir string, render func(t *testing.T, in *algorithms.Info, ap algorithms.Params) []byte, only func(*algorithms.Info) bool) {
	t.Helper()
	seen := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			if only != nil && !only(in) {
				continue
			}
			ap, ok := workload.GoldenParams(in)
			if !ok {
				t.Errorf("%s/%s takes none of the golden calls", c, in.Name)
				continue
			}
			name := fmt.Sprintf("%s-%s.txt", c, in.Name)
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				golden.Check(t, filepath.Join(dir, name), render(t, in, ap))
			})
		}
	}
	golden.Prune(t, filepath.Join(dir, "*.txt"), seen)
}
