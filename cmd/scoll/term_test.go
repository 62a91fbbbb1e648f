package main

import (
	"bytes"
	"strings"
	"testing"
)

// A status writes escape codes to a terminal only: to anything else its
// progress comes as whole lines, and messages are never glued to a
// progress line.
func TestStatusEscapesOnlyOnTerminal(t *testing.T) {
	var b bytes.Buffer
	st, err := newStatus(&b, "always")
	if err != nil {
		t.Fatal(err)
	}
	st.Progress("[1/2] ring")
	st.Printf("scoll sim: skipping %s", "x")
	st.Progress("[2/2] ring")
	st.Clear()
	st.Done("scoll sim: 2 configurations")
	want := "[1/2] ring\nscoll sim: skipping x\n[2/2] ring\nscoll sim: 2 configurations\n"
	if b.String() != want {
		t.Errorf("not a terminal: got %q, want %q", b.String(), want)
	}

	// On a terminal the progress line is redrawn in place and erased
	// before a message; erasing twice writes nothing more.
	b.Reset()
	st = &status{w: &b, show: true, tty: true}
	st.Progress("[1/2] ring")
	st.Progress("[2/2] ring")
	st.Printf("scoll sim: skipping x\n")
	st.Clear()
	want = eraseLine + "[1/2] ring" + eraseLine + "[2/2] ring" + eraseLine + "scoll sim: skipping x\n"
	if b.String() != want {
		t.Errorf("terminal: got %q, want %q", b.String(), want)
	}

	b.Reset()
	st, _ = newStatus(&b, "never")
	st.Progress("[1/2] ring")
	st.Done("done")
	st.Printf("warning")
	if b.String() != "warning\n" {
		t.Errorf("--progress never: got %q", b.String())
	}
}

// scoll sim writes no escape codes to a stderr that is not a terminal,
// also with --progress always, and says in one line which algorithms the
// stage model is not valid for.
func TestSimStderrPlain(t *testing.T) {
	_, stderr, err := run(t, "sim", "--topology", "torus:4x4x4", "--op", "allreduce", "--sizes", "64", "--format", "csv", "--progress", "always")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Errorf("escape codes in stderr:\n%q", stderr)
	}
	var notes []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "stage model not valid") {
			notes = append(notes, l)
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "scoll sim: note: stage model not valid for ") ||
		!strings.Contains(notes[0], "bucket6, ") || !strings.HasSuffix(notes[0], "--model flow simulates them") {
		t.Errorf("want one note naming bucket6 among others, got %d:\n%s", len(notes), strings.Join(notes, "\n"))
	}
}
