package scoll_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/launch"
	"github.com/scoll/scoll/internal/matrix"
)

// jobWorld returns this process's world communicator, closed when t ends,
// and skips t in a job of one rank (the test was not started by a
// launcher).
func jobWorld(t *testing.T) *scoll.Comm {
	t.Helper()
	c, err := scoll.Init(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Size() == 1 {
		t.Skip("a job of one rank: start this test under scoll run, mpirun or srun")
	}
	return c
}

// TestMatrixWorld runs the algorithm matrix as one rank of a job whose
// ranks are processes: under "scoll run --np 4", mpirun or srun (or, built
// with -tags mpi, over the MPI transport):
//
//	go test -c -o scoll.test . && scoll run --np 4 -- ./scoll.test -test.run MatrixWorld
//
// Run alone it skips. Every rank checks its own results against the naive
// reference; the ranks stay in step because the matrix is the same
// sequence of calls everywhere.
func TestMatrixWorld(t *testing.T) {
	ctx := context.Background()
	c := jobWorld(t)
	p := c.Size()
	counts := []int{0, 1, 3, 1000, 65537}
	if p > 4 && !*matrix.Full {
		counts = counts[:4]
	}
	for _, coll := range scoll.Collectives() {
		for _, alg := range scoll.Algorithms(coll) {
			if alg.PowerOfTwo && p&(p-1) != 0 {
				continue
			}
			err := matrix.ForCases(coll, alg, p, counts, func(n, root int, inPlace bool, oc matrix.OpCase[int32]) error {
				return matrix.CheckCase(ctx, c, nil, coll, alg.Name, n, root, inPlace, oc)
			})
			if err != nil {
				t.Fatalf("rank %d: %v", c.Rank(), err)
			}
		}
	}
}

// TestMatrixProcesses starts TestMatrixWorld and TestSubCommWorld in 3
// processes of this test binary through the launcher of scoll run: the
// matrix over TCP between processes, on the world and on derived
// communicators, bootstrapped by Init from the environment.
func TestMatrixProcesses(t *testing.T) {
	matrix.SkipShort(t, "starts processes")
	var out bytes.Buffer
	job := &launch.Job{NP: 3, Program: os.Args[0], Args: []string{"-test.run=^(TestMatrixWorld|TestSubCommWorld)$", "-test.v"},
		Stdout: &out, Stderr: &out, Timeout: 4 * time.Minute}
	code, err := job.Run(context.Background())
	if code != 0 || err != nil {
		t.Fatalf("exit %d: %v\\n%s", code, err, out.String())
	}
	for _, name := range []string{"TestMatrixWorld", "TestSubCommWorld"} {
		if n := strings.Count(out.String(), "--- PASS: "+name); n != 3 {
			t.Fatalf("%s: %d of 3 ranks passed:\n%s", name, n, out.String())
		}
	}
}

// TestInitAlone: without a launcher's environment Init gives a
// communicator of one rank whose collectives work.
func TestInitAlone(t *testing.T) {
	for _, k := range []string{"SCOLL_RANK", "SCOLL_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	c, err := scoll.Init(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("rank %d size %d", c.Rank(), c.Size())
	}
	out := make([]float64, 2)
	if err := scoll.Allreduce(context.Background(), c, []float64{1, 2}, out, scoll.Sum); err != nil || out[1] != 2 {
		t.Fatalf("allreduce alone: %v %v", err, out)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := scoll.Allreduce(context.Background(), c, []float64{1}, out[:1], scoll.Sum); !errors.Is(err, scoll.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestInitEnvironment: each launcher's variables are read, in order, and bad
// values or a missing rendezvous give ErrInvalidArgument.
func TestInitEnvironment(t *testing.T) {
	vars := []string{"SCOLL_RANK", "SCOLL_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", "SCOLL_RENDEZVOUS", "SCOLL_JOB", "SCOLL_SECRET", "OMPI_MCA_ess_base_jobid",
		"PMIX_NAMESPACE", "PMI_KVSNAME", "SLURM_JOB_ID", "SLURM_STEP_ID", "SCOLL_EAGER_SENDS"}
	clear := func(t *testing.T) {
		for _, k := range vars {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // substring of the error
	}{
		{"scoll bad size", map[string]string{"SCOLL_RANK": "0", "SCOLL_SIZE": "x"}, "scoll environment"},
		{"rank beyond size", map[string]string{"SCOLL_RANK": "4", "SCOLL_SIZE": "4"}, "scoll environment"},
		{"open mpi no rendezvous", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}, "no rendezvous"},
		{"pmi negative", map[string]string{"PMI_RANK": "-1", "PMI_SIZE": "2"}, "PMI environment"},
		{"slurm no rendezvous", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "3"}, "tcp:host:port"},
		{"tcp needs secret", map[string]string{"SCOLL_RANK": "0", "SCOLL_SIZE": "2", "SCOLL_RENDEZVOUS": "tcp:127.0.0.1:1"}, "SCOLL_SECRET"},
		{"short secret", map[string]string{"SCOLL_RANK": "0", "SCOLL_SIZE": "2", "SCOLL_RENDEZVOUS": "file:" + t.TempDir(), "SCOLL_SECRET": "short"}, "at least 16"},
		{"bad eager sends", map[string]string{"SCOLL_RANK": "0", "SCOLL_SIZE": "1", "SCOLL_EAGER_SENDS": "yes"}, "SCOLL_EAGER_SENDS"},
		{"bad rendezvous", map[string]string{"SCOLL_RANK": "0", "SCOLL_SIZE": "2", "SCOLL_RENDEZVOUS": "udp:x", "SCOLL_SECRET": strings.Repeat("s", 16)}, "want tcp:host:port or file:/dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := scoll.Init(context.Background(), scoll.WithConnectTimeout(time.Second))
			if !errors.Is(err, scoll.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalidArgument mentioning %q", err, tc.want)
			}
		})
	}
	// The sources in order: SCOLL_* wins over Open MPI's.
	t.Run("precedence", func(t *testing.T) {
		clear(t)
		t.Setenv("SCOLL_RANK", "0")
		t.Setenv("SCOLL_SIZE", "1")
		t.Setenv("OMPI_COMM_WORLD_RANK", "3")
		t.Setenv("OMPI_COMM_WORLD_SIZE", "8")
		c, err := scoll.Init(context.Background())
		if err != nil || c.Size() != 1 {
			t.Fatalf("%v", err)
		}
		c.Close()
	})
	// Slurm with a job id meets in a directory named after the job; with a
	// lone rank of two the rendezvous times out with ErrPeerFailed.
	t.Run("slurm default rendezvous", func(t *testing.T) {
		clear(t)
		t.Setenv("TMPDIR", t.TempDir())
		t.Setenv("SLURM_PROCID", "1")
		t.Setenv("SLURM_NTASKS", "2")
		t.Setenv("SLURM_JOB_ID", "77")
		t.Setenv("SLURM_STEP_ID", "0")
		_, err := scoll.Init(context.Background(), scoll.WithConnectTimeout(300*time.Millisecond))
		if !errors.Is(err, scoll.ErrPeerFailed) || !strings.Contains(err.Error(), "scoll-77.0") {
			t.Fatalf("got %v", err)
		}
	})
}
