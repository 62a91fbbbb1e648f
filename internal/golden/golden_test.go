package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordingTB records failures instead of failing the test.
type recordingTB struct {
	testing.TB
	failed []string
}

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Errorf(format string, args ...any) { r.failed = append(r.failed, format) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = append(r.failed, format) }
func (r *recordingTB) Fatal(args ...any)                 { r.failed = append(r.failed, "fatal") }

func TestCheckAndPrune(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		got  string
		fail bool
	}{{"one\ntwo\n", false}, {"one\nthree\n", true}} {
		r := &recordingTB{TB: t}
		Check(r, path, []byte(tc.got))
		if (len(r.failed) > 0) != tc.fail {
			t.Errorf("Check(%q): failures %v, want failure %v", tc.got, r.failed, tc.fail)
		}
	}
	r := &recordingTB{TB: t}
	Check(r, filepath.Join(dir, "missing.txt"), nil)
	if len(r.failed) != 1 {
		t.Errorf("a missing file: failures %v", r.failed)
	}
	r = &recordingTB{TB: t}
	Prune(r, filepath.Join(dir, "*.txt"), map[string]bool{})
	if len(r.failed) != 1 {
		t.Errorf("an orphan file: failures %v", r.failed)
	}
	r = &recordingTB{TB: t}
	Prune(r, filepath.Join(dir, "*.txt"), map[string]bool{"a.txt": true})
	if len(r.failed) != 0 {
		t.Errorf("a pinned file: failures %v", r.failed)
	}
}

func TestDiff(t *testing.T) {
	d := Diff("a\nb\nc", "a\nx\nc\nd")
	if !strings.Contains(d, "line 2") || !strings.Contains(d, "line 4") || strings.Contains(d, "line 1:") {
		t.Errorf("Diff:\n%s", d)
	}
	if Diff("a\n", "a\n") != "(equal lines; line endings differ)" {
		t.Error("equal texts")
	}
}
