// Package launch starts the ranks of a job as local processes, the engine
// behind "scoll run".
//
// A [Job] runs NP copies of one program. Each child gets SCOLL_RANK,
// SCOLL_SIZE, SCOLL_RENDEZVOUS, SCOLL_SECRET and SCOLL_JOB in its
// environment and loses the rank variables of other launchers (Open MPI,
// PMI, Slurm), so a job started from inside another launcher's job does not
// pick up the outer rank. Output lines are tagged with the rank; the first
// child to fail stops the others (SIGTERM, then SIGKILL after a grace
// period) and decides the exit status, as mpirun and srun do.
//
// On Linux, when there are at least as many CPUs as ranks, each child is
// bound to its own equal share of the launcher's CPUs, as MPI launchers
// bind ranks to cores (Job.NoBind turns this off).
//
// Each child runs in its own process group, which is what the launcher
// signals, so helpers a rank starts stop with it; on Linux a child is also
// killed when the launcher dies (Pdeathsig).
package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when a job is
// stopped and [Job.Grace] is zero.
const DefaultGrace = 2 * time.Second

// TimeoutExitCode is the exit code [Job.Run] returns when the job ran past
// [Job.Timeout], the one timeout(1) uses.
const TimeoutExitCode = 124

// Environment variables set in every child.
const (
	EnvRank       = "SCOLL_RANK"       // the child's rank, 0..NP-1
	EnvSize       = "SCOLL_SIZE"       // NP
	EnvRendezvous = "SCOLL_RENDEZVOUS" // "file:DIR" or "tcp:HOST:PORT"
	EnvSecret     = "SCOLL_SECRET"     // shared by every rank of the job
	EnvJob        = "SCOLL_JOB"        // random id of the job
)

// foreignRankVars are the rank and size variables of other launchers. They
// are removed from the children's environment.
var foreignRankVars = []string{
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"PMI_RANK", "PMI_SIZE",
	"SLURM_PROCID", "SLURM_NTASKS",
}

var (
	// ErrInvalid is wrapped by the errors of a job that cannot be started:
	// NP < 1, no program, a malformed rendezvous. Nothing was started.
	ErrInvalid = errors.New("launch: invalid job")
	// ErrTimeout is wrapped by the error of a job stopped because it ran
	// past its Timeout.
	ErrTimeout = errors.New("launch: job timed out")
	// ErrInterrupted is wrapped by the error of a job stopped because its
	// context was canceled (the launcher got SIGINT or SIGTERM).
	ErrInterrupted = errors.New("launch: job interrupted")
)

// RankError reports the child whose failure ended the job: the first one,
// in the order the launcher saw them, to exit non-zero or be killed by a
// signal it did not send.
type RankError struct {
	Rank   int // the failing rank
	Status int // its exit status; -1 if it was killed by a signal
	Signal int // the signal that killed it, 0 if it exited
}

// Error returns "rank R exited with status S" or "rank R killed by signal N".
func (e *RankError) Error() string {
	if e.Signal != 0 {
		return fmt.Sprintf("rank %d killed by signal %d", e.Rank, e.Signal)
	}
	return fmt.Sprintf("rank %d exited with status %d", e.Rank, e.Status)
}

// ExitCode is the status a shell would report for the child: Status, or
// 128+Signal when it was killed by a signal.
func (e *RankError) ExitCode() int {
	if e.Signal != 0 {
		return 128 + e.Signal
	}
	return e.Status
}

