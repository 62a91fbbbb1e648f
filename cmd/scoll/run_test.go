package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runChildArg as the first argument makes the test binary act as a rank of
// "scoll run" (see runChild) instead of running the tests.
const runChildArg = "scoll-run-test-child"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == runChildArg {
		os.Exit(runChild(os.Args[2], os.Args[3:]))
	}
	// Ranks built with -race would otherwise sleep 1 s before exiting.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// runChild is a rank in one of the test modes; it returns the exit status.
func runChild(mode string, args []string) int {
	rank := os.Getenv("SCOLL_RANK")
	switch mode {
	case "hello":
		fmt.Printf("hello %s of %s\n", rank, os.Getenv("SCOLL_SIZE"))
		fmt.Fprintf(os.Stderr, "warn %s\n", rank)
		fmt.Printf("args %q\n", args)
		fmt.Printf("partial %s", rank)
	case "fail": // rank 1 exits 3, the others wait to be stopped
		if rank == "1" {
			return 3
		}
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	case "touch": // leaves a trace in dir args[0]
		os.WriteFile(filepath.Join(args[0], "ran."+rank), nil, 0o644)
	}
	return 0
}

// runCmd runs "scoll run" with args and returns its output and the exit
// code it asked for (0 if none), and its error.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	code = -1
	cmd := newRunCmdExit(func(c int) { code = c })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as under the root command
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err = cmd.Execute()
	if code == -1 {
		code = 0
	}
	return out.String(), errb.String(), code, err
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestRunCmdTagged(t *testing.T) {
	t.Parallel()
	exe := testExe(t)
	// Through the root command, flags of the program after its name.
	out, errOut, err := run(t, "run", "--np", "3", exe, runChildArg, "hello", "-x", "--np=7")
	if err != nil {
		t.Fatalf("scoll run: %v\n%s", err, errOut)
	}
	for r := range 3 {
		for _, want := range []string{
			fmt.Sprintf("[%d] hello %d of 3\n", r, r),
			fmt.Sprintf("[%d] args [\"-x\" \"--np=7\"]\n", r),
			fmt.Sprintf("[%d] partial %d\n", r, r),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if want := fmt.Sprintf("[%d] warn %d\n", r, r); !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if n := strings.Count(out, "\n"); n != 9 {
		t.Errorf("%d stdout lines, want 9:\n%s", n, out)
	}
}

func TestRunCmdUntagged(t *testing.T) {
	t.Parallel()
	out, _, code, err := runCmd(t, "--np", "2", "--tag-output=false", "--", testExe(t), runChildArg, "hello")
	if err != nil || code != 0 {
		t.Fatalf("scoll run: %d, %v", code, err)
	}
	if strings.Contains(out, "[") && !strings.Contains(out, "args [") || !strings.Contains(out, "hello 1 of 2\n") {
		t.Errorf("output not passed through:\n%s", out)
	}
	if strings.Contains(out, "[0] ") || strings.Contains(out, "[1] ") {
		t.Errorf("output tagged:\n%s", out)
	}
}

// TestRunCmdFailures: a rank's exit status and the timeout end the job
// with their exit codes and one line on stderr.
func TestRunCmdFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"--np", "3", "--", testExe(t), runChildArg, "fail"}, 3, "scoll run: rank 1 exited with status 3\n"},
		{[]string{"--np", "2", "--timeout", "200ms", "--", testExe(t), runChildArg, "sleep"}, 124, "scoll run: timed out after 200ms; job killed\n"},
	} {
		_, errOut, code, err := runCmd(t, tc.args...)
		if err != nil || code != tc.code {
			t.Fatalf("scoll run %q = exit %d, %v; want exit %d", tc.args, code, err, tc.code)
		}
		if errOut != tc.wantErr {
			t.Errorf("scoll run %q: stderr %q, want %q", tc.args, errOut, tc.wantErr)
		}
	}
}

func TestRunCmdBadInput(t *testing.T) {
	t.Parallel()
	exe := testExe(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--np", "0", "--", exe, runChildArg, "touch", dir}, errNP.Error()},
		{[]string{"--np", "-2", exe, runChildArg, "touch", dir}, errNP.Error()},
		{[]string{"--np", "2"}, "no program"},
		{[]string{"--np", "2", "--"}, "no program"},
		{[]string{"--np", "2", "--", "scoll-no-such-program"}, `program "scoll-no-such-program": executable file not found`},
		{[]string{"--np", "2", "--", "/nonexistent/prog"}, "no such file"},
		{[]string{"--np", "2", "--rendezvous", "udp:x", "--", exe, runChildArg, "touch", dir}, "want file:DIR or tcp:HOST:PORT"},
		{[]string{"--np", "2", "--grace", "0s", "--", exe, runChildArg, "touch", dir}, "--grace"},
		{[]string{"--np", "2", "--timeout", "-1s", "--", exe, runChildArg, "touch", dir}, "--timeout"},
	} {
		out, errOut, code, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || code != 0 || out+errOut != "" {
			t.Errorf("scoll run %q = %v (exit %d, output %q); want an error mentioning %q", tc.args, err, code, out+errOut, tc.want)
		}
	}
	if ran, _ := filepath.Glob(filepath.Join(dir, "ran.*")); len(ran) != 0 {
		t.Errorf("a rank ran despite bad input: %v", ran)
	}
	// The same program with good flags does run.
	if _, _, code, err := runCmd(t, "--np", "2", exe, runChildArg, "touch", dir); err != nil || code != 0 {
		t.Fatalf("good run: %d, %v", code, err)
	}
	if ran, _ := filepath.Glob(filepath.Join(dir, "ran.*")); len(ran) != 2 {
		t.Errorf("good run left %v, want 2 traces", ran)
	}
}
