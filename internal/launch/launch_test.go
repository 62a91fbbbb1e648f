//go:build unix

package launch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child program: with LAUNCH_TEST_CHILD set
// it runs child() instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LAUNCH_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// childLines is how many lines each rank prints in mode "lines".
const childLines = 2000

// child behaves as a rank in one of the test modes and returns its exit
// status.
func child(mode string) int {
	rank, _ := strconv.Atoi(os.Getenv(EnvRank))
	size, _ := strconv.Atoi(os.Getenv(EnvSize))
	dir := os.Getenv("LAUNCH_TEST_DIR")
	switch mode {
	case "lines": // many lines on both streams, through small buffers that split them
		out := bufio.NewWriterSize(os.Stdout, 4096)
		errw := bufio.NewWriterSize(os.Stderr, 1000)
		for i := range childLines {
			fmt.Fprintf(out, "out r=%d i=%d %s\n", rank, i, strings.Repeat("o", i%97))
			fmt.Fprintf(errw, "err r=%d i=%d %s\n", rank, i, strings.Repeat("e", i%89))
		}
		fmt.Fprintf(out, "partial r=%d", rank) // no newline
		out.Flush()
		errw.Flush()
	case "long": // rank 0 writes a 100 KiB line in one write; the others chatter
		if rank == 0 {
			os.Stdout.Write([]byte(strings.Repeat("x", 100<<10) + "\n"))
			os.Stdout.WriteString("after\n")
			return 0
		}
		for i := range 500 {
			fmt.Printf("r=%d i=%d\n", rank, i)
		}
	case "affinity":
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				fmt.Printf("CPUS=%s\n", strings.TrimSpace(v))
			}
		}
	case "env":
		for _, k := range append([]string{EnvRank, EnvSize, EnvRendezvous, EnvSecret, EnvJob, EnvHostname, "LAUNCH_TEST_KEEP", "GOMAXPROCS"}, foreignRankVars...) {
			v, ok := os.LookupEnv(k)
			if !ok {
				v = "<unset>"
			}
			fmt.Printf("%s=%s\n", k, v)
		}
		if d, ok := strings.CutPrefix(os.Getenv(EnvRendezvous), "file:"); ok {
			_, err := os.Stat(d)
			fmt.Printf("RDV_EXISTS=%v\n", err == nil)
		}
	case "fail", "stubborn", "kill":
		// Rank FAIL_RANK waits until every other rank is ready, then exits
		// with FAIL_CODE (or kills itself with SIGKILL in mode "kill"). The
		// others wait to be stopped; in mode "stubborn" they ignore SIGTERM
		// and start a grandchild in their process group.
		if strconv.Itoa(rank) == os.Getenv("LAUNCH_TEST_FAIL_RANK") {
			waitReady(dir, size-1)
			if mode == "kill" {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			code, _ := strconv.Atoi(os.Getenv("LAUNCH_TEST_FAIL_CODE"))
			return code
		}
		fallthrough
	case "sleep":
		if mode == "stubborn" {
			gc := exec.Command(os.Args[0])
			gc.Env = append(os.Environ(), "LAUNCH_TEST_CHILD=grandchild")
			if err := gc.Start(); err != nil {
				fmt.Println("grandchild:", err)
				return 1
			}
			fmt.Printf("grandchild=%d\n", gc.Process.Pid)
		}
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		if dir != "" {
			os.WriteFile(filepath.Join(dir, "ready."+strconv.Itoa(rank)), nil, 0o644)
		}
		<-term
		fmt.Println("got SIGTERM")
		if mode == "stubborn" {
			select {} // wait for SIGKILL
		}
		return 143
	case "grandchild":
		select {}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		return 99
	}
	return 0
}

// waitReady waits until n ranks have written their ready file in dir.
func waitReady(dir string, n int) {
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "ready.*"))
		if len(m) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testJob returns a job running the test binary in mode on np ranks, with
