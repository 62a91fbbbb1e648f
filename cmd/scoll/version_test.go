package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestVersionAndCompletion: --version names the build, and completion
// scripts come out for bash and zsh.
func TestVersionAndCompletion(t *testing.T) {
	out, _, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "scoll ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q %v", out, err)
	}
	for shell, mark := range map[string]string{"bash": "complete -o default -F", "zsh": "#compdef scoll"} {
		out, _, err := run(t, "completion", shell)
		if err != nil || !strings.Contains(out, mark) {
			t.Errorf("completion %s: %v, output lacks %q", shell, err, mark)
		}
	}
}

// TestErrorLine: an error is printed with the failing command's name once,
// whatever prefixes the packages put on it.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--sizes", "12Q"}, `scoll sim: --sizes "12Q": unknown unit "Q"`},
		{[]string{"schedule", "--op", "allreduce", "--algorithm", "nosuch", "--np", "4"}, "scoll schedule: "},
		{[]string{"bench", "--np", "0"}, "scoll bench: "},
	} {
		cmd := newRootCmd()
		var out, errb strings.Builder
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		cmd.SetArgs(tc.args)
		c, err := cmd.ExecuteC()
		if err == nil {
			t.Fatalf("%v: no error", tc.args)
		}
		line := errorLine(c, err)
		if !strings.HasPrefix(line, tc.want) {
			t.Errorf("%v: %q", tc.args, line)
		}
		t.Logf("%v: %s", tc.args, line)
		for _, wrong := range []string{"scoll: scoll:", ": bench:", ": sim:"} {
			if strings.Contains(line, wrong) {
				t.Errorf("%v: %q contains %q", tc.args, line, wrong)
			}
		}
	}
}

// TestOutputFlagsFirst: flags are checked before any work: a plot in
// another format, a file in a missing directory, bad rank counts, sizes,
// parameters or times (each case fails at once; together they take well
// under a second, where a calibration alone takes seconds).
func TestOutputFlagsFirst(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--plot", "x.pdf"},
		{"model", "--plot", "/nonexistent/dir/x.svg"},
		{"model", "--op", "bcast", "--plot-bounds", "x.jpg"},
		{"calibrate", "--output", "/nonexistent/dir/params.json"},
		{"split", "--record", "/nonexistent/dir/split.trace"},
		{"predict", "--np", "-1"},
		{"predict", "--np", "0"},
		{"predict", "--sizes", "1Q"},
		{"predict", "--params", "nosuch"},
		{"calibrate", "--time", "0s"},
	} {
		_, _, err := run(t, args...)
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		t.Logf("%v: %v", args, err)
	}
}

// TestModelProgressAndArrival: scoll model reports its configurations on
// stderr when asked, and a row whose critical path is not walked (the
// exchange at 1024 ranks) still has its arrival time.
func TestModelProgressAndArrival(t *testing.T) {
	out, errOut, err := run(t, "model", "--op", "allreduce", "--np", "8,16", "--sizes", "8", "--progress", "always", "--format", "csv")
	if err != nil || !strings.Contains(errOut, "[2/2] np=16") || !strings.Contains(errOut, "2 configurations") {
		t.Fatalf("progress: %v\n%s", err, errOut)
	}
	_ = out
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "1024", "--sizes", "8", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Algorithm string  `json:"algorithm"`
		CriticalS float64 `json:"critical_s"`
		ArrivalS  float64 `json:"arrival_s"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, r := range rows {
		if r.Algorithm == "exchange" {
			seen = true
			if r.ArrivalS != r.CriticalS || r.ArrivalS == 0 {
				t.Errorf("exchange: arrival %g, critical %g", r.ArrivalS, r.CriticalS)
			}
		}
	}
	if !seen {
		t.Error("no exchange row")
	}
}

// TestSimAuto: scoll sim --algorithm auto names the algorithm the default
// rule picked under the simulated α and δ: latency-bound recursive
// doubling for 8 bytes, bandwidth-bound Rabenseifner for 1 MiB.
func TestSimAuto(t *testing.T) {
	out, _, err := run(t, "sim", "--topology", "torus:4x4", "--op", "allreduce", "--algorithm", "auto", "--sizes", "8,1M", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"auto (recursive-doubling)", "auto (rabenseifner)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestModelMaxMemory: a rank count whose evaluation would not fit is
// refused at once, naming the estimate.
func TestModelMaxMemory(t *testing.T) {
	_, _, err := run(t, "model", "--np", "1048576", "--sizes", "8")
	if err == nil || !strings.Contains(err.Error(), "20 GiB") || !strings.Contains(err.Error(), "--max-memory 4G") {
		t.Errorf("--np 1M: %v", err)
	}
	if _, _, err := run(t, "model", "--np", "64", "--sizes", "8", "--max-memory", "1M"); err == nil {
		t.Error("--np 64 under a 1 MiB limit ran")
	}
	if _, _, err := run(t, "model", "--np", "64", "--sizes", "8", "--max-memory", "2M"); err != nil {
		t.Errorf("--np 64 under a 2 MiB limit: %v", err)
	}
}
