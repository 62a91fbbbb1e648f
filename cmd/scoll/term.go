package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Escape codes are for terminals only: a command's stderr redirected to a
// file or a pipe gets plain lines. The codes scoll writes all go through
// a status.

const (
	// eraseLine returns the cursor to the start of the line and erases
	// it (carriage return, then ANSI "erase in line").
	eraseLine = "\r\x1b[K"
)

// status is a command's diagnostic stream with a progress line. On a
// terminal the progress line is redrawn in place and erased before any
// other output; on anything else (a file, a pipe) nothing but whole lines
// is written: progress, when --progress always asks for it, comes as one
// line per step, and no escape codes at all.
//
// Its methods may be called from several goroutines.
type status struct {
	mu   sync.Mutex
	w    io.Writer
	show bool // progress is shown (--progress)
	tty  bool // w is a terminal: the progress line is redrawn in place
	open bool // a progress line is on the terminal, not yet erased
}

// newStatus returns the status of w for --progress progress (auto,
// always or never: showProgress).
func newStatus(w io.Writer, progress string) (*status, error) {
	show, err := showProgress(progress, w)
	if err != nil {
		return nil, err
	}
	return &status{w: w, show: show, tty: isTerminal(w)}, nil
}

// Shown reports whether progress is shown.
func (s *status) Shown() bool { return s.show }

// Progress draws the progress line (a single line: no newline), when
// progress is shown: in place of the previous one on a terminal, as a line
// of its own elsewhere.
func (s *status) Progress(format string, args ...any) {
	if !s.show {
		return
	}
	line := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty {
		fmt.Fprint(s.w, eraseLine+line)
		s.open = true
		return
	}
	fmt.Fprintln(s.w, line)
}

// Printf writes a message (ending in a newline, which it adds when
// missing) after erasing the progress line, which the next Progress
// redraws.
func (s *status) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	fmt.Fprint(s.w, msg)
}

// Done writes the closing line of a run that showed progress (a summary
// such as "12 configurations in 1.5s"), and nothing when progress is not
// shown.
func (s *status) Done(format string, args ...any) {
	if s.show {
		s.Printf(format, args...)
	}
}

// Clear erases the progress line, if one is on the terminal, before
// output on another stream that shares the terminal (rows on stdout).
func (s *status) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

func (s *status) clearLocked() {
	if s.open {
		fmt.Fprint(s.w, eraseLine)
		s.open = false
	}
}

// counted says n of noun: "1 configuration", "12 configurations".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