// extra environment variables.
func testJob(t *testing.T, mode string, np int, env ...string) (*Job, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	// A -race child would otherwise sleep 1 s before exiting.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	env = append([]string{"GORACE=" + gorace, "LAUNCH_TEST_CHILD=" + mode}, env...)
	return &Job{
		NP:      np,
		Program: exe,
		Env:     append(os.Environ(), append(env, "LAUNCH_TEST_DIR="+t.TempDir())...),
		Stdout:  &stdout,
		Stderr:  &stderr,
	}, &stdout, &stderr
}

// runJob runs j, failing the test if it takes more than 30 s (it would hang
// if a child were not stopped).
func runJob(t *testing.T, ctx context.Context, j *Job) (int, error) {
	t.Helper()
	type result struct {
		code int
		err  error
	}
	c := make(chan result, 1)
	go func() {
		code, err := j.Run(ctx)
		c <- result{code, err}
	}()
	select {
	case r := <-c:
		return r.code, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s")
		return 0, nil
	}
}

func TestLaunchTaggedLines(t *testing.T) {
	t.Parallel()
	const np = 4
	j, stdout, stderr := testJob(t, "lines", np)
	if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v; stderr:\n%s", code, err, stderr)
	}
	check := func(name, out, stream string, pad byte, padMod int) {
		next := make([]int, np)
		partial := make([]bool, np)
		re := regexp.MustCompile(`^\[(\d+)\] (?:` + stream + ` r=(\d+) i=(\d+) (` + string(pad) + `*)|partial r=(\d+))$`)
		if !strings.HasSuffix(out, "\n") {
			t.Errorf("%s does not end with a newline", name)
		}
		for n, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			m := re.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s line %d malformed or interleaved: %.200q", name, n+1, line)
			}
			tag, _ := strconv.Atoi(m[1])
			if m[5] != "" {
				if m[5] != m[1] || partial[tag] || name != "stdout" {
					t.Fatalf("%s line %d: unexpected %q", name, n+1, line)
				}
				partial[tag] = true
				continue
			}
			i, _ := strconv.Atoi(m[3])
			if m[2] != m[1] || i != next[tag] || len(m[4]) != i%padMod {
				t.Fatalf("%s line %d: %.200q, want rank %d's line %d", name, n+1, line, tag, next[tag])
			}
			next[tag]++
		}
		for r := range np {
			if next[r] != childLines {
				t.Errorf("%s: rank %d: %d lines, want %d", name, r, next[r], childLines)
			}
			if name == "stdout" && !partial[r] {
				t.Errorf("stdout: rank %d's last partial line is missing", r)
			}
		}
	}
	check("stdout", stdout.String(), "out", 'o', 97)
	check("stderr", stderr.String(), "err", 'e', 89)
}

func TestLaunchLongLine(t *testing.T) {
	t.Parallel()
	j, stdout, _ := testJob(t, "long", 3)
	if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	lines := strings.Split(stdout.String(), "\n")
	long := "[0] " + strings.Repeat("x", 100<<10)
	found := false
	for i, l := range lines {
		if l == long {
			found = true
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "[") {
				t.Errorf("line after the long one: %.100q", lines[i+1])
			}
		} else if strings.Contains(l, "x") {
			t.Errorf("broken long line: %d bytes, starts %.40q", len(l), l)
		}
	}
	if !found {
		t.Error("the 100 KiB line is missing")
	}
	if !strings.Contains(stdout.String(), "\n[0] after\n") {
		t.Error("rank 0's line after the long one is missing")
	}
	if got := strings.Count(stdout.String(), "\n"); got != 2+2*500 {
		t.Errorf("%d lines, want %d", got, 2+2*500)
	}
}

func TestLaunchLinesUnit(t *testing.T) {
	o := newOutput(nil, nil, true)
	var b bytes.Buffer
	o.lines(strings.NewReader("a\n\nb"), &b, []byte("[7] "))
	if want := "[7] a\n[7] \n[7] b\n"; b.String() != want {
		t.Errorf("lines = %q, want %q", b.String(), want)
	}
	// A line longer than MaxLine is cut into tagged pieces, nothing lost.
	b.Reset()
	in := strings.Repeat("y", 2*MaxLine+5) + "\nz\n"
	o.lines(strings.NewReader(in), &b, []byte("[1] "))
	want := "[1] " + strings.Repeat("y", MaxLine) + "\n[1] " + strings.Repeat("y", MaxLine) + "\n[1] yyyyy\n[1] z\n"
	if b.String() != want {
		t.Errorf("long line: got %d bytes, want %d", b.Len(), len(want))
	}
}

