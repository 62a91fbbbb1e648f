// Package golden keeps test results in files under testdata: a test
// renders what it checks as text and Check compares it with the file, or
// rewrites the file when the test binary runs with -update. A change to a
// pinned result then shows as a diff in review.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the file at path, or writes it there with
// -update. A missing file fails (a new case comes with its golden file).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rerun the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the result (rerun with -update to rewrite it):\n%s", path, Diff(string(want), string(got)))
	}
}

// Prune fails for every file matching pattern whose base name is not in
// seen (a golden file of a case that no longer exists), or removes it with
// -update.
func Prune(t testing.TB, pattern string, seen map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if seen[filepath.Base(f)] {
			continue
		}
		if *update {
			os.Remove(f)
			continue
		}
		t.Errorf("%s pins no case of the test (rerun with -update to remove it)", f)
	}
}

// Diff lists the lines of want and got that differ, position by position,
// up to 20 of them.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var sb strings.Builder
	shown := 0
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a == b {
			continue
		}
		if shown == 20 {
			sb.WriteString("...\n")
			break
		}
		shown++
		fmt.Fprintf(&sb, "line %d:\n  want %q\n  got  %q\n", i+1, a, b)
	}
	if shown == 0 {
		return "(equal lines; line endings differ)"
	}
	return sb.String()
}
