package scoll_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

var longFailures = flag.Bool("scoll.long", false, "run the long process-failure test (50 kills)")

// childEnv names the mode a re-executed test binary runs in.
const childEnv = "SCOLL_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child runs one rank of a multi-process test and returns its exit status.
func child(mode string) int {
	switch mode {
	case "allreduce-loop":
		return childAllreduceLoop()
	case "matrix":
		return childMatrix()
	}
	fmt.Println("unknown child mode", mode)
	return 2
}

// childAllreduceLoop calls Allreduce of changing sizes (eager and
// rendezvous messages) until a call fails, then reports how: "failed
// <unix ns> peer=<bool> leaked=<goroutines>".
func childAllreduceLoop() int {
	base := runtime.NumGoroutine()
	ctx := context.Background()
	c, err := scoll.Init(ctx)
	if err != nil {
		fmt.Println("init:", err)
		return 2
	}
	sizes := []int{1, 8 << 10, 128 << 10}
	bufs := make([][]float64, len(sizes))
	for i, n := range sizes {
		bufs[i] = make([]float64, n)
	}
	for i := 0; ; i++ {
		b := bufs[i%len(sizes)]
		err = scoll.Allreduce(ctx, c, nil, b, scoll.Sum)
		if err != nil {
			break
		}
		if i == 10 {
			fmt.Println("ready")
		}
	}
	at := time.Now().UnixNano()
	c.Close()
	leaked := 0
	for range 300 {
		leaked = runtime.NumGoroutine() - base
		if leaked <= 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("failed %d peer=%v leaked=%d err=%v\n", at, errors.Is(err, scoll.ErrPeerFailed), leaked, err)
	return 3
}

type childResult struct {
	rank   int
	lines  []string
	err    error // from Wait
	failAt time.Time
	peer   bool
	leaked int
	exited chan struct{} // closed once the process has been reaped
}

// startJob starts np ranks of this test binary in mode, connected through a
// fresh file rendezvous, and returns them with a channel of "ready" lines.
func startJob(t *testing.T, np int, mode string) ([]*exec.Cmd, []*childResult, chan int, *sync.WaitGroup) {
	t.Helper()
	dir := t.TempDir()
	secret := fmt.Sprintf("%032x", rand.Uint64())
	cmds := make([]*exec.Cmd, np)
	res := make([]*childResult, np)
	ready := make(chan int, np)
	var wg sync.WaitGroup
	for r := range np {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+mode,
			"SCOLL_RANK="+strconv.Itoa(r), "SCOLL_SIZE="+strconv.Itoa(np),
			"SCOLL_RENDEZVOUS=file:"+dir, "SCOLL_SECRET="+secret)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = cmd
		res[r] = &childResult{rank: r, exited: make(chan struct{})}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				line := sc.Text()
				res[r].lines = append(res[r].lines, line)
				if line == "ready" {
					ready <- r
				}
				if f, ok := strings.CutPrefix(line, "failed "); ok {
					var ns int64
					var peer string
					fmt.Sscanf(f, "%d peer=%s leaked=%d", &ns, &peer, &res[r].leaked)
					res[r].failAt = time.Unix(0, ns)
					res[r].peer = strings.HasPrefix(peer, "true")
				}
			}
			res[r].err = cmd.Wait()
			close(res[r].exited)
		}()
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
		wg.Wait()
	})
	return cmds, res, ready, &wg
}