// Job describes the ranks to start. The zero values of the optional fields
// give the behaviour of "scoll run" without flags, except that the zero
// Stdout and Stderr discard output.
type Job struct {
	// NP is the number of ranks, at least 1.
	NP int
	// Program is the program each rank runs, looked up in PATH when it has
	// no slash (exec.LookPath). Args follow it on the command line.
	Program string
	Args    []string
	// Rendezvous is given to the children as SCOLL_RENDEZVOUS: "file:DIR"
	// or "tcp:HOST:PORT". Empty means "file:" and a fresh temporary
	// directory that Run removes once every child has exited.
	Rendezvous string
	// Env is the environment the children inherit; nil means os.Environ().
	// A non-empty SCOLL_SECRET in it is kept; otherwise Run draws one.
	Env []string
	// Stdout and Stderr receive the children's output, each line prefixed
	// with "[RANK] ". Writes are serialised (one Write per line), so the
	// writers need not be safe for concurrent use; nil discards.
	Stdout, Stderr io.Writer
	// Untagged passes output through without rank prefixes, in chunks as
	// the children write it. A *os.File is then given to the children
	// directly.
	Untagged bool
	// Grace is the time between SIGTERM and SIGKILL when the job is
	// stopped; zero means DefaultGrace. It also bounds how long Run waits
	// for output still buffered after the last child has exited.
	Grace time.Duration
	// Timeout, when positive, stops the job after that long.
	Timeout time.Duration
	// Rand is the source of the secret and the job id; nil means
	// crypto/rand.
	Rand io.Reader
	// NoBind leaves every rank free to run on any CPU. By default, on
	// Linux, when the launcher may use at least as many CPUs as there are
	// ranks, each rank is bound to its own equal share of them (rank r to
	// the r-th block, in CPU number order), as MPI launchers bind ranks
	// to cores: ranks then neither migrate nor meet on one CPU while
	// another idles. Jobs that share a machine with other bound jobs
	// should set NoBind, since every job starts binding at the first CPU.
	NoBind bool
	// RanksPerNode, when positive, makes one machine look like several
	// nodes: rank r gets SCOLL_HOSTNAME=node<r/RanksPerNode> (the host
	// name every node-aware feature of scoll reads first).
	RanksPerNode int
}

// EnvHostname overrides the host name scoll's node-aware features see.
const EnvHostname = "SCOLL_HOSTNAME"

// Run starts the children, waits for all of them to exit, and returns the
// job's exit code with the reason when it is not 0:
//
//   - 0, nil when every child exited with status 0;
//   - the first failing child's exit code (128+signal when it was killed),
//     with a *RankError, after stopping the others;
//   - TimeoutExitCode with an error wrapping ErrTimeout;
//   - 1 with an error wrapping ErrInterrupted when ctx was canceled, after
//     stopping the children;
//   - 1 with another error when the job could not be started (ErrInvalid,
//     program not found, fork failure); then no child is left running.
//
// Run returns only after every child has been reaped and its output
// written. Children get no standard input.
func (j *Job) Run(ctx context.Context) (exitCode int, err error) {
	if err := ctx.Err(); err != nil {
		return 1, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	}
	if j.NP < 1 {
		return 1, fmt.Errorf("%w: %d ranks, want at least 1", ErrInvalid, j.NP)
	}
	if j.Program == "" {
		return 1, fmt.Errorf("%w: no program", ErrInvalid)
	}
	if err := checkRendezvous(j.Rendezvous); err != nil {
		return 1, err
	}
	path, err := exec.LookPath(j.Program)
	if err != nil {
		var ee *exec.Error // names the program again
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return 1, fmt.Errorf("launch: program %q: %w", j.Program, err)
	}
	env := j.Env
	if env == nil {
		env = os.Environ()
	}
	random := j.Rand
	if random == nil {
		random = rand.Reader
	}
	secret := lookup(env, EnvSecret)
	if secret == "" {
		if secret, err = randomHex(random, 32); err != nil {
			return 1, fmt.Errorf("launch: secret: %w", err)
		}
	}
	id, err := randomHex(random, 8)
	if err != nil {
		return 1, fmt.Errorf("launch: job id: %w", err)
	}
	rendezvous := j.Rendezvous
	if rendezvous == "" {
		dir, err := os.MkdirTemp("", "scoll-run-")
		if err != nil {
			return 1, fmt.Errorf("launch: rendezvous directory: %w", err)
		}
		// Deferred first, so it runs after the children are reaped.
		defer os.RemoveAll(dir)
		rendezvous = "file:" + dir
	}
	r := &runner{
		job:   j,
		path:  path,
		grace: j.Grace,
		out:   newOutput(j.Stdout, j.Stderr, !j.Untagged),
		env:   childEnv(env, j.NP, rendezvous, secret, id),
	}
	if r.grace <= 0 {
		r.grace = DefaultGrace
	}
	return r.run(ctx)
}