func TestLaunchUntagged(t *testing.T) {
	t.Parallel()
	j, stdout, _ := testJob(t, "long", 2)
	j.Untagged = true
	if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	want := strings.Repeat("x", 100<<10) + "\nafter\n"
	for i := range 500 {
		want += fmt.Sprintf("r=1 i=%d\n", i)
	}
	if got := stdout.String(); len(got) != len(want) || strings.Contains(got, "[") {
		t.Errorf("untagged output: %d bytes, want %d without tags", len(got), len(want))
	}
}

// envOf parses the "KEY=VALUE" lines of rank r in out.
func envOf(out string, r int) map[string]string {
	env := map[string]string{}
	prefix := fmt.Sprintf("[%d] ", r)
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			k, v, _ := strings.Cut(rest, "=")
			env[k] = v
		}
	}
	return env
}

func TestLaunchEnv(t *testing.T) {
	t.Parallel()
	const np = 3
	foreign := []string{"LAUNCH_TEST_KEEP=kept", "SCOLL_RANK=9", "SCOLL_SIZE=99", "SCOLL_RENDEZVOUS=tcp:elsewhere:1"}
	for _, k := range foreignRankVars {
		foreign = append(foreign, k+"=5")
	}
	for _, tc := range []struct {
		name       string
		env        []string
		rendezvous string
		secret     string // "" for a fresh one
	}{
		{"default", foreign, "", ""},
		{"inherited secret", append(foreign, "SCOLL_SECRET=s3cret", "GOMAXPROCS=7"), "tcp:127.0.0.1:7000", "s3cret"},
		{"file rendezvous", foreign, "file:" + t.TempDir(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, stdout, _ := testJob(t, "env", np, tc.env...)
			j.Rendezvous = tc.rendezvous
			if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
				t.Fatalf("Run = %d, %v", code, err)
			}
			e0 := envOf(stdout.String(), 0)
			for r := range np {
				e := envOf(stdout.String(), r)
				if e[EnvRank] != strconv.Itoa(r) || e[EnvSize] != strconv.Itoa(np) {
					t.Errorf("rank %d: %s=%q %s=%q", r, EnvRank, e[EnvRank], EnvSize, e[EnvSize])
				}
				for _, k := range []string{EnvRendezvous, EnvSecret, EnvJob} {
					if e[k] == "" || e[k] != e0[k] {
						t.Errorf("rank %d: %s=%q, rank 0 has %q", r, k, e[k], e0[k])
					}
				}
				for _, k := range foreignRankVars {
					if e[k] != "<unset>" {
						t.Errorf("rank %d: %s=%q, want it removed", r, k, e[k])
					}
				}
				if e["LAUNCH_TEST_KEEP"] != "kept" {
					t.Errorf("rank %d: inherited variable lost: %q", r, e["LAUNCH_TEST_KEEP"])
				}
			}
			// GOMAXPROCS: the user's, else each rank's share of the CPUs.
			wantProcs := strconv.Itoa(max(1, runtime.NumCPU()/np))
			if tc.secret != "" {
				wantProcs = "7"
			}
			if e0["GOMAXPROCS"] != wantProcs {
				t.Errorf("GOMAXPROCS=%q, want %s", e0["GOMAXPROCS"], wantProcs)
			}
			if tc.secret != "" && e0[EnvSecret] != tc.secret {
				t.Errorf("secret %q, want the inherited %q", e0[EnvSecret], tc.secret)
			}
			if tc.secret == "" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(e0[EnvSecret]) {
				t.Errorf("secret %q, want 64 hex digits", e0[EnvSecret])
			}
			if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(e0[EnvJob]) {
				t.Errorf("job id %q, want 16 hex digits", e0[EnvJob])
			}
			switch {
			case tc.rendezvous != "":
				if e0[EnvRendezvous] != tc.rendezvous {
					t.Errorf("rendezvous %q, want %q", e0[EnvRendezvous], tc.rendezvous)
				}
			default:
				dir, ok := strings.CutPrefix(e0[EnvRendezvous], "file:")
				if !ok || !filepath.IsAbs(dir) || e0["RDV_EXISTS"] != "true" {
					t.Errorf("rendezvous %q (exists: %s), want file:<existing directory>", e0[EnvRendezvous], e0["RDV_EXISTS"])
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("temporary rendezvous %s not removed: %v", dir, err)
				}
			}
		})
	}
}

