//go:build mpi

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/mpi"
	"github.com/scoll/scoll/tuning"
)

func init() { tuneMPI = runTuneMPI }

// runTuneMPI initialises MPI on this goroutine's thread (every MPI call of
// the measurement happens there, as under the drop-in), measures and
// finalizes.
func runTuneMPI(ctx context.Context, cfg *tuneConfig) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t, err := mpi.InitCaller()
	if err != nil {
		return err
	}
	c := scoll.NewComm(t)
	err = tune(ctx, c, t, cfg)
	c.Close()
	if ferr := mpi.Finalize(t); err == nil {
		err = ferr
	}
	return err
}

// tuneCase is one collective at one size: its buffers and how to run it
// natively and with a scoll algorithm.
type tuneCase struct {
	send, recv []byte
	native     func() error
	scoll      func(alg string) error
}

// newTuneCase makes the buffers of op at message size bytes (package
// tuning's sizes) on c.
func newTuneCase(ctx context.Context, c *scoll.Comm, t *mpi.Caller, op string, bytes int) *tuneCase {
	p := c.Size()
	tc := &tuneCase{}
	switch op {
	case "allreduce":
		n := max(bytes/8, 1)
		tc.send, tc.recv = make([]byte, 8*n), make([]byte, 8*n)
		tc.native = func() error { return t.Native(mpi.NativeAllreduce, tc.send, tc.recv, n, 0) }
		tc.scoll = func(alg string) error {
			return scoll.Allreduce(ctx, c, asFloat64s(tc.send), asFloat64s(tc.recv), scoll.Sum, scoll.WithAlgorithm(alg))
		}
	case "bcast":
		tc.recv = make([]byte, bytes)
		tc.native = func() error { return t.Native(mpi.NativeBcast, nil, tc.recv, bytes, 0) }
		tc.scoll = func(alg string) error { return scoll.Bcast(ctx, c, tc.recv, 0, scoll.WithAlgorithm(alg)) }
	case "allgather":
		tc.send, tc.recv = make([]byte, bytes), make([]byte, bytes*p)
		tc.native = func() error { return t.Native(mpi.NativeAllgather, tc.send, tc.recv, bytes, 0) }
		tc.scoll = func(alg string) error { return scoll.Allgather(ctx, c, tc.send, tc.recv, scoll.WithAlgorithm(alg)) }
	case "reducescatter": // bytes: the whole send buffer
		n := max(bytes/8/p, 1)
		tc.send, tc.recv = make([]byte, 8*n*p), make([]byte, 8*n)
		tc.native = func() error { return t.Native(mpi.NativeReduceScatterBlock, tc.send, tc.recv, n, 0) }
		tc.scoll = func(alg string) error {
			return scoll.ReduceScatterBlock(ctx, c, asFloat64s(tc.send), asFloat64s(tc.recv), scoll.Sum, scoll.WithAlgorithm(alg))
		}
	case "alltoall":
		tc.send, tc.recv = make([]byte, bytes*p), make([]byte, bytes*p)
		tc.native = func() error { return t.Native(mpi.NativeAlltoall, tc.send, tc.recv, bytes, 0) }
		tc.scoll = func(alg string) error { return scoll.Alltoall(ctx, c, tc.send, tc.recv, scoll.WithAlgorithm(alg)) }
	}
	return tc
}

// asFloat64s views b (from make: 8-byte aligned) as float64s.
func asFloat64s(b []byte) []float64 { return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8) }

// time runs one variant (alg "native": the MPI library's) back to back
// for about budget and returns rank 0's time per call in seconds: rank 0
// decides the number of calls from a first one and tells the others.
func (tc *tuneCase) time(c *scoll.Comm, t *mpi.Caller, alg string, budget time.Duration) (float64, error) {
	run := func() error {
		if alg == tuning.Native {
			return tc.native()
		}
		return tc.scoll(alg)
	}
	t.Native(mpi.NativeBarrier, nil, nil, 0, 0)
	start := mpi.Wtime()
	if err := run(); err != nil {
		return 0, err
	}
	iters := make([]byte, 8)
	binary.LittleEndian.PutUint64(iters, uint64(min(max(budget.Seconds()/max(mpi.Wtime()-start, 1e-9), 1), 1e6)))
	if err := t.Native(mpi.NativeBcast, nil, iters, 8, 0); err != nil {
		return 0, err
	}
	n := int(binary.LittleEndian.Uint64(iters))
	t.Native(mpi.NativeBarrier, nil, nil, 0, 0)
	start = mpi.Wtime()
	for range n {
		if err := run(); err != nil {
			return 0, err
		}
	}
	return (mpi.Wtime() - start) / float64(n), nil
}

// tune measures every collective of cfg at every size, writes the rules
// (rank 0) and prints the table (rank 0).
func tune(ctx context.Context, c *scoll.Comm, t *mpi.Caller, cfg *tuneConfig) error {
	p, me := c.Size(), c.Rank()
	file := &tuning.File{Version: tuning.Version,
		Source: fmt.Sprintf("scoll tune --mpi on %d ranks, %s", p, time.Now().UTC().Format("2006-01-02"))}
	tw := tabwriter.NewWriter(cfg.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if me == 0 {
		fmt.Fprintln(tw, "collective\tranks\tbytes\tnative_us\tbest\tbest_us\tbest/native\t")
	}
	for _, op := range cfg.ops {
		coll, _ := schedule.ParseCollective(op)
		variants := []string{tuning.Native}
		for _, a := range scoll.Algorithms(op) {
			variants = append(variants, a.Name)
		}
		for _, bytes := range cfg.sizes {
			tc := newTuneCase(ctx, c, t, op, bytes)
			times := make([][]float64, len(variants))
			failed := make([]bool, len(variants))
			for range cfg.reps {
				for i, v := range variants {
					if failed[i] {
						continue
					}
					d, err := tc.time(c, t, v, cfg.budget)
					if err != nil { // an algorithm that cannot run the call fails alike on every rank
						failed[i] = true
						continue
					}
					times[i] = append(times[i], d)
				}
			}
			best, bestT := -1, math.Inf(1)
			for i, ts := range times {
				if failed[i] || len(ts) == 0 {
					continue
				}
				slices.Sort(ts)
				if m := ts[len(ts)/2]; m < bestT {
					best, bestT = i, m
				}
			}
			if best < 0 {
				return fmt.Errorf("%s of %d bytes: nothing ran, not even the MPI library's", op, bytes)
			}
			if best != 0 && !failed[0] && bestT > times[0][len(times[0])/2]*(1-cfg.margin) {
				best, bestT = 0, times[0][len(times[0])/2] // not faster by the margin: the MPI library's
			}
			file.Add(coll, p, bytes, variants[best])
			if me == 0 && !failed[0] {
				nat := times[0][len(times[0])/2]
				fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%s\t%.2f\t%.2f\t\n", op, p, bytes, nat*1e6, variants[best], bestT*1e6, bestT/nat)
			}
		}
	}
	if me != 0 {
		return nil
	}
	tw.Flush()
	if err := file.Write(cfg.out); err != nil {
		return fmt.Errorf("--tune-out: %w", err)
	}
	fmt.Fprintf(cfg.stdout, "wrote %d rules to %s (use it with SCOLL_TUNING=%s)\n", len(file.Rules), cfg.out, cfg.out)
	return nil
}