// runner is the state of one Run.
type runner struct {
	job   *Job
	path  string
	grace time.Duration
	out   *output
	env   []string // shared by every child; the rank is appended
	procs []*exec.Cmd
}

// exit is a reaped child.
type exit struct {
	rank  int
	state *os.ProcessState
}

func (r *runner) run(ctx context.Context) (int, error) {
	exits := make(chan exit, r.job.NP)
	reapedAll := make(chan struct{})
	defer close(reapedAll)
	var startErr error
	r.procs, startErr = r.startAll(reapedAll)
	for rank, cmd := range r.procs {
		go func() {
			cmd.Wait() // the status is in cmd.ProcessState
			exits <- exit{rank, cmd.ProcessState}
		}()
	}

	var timeout <-chan time.Time
	if r.job.Timeout > 0 {
		t := time.NewTimer(r.job.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var (
		code       int
		reason     error
		stopping   bool
		kill       <-chan time.Time // fires Grace after SIGTERM
		graceTimer *time.Timer
		reaped     = make([]bool, len(r.procs))
		done       = ctx.Done()
	)
	stop := func(c int, why error) {
		if stopping {
			return
		}
		stopping, code, reason = true, c, why
		r.signal(reaped, sigTerm)
		graceTimer = time.NewTimer(r.grace)
		kill = graceTimer.C
	}
	if startErr != nil {
		stopping, code, reason = true, 1, startErr
		r.signal(reaped, sigKill)
	}
	for left := len(r.procs); left > 0; {
		select {
		case e := <-exits:
			left--
			reaped[e.rank] = true
			if stopping {
				continue
			}
			if re := rankError(e.rank, e.state); re != nil {
				stop(re.ExitCode(), re)
			}
		case <-done:
			done = nil
			stop(1, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx)))
		case <-timeout:
			stop(TimeoutExitCode, fmt.Errorf("%w after %v", ErrTimeout, r.job.Timeout))
		case <-kill:
			kill = nil
			r.signal(reaped, sigKill)
		}
	}
	if graceTimer != nil {
		graceTimer.Stop()
	}
	if stopping {
		// Whatever the ranks started in their groups goes too.
		for _, cmd := range r.procs {
			signalGroup(cmd.Process, sigKill)
		}
	}
	r.out.wait(r.grace)
	return code, reason
}

// signal sends sig to the process group of every child not yet reaped.
func (r *runner) signal(reaped []bool, sig stopSignal) {
	for rank, cmd := range r.procs {
		if !reaped[rank] {
			signalGroup(cmd.Process, sig)
		}
	}
}

// startAll starts the children in rank order until one fails to start.
// Bound children are started from a thread of their own, bound in turn to
// each rank's CPUs (a child inherits the mask of the thread that forks it);
// that thread lives until done is closed, after the children are reaped,
// since the kernel sends their parent-death signal when it ends.
func (r *runner) startAll(done <-chan struct{}) ([]*exec.Cmd, error) {
	plan := bindPlan(r.job.NP, allowedCPUs())
	if r.job.NoBind || plan == nil {
		return r.startRanks(nil)
	}
	type result struct {
		procs []*exec.Cmd
		err   error
	}
	res := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		procs, err := r.startRanks(func(rank int) {
			bindThread(plan[rank]) // unbound if the kernel refuses
		})
		res <- result{procs, err}
		<-done
	}()
	x := <-res
	return x.procs, x.err
}

// startRanks starts the children in rank order, calling before (when not
// nil) ahead of each, until one fails to start.
func (r *runner) startRanks(before func(rank int)) ([]*exec.Cmd, error) {
	var procs []*exec.Cmd
	for rank := range r.job.NP {
		if before != nil {
			before(rank)
		}
		cmd, err := r.start(rank)
		if err != nil {
			return procs, fmt.Errorf("launch: starting rank %d: %w", rank, err)
		}
		procs = append(procs, cmd)
	}
	return procs, nil
}

