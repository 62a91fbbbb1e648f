package workload

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// TestLogGOPSimAgrees exports schedules in GOAL (schedule.WriteGOAL, calc
// in γ-scaled nanoseconds) and runs them through LogGOPSim, whose time must
// be the critical-path LogGP time of the model (model.CriticalPath) on the
// same parameters. G is 0 because the two count the bytes of a message
// differently (LogGOPSim charges (s−1)·G, the model s·G, as Hoefler and
// Moor do). The pipelined bcast is left out: LogGOPSim charges a rank's
// send and receive overheads on one CPU, one after the other, where the
// model has a send port and a receive port.
//
// The test needs LogGOPSim (github.com/spcl/LogGOPSim, src/LogGOPSim, built
// with make): set SCOLL_LOGGOPSIM to the directory holding its LogGOPSim
// and txt2bin binaries.
func TestLogGOPSimAgrees(t *testing.T) {
	dir := os.Getenv("SCOLL_LOGGOPSIM")
	if dir == "" {
		t.Skip("SCOLL_LOGGOPSIM is not set")
	}
	const L, o, g = 2500, 1500, 1000 // ns
	p := model.Params{L: L * 1e-9, O: o * 1e-9, G: g * 1e-9, Gamma: 2e-9}
	for _, tc := range []struct {
		coll  schedule.Collective
		name  string
		size  int
		count int // four-byte elements
	}{
		{schedule.Bcast, "binomial", 16, 1 << 14},
		{schedule.Bcast, "linear", 16, 1 << 14},
		{schedule.Bcast, "binary", 16, 1 << 14},
		{schedule.Bcast, "two-tree", 16, 1 << 14},
		{schedule.Allreduce, "ring", 16, 1024},
		{schedule.Allreduce, "recursive-doubling", 16, 1024},
		{schedule.Allreduce, "rabenseifner", 16, 1024},
		{schedule.Allgather, "ring", 16, 256},
		{schedule.Allgather, "bruck", 13, 256},
		{schedule.Barrier, "dissemination", 16, 0},
		{schedule.Barrier, "tree", 16, 0},
		{schedule.Reduce, "binomial", 16, 1024},
		{schedule.Alltoall, "pairwise", 8, 256},
		{schedule.ReduceScatterBlock, "recursive-halving", 16, 256},
	} {
		in, ok := algorithms.Lookup(tc.coll, tc.name)
		if !ok {
			t.Fatalf("no %s/%s", tc.coll, tc.name)
		}
		ap := algorithms.Params{Spec: schedule.Spec{Coll: tc.coll, Size: tc.size, Count: tc.count}, Commutative: true, ElemSize: 4}
		if err := in.Check(&ap); err != nil {
			t.Fatalf("%s/%s: %v", tc.coll, tc.name, err)
		}
		gen := Generator(in, ap)
		cp, err := model.CriticalPath(tc.size, 4, gen, p)
		if err != nil {
			t.Fatal(err)
		}
		var goal bytes.Buffer
		if err := schedule.WriteGOAL(&goal, tc.size, 4, p.Gamma, gen); err != nil {
			t.Fatal(err)
		}
		txt, bin := filepath.Join(t.TempDir(), "s.goal"), filepath.Join(t.TempDir(), "s.bin")
		if err := os.WriteFile(txt, goal.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(filepath.Join(dir, "txt2bin"), "-i", txt, "-o", bin).CombinedOutput(); err != nil {
			t.Fatalf("%s/%s: txt2bin: %v\n%s", tc.coll, tc.name, err, out)
		}
		out, err := exec.Command(filepath.Join(dir, "LogGOPSim"), "-f", bin, "-L", strconv.Itoa(L), "-o", strconv.Itoa(o),
			"-g", strconv.Itoa(g), "-G", "0", "-S", "1000000000").CombinedOutput()
		if err != nil {
			t.Fatalf("%s/%s: LogGOPSim: %v\n%s", tc.coll, tc.name, err, out)
		}
		last := 0.0 // ns
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "Host" {
				v, _ := strconv.ParseFloat(f[2], 64)
				last = max(last, v)
			}
		}
		if got := cp.LogGP * 1e9; last == 0 || math.Abs(got-last) > 1e-6*last {
			t.Errorf("%s/%s on %d ranks: LogGOPSim %g ns, model's critical-path LogGP %g ns", tc.coll, tc.name, tc.size, last, got)
		}
	}
}