// TestLaunchRanksPerNode: with RanksPerNode k, rank r sees the host name
// node<r/k>; without, the inherited value (or none).
func TestLaunchRanksPerNode(t *testing.T) {
	t.Parallel()
	const np = 5
	for _, k := range []int{0, 2} {
		j, stdout, _ := testJob(t, "env", np, EnvHostname+"=inherited")
		j.RanksPerNode = k
		if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
			t.Fatalf("Run = %d, %v", code, err)
		}
		for r := range np {
			want := "inherited"
			if k > 0 {
				want = fmt.Sprintf("node%d", r/k)
			}
			if got := envOf(stdout.String(), r)[EnvHostname]; got != want {
				t.Errorf("RanksPerNode %d, rank %d: %s=%q, want %q", k, r, EnvHostname, got, want)
			}
		}
	}
}

func TestLaunchFreshSecretsDiffer(t *testing.T) {
	t.Parallel()
	var secrets, ids []string
	for range 2 {
		j, stdout, _ := testJob(t, "env", 1)
		if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
			t.Fatalf("Run = %d, %v", code, err)
		}
		e := envOf(stdout.String(), 0)
		secrets, ids = append(secrets, e[EnvSecret]), append(ids, e[EnvJob])
	}
	if secrets[0] == secrets[1] || ids[0] == ids[1] {
		t.Errorf("two jobs share a secret or id: %q %q", secrets, ids)
	}
}

func TestLaunchExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		code int
		want RankError
		msg  string
	}{
		{"fail", 3, RankError{Rank: 2, Status: 3}, "rank 2 exited with status 3"},
		{"kill", 0, RankError{Rank: 2, Status: -1, Signal: 9}, "rank 2 killed by signal 9"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			j, stdout, _ := testJob(t, tc.mode, 4, "LAUNCH_TEST_FAIL_RANK=2", "LAUNCH_TEST_FAIL_CODE="+strconv.Itoa(tc.code))
			j.Grace = time.Minute // the others exit on SIGTERM; Run must not wait for SIGKILL
			code, err := runJob(t, t.Context(), j)
			var re *RankError
			if !errors.As(err, &re) || *re != tc.want || err.Error() != tc.msg {
				t.Fatalf("Run error %v (%#v), want %s", err, re, tc.msg)
			}
			if code != tc.want.ExitCode() {
				t.Errorf("exit code %d, want %d", code, tc.want.ExitCode())
			}
			for _, r := range []int{0, 1, 3} {
				if !strings.Contains(stdout.String(), fmt.Sprintf("[%d] got SIGTERM\n", r)) {
					t.Errorf("rank %d was not sent SIGTERM; output:\n%s", r, stdout)
				}
			}
		})
	}
	if want := 137; (&RankError{Signal: 9}).ExitCode() != want {
		t.Errorf("signal 9: exit code %d, want %d", (&RankError{Signal: 9}).ExitCode(), want)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) S ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
	} else if _, serr := os.Stat("/proc/self"); serr == nil {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// TestLaunchStopKills has the surviving ranks ignore SIGTERM: Run returns
// only if it follows up with SIGKILL, to their whole process groups.
func TestLaunchStopKills(t *testing.T) {
	t.Parallel()
	j, stdout, stderr := testJob(t, "stubborn", 3, "LAUNCH_TEST_FAIL_RANK=0", "LAUNCH_TEST_FAIL_CODE=5")
	j.Grace = 100 * time.Millisecond
	code, err := runJob(t, t.Context(), j)
	if code != 5 || err == nil || err.Error() != "rank 0 exited with status 5" {
		t.Fatalf("Run = %d, %v; stderr:\n%s", code, err, stderr)
	}
	var pids []int
	for _, r := range []int{1, 2} {
		e := envOf(stdout.String(), r)
		pid, err := strconv.Atoi(e["grandchild"])
		if err != nil {
			t.Fatalf("rank %d started no grandchild; output:\n%s", r, stdout)
		}
		pids = append(pids, pid)
		if !strings.Contains(stdout.String(), fmt.Sprintf("[%d] got SIGTERM\n", r)) {
			t.Errorf("rank %d was not sent SIGTERM", r)
		}
	}
	// The grandchildren were killed with their group; their new parent
	// reaps them soon after.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !alive(pids[0]) && !alive(pids[1]) {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("grandchildren %v outlived the job", pids)
		}
	}
}