// bindPlan divides cpus into np equal blocks in order, the CPUs of each
// rank, or returns nil when there are fewer CPUs than ranks.
func bindPlan(np int, cpus []int) [][]int {
	k := len(cpus) / max(np, 1)
	if k < 1 {
		return nil
	}
	plan := make([][]int, np)
	for r := range plan {
		plan[r] = cpus[r*k : (r+1)*k : (r+1)*k]
	}
	return plan
}

// start starts the child of one rank with its output pumps.
func (r *runner) start(rank int) (*exec.Cmd, error) {
	cmd := &exec.Cmd{
		Path: r.path,
		Args: append([]string{r.job.Program}, r.job.Args...),
		Env:  append(r.env[:len(r.env):len(r.env)], fmt.Sprintf("%s=%d", EnvRank, rank)),
	}
	if k := r.job.RanksPerNode; k > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=node%d", EnvHostname, rank/k))
	}
	setProcAttr(cmd)
	stdout, err := r.out.attach(rank, cmd, false)
	if err != nil {
		return nil, err
	}
	stderr, err := r.out.attach(rank, cmd, true)
	if err != nil {
		stdout.abort()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		stdout.abort()
		stderr.abort()
		return nil, err
	}
	stdout.started()
	stderr.started()
	return cmd, nil
}

// rankError returns the failure of a reaped child, nil if it exited 0.
func rankError(rank int, st *os.ProcessState) *RankError {
	if st == nil {
		return &RankError{Rank: rank, Status: 1}
	}
	status, sig := exitStatus(st)
	if status == 0 && sig == 0 {
		return nil
	}
	return &RankError{Rank: rank, Status: status, Signal: sig}
}

// childEnv returns env without the variables Run sets or removes, followed
// by those it sets except SCOLL_RANK.
func childEnv(env []string, np int, rendezvous, secret, id string) []string {
	drop := append([]string{EnvRank, EnvSize, EnvRendezvous, EnvSecret, EnvJob}, foreignRankVars...)
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(drop, k) {
			out = append(out, kv)
		}
	}
	if lookup(env, "GOMAXPROCS") == "" {
		// Each rank gets its share of the CPUs, as an MPI launcher that
		// binds ranks to cores would give: Go programs otherwise run as
		// many threads as there are CPUs in every rank, which measured
		// markedly slower for ranks that outnumber half the CPUs.
		out = append(out, fmt.Sprintf("GOMAXPROCS=%d", max(1, runtime.NumCPU()/np)))
	}
	return append(out,
		fmt.Sprintf("%s=%d", EnvSize, np),
		EnvRendezvous+"="+rendezvous,
		EnvSecret+"="+secret,
		EnvJob+"="+id)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lookup returns the last value of key in env, as os/exec would pass it.
func lookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func randomHex(r io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// checkRendezvous accepts "", "file:DIR" and "tcp:HOST:PORT".
func checkRendezvous(s string) error {
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "file:"):
		if s == "file:" {
			return fmt.Errorf("%w: rendezvous %q has no directory", ErrInvalid, s)
		}
		// A directory given by hand must exist: a mistyped path would
		// otherwise be created, and the ranks of another launch would never
		// find this one's.
		dir := strings.TrimPrefix(s, "file:")
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("%w: rendezvous directory %s does not exist or is not a directory (create it, on a file system every host shares)", ErrInvalid, dir)
		}
		return nil
	case strings.HasPrefix(s, "tcp:"):
		if _, port, err := net.SplitHostPort(strings.TrimPrefix(s, "tcp:")); err != nil || port == "" {
			return fmt.Errorf("%w: rendezvous %q: want tcp:HOST:PORT", ErrInvalid, s)
		}
		return nil
	}
	return fmt.Errorf("%w: rendezvous %q: want file:DIR or tcp:HOST:PORT", ErrInvalid, s)
}