// killOne runs a job of np ranks looping over Allreduce, kills a random rank
// after a random delay, and checks that every survivor's call failed with
// ErrPeerFailed, that it leaked no goroutine, and returns the slowest
// survivor's time from the kill to its error.
func killOne(t *testing.T, np int, rng *rand.Rand, sig syscall.Signal) time.Duration {
	cmds, res, ready, wg := startJob(t, np, "allreduce-loop")
	timeout := time.After(60 * time.Second)
	for range np {
		select {
		case <-ready:
		case <-timeout:
			t.Fatal("ranks never got ready")
		}
	}
	time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
	victim := rng.IntN(np)
	killed := time.Now()
	cmds[victim].Process.Signal(sig)
	if sig == syscall.SIGSTOP {
		// A stopped process keeps its connections open but falls silent:
		// the survivors notice through the missing heartbeats.
		defer cmds[victim].Process.Kill()
	}
	done := make(chan struct{})
	go func() {
		for r := range cmds {
			if r != victim {
				<-res[r].exited
			}
		}
		if sig == syscall.SIGSTOP {
			cmds[victim].Process.Kill()
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("survivors still running 30 s after rank %d was killed", victim)
	}
	var slowest time.Duration
	for _, r := range res {
		if r.rank == victim {
			continue
		}
		if r.failAt.IsZero() {
			t.Fatalf("rank %d: no failure report; output %q, exit %v", r.rank, r.lines, r.err)
		}
		if !r.peer {
			t.Errorf("rank %d: error does not match ErrPeerFailed: %q", r.rank, r.lines)
		}
		if r.leaked > 0 {
			t.Errorf("rank %d: %d goroutines left after Close", r.rank, r.leaked)
		}
		slowest = max(slowest, r.failAt.Sub(killed))
	}
	return slowest
}

// TestKillProcess kills a rank of a running 4-process job at a random point
// of its Allreduce loop: every survivor's call must return ErrPeerFailed
// within the 2 s liveness timeout, without leaking goroutines. A few runs by
// default, 50 with -scoll.long. One run stops the rank (SIGSTOP) instead:
// its connections stay open and only the missing heartbeats tell.
func TestKillProcess(t *testing.T) {
	matrix.SkipShort(t, "starts processes")
	runs := 3
	if *longFailures {
		runs = 50
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var worst time.Duration
	for i := range runs {
		d := killOne(t, 4, rng, syscall.SIGKILL)
		worst = max(worst, d)
		if d > 2*time.Second {
			t.Errorf("run %d: a survivor noticed the failure only after %v", i, d)
		}
	}
	t.Logf("%d runs: slowest survivor noticed the killed rank after %v", runs, worst)
	// The silent peer: noticed when its heartbeats have been missing for
	// the 2 s timeout, counted from its last message.
	d := killOne(t, 4, rng, syscall.SIGSTOP)
	if d > 2*time.Second+time.Second {
		t.Errorf("stopped rank noticed after %v", d)
	}
	t.Logf("stopped rank noticed after %v", d)
}

// TestCancelAbortsPeers cancels one rank's context while the others have not
// yet entered the call: the cancelled rank returns ErrCanceled, the others
// fail fast with ErrPeerFailed instead of waiting, and the next collective
// works again.
func TestCancelAbortsPeers(t *testing.T) {
	comms := matrix.TCPComms(t, 4, tcp.Config{})
	ctx0, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	errs := make([]error, 4)
	took := make([]time.Duration, 4)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if r == 0 {
				ctx = ctx0
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			buf := make([]float64, 1<<17)
			t0 := time.Now()
			errs[r] = scoll.Allreduce(ctx, c, nil, buf, scoll.Sum)
			took[r] = time.Since(t0)
		}()
	}
	wg.Wait()
	if !errors.Is(errs[0], scoll.ErrCanceled) || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Fatalf("cancelled rank: %v", errs[0])
	}
	for r := 1; r < 4; r++ {
		if !errors.Is(errs[r], scoll.ErrPeerFailed) {
			t.Fatalf("rank %d: %v, want ErrPeerFailed", r, errs[r])
		}
	}
	t.Logf("peers failed %v after entering the call (%v in all)", took[1:], time.Since(start))
	err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
		out := []int32{0}
		if err := scoll.Allreduce(ctx, c, []int32{int32(c.Rank())}, out, scoll.Sum); err != nil {
			return err
		}
		if out[0] != 6 {
			return fmt.Errorf("rank %d: sum %d, want 6", c.Rank(), out[0])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("collective after the aborted one: %v", err)
	}
}

// childMatrix is not used: the world matrix runs as TestMatrixWorld in
// each process (see TestMatrixProcesses).
func childMatrix() int { return 2 }