func TestLaunchTimeout(t *testing.T) {
	t.Parallel()
	j, stdout, _ := testJob(t, "sleep", 2)
	j.Timeout = 300 * time.Millisecond
	code, err := runJob(t, t.Context(), j)
	if code != TimeoutExitCode || !errors.Is(err, ErrTimeout) {
		t.Fatalf("Run = %d, %v; want %d, %v", code, err, TimeoutExitCode, ErrTimeout)
	}
	if !strings.Contains(err.Error(), "300ms") {
		t.Errorf("error %q does not give the timeout", err)
	}
	_ = stdout
}

func TestLaunchInterrupt(t *testing.T) {
	t.Parallel()
	j, stdout, _ := testJob(t, "sleep", 3)
	dir := strings.TrimPrefix(j.Env[len(j.Env)-1], "LAUNCH_TEST_DIR=")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitReady(dir, 3)
		cancel()
	}()
	code, err := runJob(t, ctx, j)
	if code == 0 || !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run = %d, %v; want non-zero, %v", code, err, ErrInterrupted)
	}
	if n := strings.Count(stdout.String(), "got SIGTERM"); n != 3 {
		t.Errorf("%d ranks got SIGTERM, want 3; output:\n%s", n, stdout)
	}
}

func TestLaunchBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(*Job)
		want  error // nil: any error
		match string
	}{
		{"np 0", func(j *Job) { j.NP = 0 }, ErrInvalid, "at least 1"},
		{"np -1", func(j *Job) { j.NP = -1 }, ErrInvalid, "at least 1"},
		{"no program", func(j *Job) { j.Program = "" }, ErrInvalid, "no program"},
		{"not found", func(j *Job) { j.Program = "scoll-no-such-program" }, exec.ErrNotFound, "scoll-no-such-program"},
		{"no such file", func(j *Job) { j.Program = "/nonexistent/prog" }, os.ErrNotExist, "/nonexistent/prog"},
		{"bad rendezvous", func(j *Job) { j.Rendezvous = "udp:x:1" }, ErrInvalid, "udp:x:1"},
		{"tcp without port", func(j *Job) { j.Rendezvous = "tcp:host" }, ErrInvalid, "tcp:HOST:PORT"},
		{"empty file rendezvous", func(j *Job) { j.Rendezvous = "file:" }, ErrInvalid, "no directory"},
		{"missing rendezvous directory", func(j *Job) { j.Rendezvous = "file:/nonexistent/scoll-dir" }, ErrInvalid, "/nonexistent/scoll-dir does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, stdout, stderr := testJob(t, "env", 2)
			tc.edit(j)
			code, err := runJob(t, t.Context(), j)
			if code == 0 || err == nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.match) {
				t.Fatalf("Run = %d, %v; want non-zero, %v mentioning %q", code, err, tc.want, tc.match)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("a child ran: %q %q", stdout, stderr)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	j, stdout, _ := testJob(t, "env", 2)
	if code, err := j.Run(ctx); code == 0 || !errors.Is(err, ErrInterrupted) || stdout.Len() != 0 {
		t.Errorf("canceled context: Run = %d, %v, output %q", code, err, stdout)
	}
}
