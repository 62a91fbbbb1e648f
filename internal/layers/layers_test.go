// Package layers holds the test that keeps scoll's dependency arrows as
// docs/architecture.md draws them.
package layers

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/scoll/scoll"

// allowed lists, for every package of the module (relative path, "" for
// the root), the module's packages its non-test files may import. A new
// package must be added here, which is where its place in the layers is
// decided: schedules and topologies at the bottom; algorithms, sim and
// model each on schedules only (sim also on topologies); workload above
// them; exec and the transports below the public API, knowing nothing of
// algorithms.
var allowed = map[string][]string{
	"":                        {"algorithms", "exec", "internal/arrival", "internal/comm", "internal/errs", "internal/jobenv", "internal/join", "internal/kernels", "internal/names", "internal/plan", "schedule", "split", "transport", "transport/inproc", "transport/mpi", "transport/record", "transport/tcp", "tuning"},
	"internal/comm":           {"algorithms", "exec", "internal/arrival", "internal/chain", "internal/cid", "internal/errs", "internal/join", "internal/kernels", "internal/names", "internal/plan", "internal/postbox", "internal/wire", "schedule", "split", "transport", "tuning"},
	"internal/join":           {"internal/errs", "transport", "transport/mixed", "transport/shm"},
	"internal/algtable":       {"", "transport"},
	"internal/toy":            {},
	"schedule":                {},
	"topology":                {},
	"algorithms":              {"internal/errs", "internal/names", "internal/sizes", "schedule"},
	"sim":                     {"schedule", "topology"},
	"model":                   {"schedule"},
	"workload":                {"algorithms", "internal/names", "model", "schedule", "sim", "topology"},
	"tuning":                  {"algorithms", "internal/errs", "internal/names", "schedule"},
	"exec":                    {"internal/errs", "internal/mem", "schedule", "transport"},
	"split":                   {"internal/errs", "internal/names", "transport"},
	"transport":               {"internal/errs", "internal/mem"},
	"transport/inproc":        {"internal/errs", "transport"},
	"transport/tcp":           {"internal/clock", "internal/errs", "transport"},
	"transport/shm":           {"internal/clock", "internal/errs", "transport"},
	"transport/mixed":         {"internal/errs", "transport"},
	"transport/mpi":           {"internal/errs", "transport"},
	"transport/record":        {"schedule", "transport"},
	"transport/transporttest": {"internal/errs", "transport"},
	"internal/chain":          {"exec", "internal/errs", "internal/kernels", "split"},
	"internal/plan":           {"algorithms", "exec", "internal/arrival", "internal/errs", "internal/names", "schedule", "tuning"},
	"internal/arrival":        {},
	"internal/registrytest":   {"algorithms", "internal/golden", "schedule", "workload"},
	"internal/clock":          {},
	"internal/cid":            {"internal/errs"},
	"internal/wire":           {"internal/cid", "internal/errs", "internal/postbox", "split", "transport"},
	"internal/jobenv":         {"internal/errs"},
	"internal/postbox":        {"transport"},
	"internal/errs":           {},
	"internal/names":          {},
	"internal/matrix":         {"", "internal/sweep", "transport", "transport/shm", "transport/tcp"},
	"tests":                   {},
	"internal/sizes":          {},
	"internal/human":          {},
	"internal/sweep":          {},
	"internal/genapi":         {},
	"internal/golden":         {},
	"internal/kernels":        {},
	"internal/launch":         {},
	"internal/mem":            {},
	"internal/layers":         {},
	"bench":                   {"", "algorithms", "internal/human", "internal/kernels", "internal/names", "internal/sizes", "internal/wire", "schedule", "split", "transport", "transport/inproc", "transport/record"},
	"cmd/scoll":               {"", "algorithms", "bench", "internal/algtable", "internal/human", "internal/launch", "internal/names", "internal/sizes", "model", "schedule", "sim", "topology", "transport", "transport/mpi", "transport/record", "tuning", "workload"},
	"cmd/libscollmpi":         {"", "algorithms", "schedule", "sim", "topology", "transport/mpi", "tuning"},
	"examples/allreduce":      {""},
	"examples/nodeallreduce":  {""},
}

func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := build.Default
	ctx.BuildTags = append(ctx.BuildTags, "mpi") // the MPI transport's files too
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := ctx.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files, or only tests
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		seen[rel] = true
		ok, known := allowed[rel]
		if !known {
			t.Errorf("package %q is not in the layer table (internal/layers): decide its place", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !slices.Contains(ok, dep) {
				t.Errorf("package %q imports %q, which its layer does not allow", rel, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range allowed {
		if !seen[rel] {
			t.Errorf("the layer table lists %q, which has no package", rel)
		}
	}
}
