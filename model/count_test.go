package model_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// gen returns the generator of a registered algorithm for a call of count
// elements of 4 bytes on size ranks (commutative operator, root 0), with
// bounds declared and, for barriers, empty messages kept.
func gen(t testing.TB, coll schedule.Collective, name string, size, count int) schedule.Generator {
	t.Helper()
	in, ok := algorithms.Lookup(coll, name)
	if !ok {
		t.Fatalf("no algorithm %s/%s", coll, name)
	}
	ap := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: count}, Commutative: true, ElemSize: 4}
	if err := in.Check(&ap); err != nil {
		t.Fatal(err)
	}
	g := in.Generator(ap)
	return func(b *schedule.Builder) {
		b.SetBounds(ap.BufLens(b.Rank()))
		if coll == schedule.Barrier {
			b.KeepEmpty()
		}
		g(b)
	}
}

func count(t testing.TB, coll schedule.Collective, name string, size, count int) model.Counts {
	t.Helper()
	c, err := model.Count(size, 4, gen(t, coll, name, size, count))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// near reports whether got equals want up to rounding.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// TestCountKnownSchedules checks counts of schedules worked out by hand.
func TestCountKnownSchedules(t *testing.T) {
	t.Run("allgather ring P=8", func(t *testing.T) {
		// 7 steps; in each every rank passes one block of 10 floats on.
		c := count(t, schedule.Allgather, "ring", 8, 10)
		if c.Max.Rounds != 7 || c.Max.MsgsSent != 7 || c.Min.MsgsSent != 7 || c.Max.MsgsRecv != 7 || c.Min.MsgsRecv != 7 {
			t.Errorf("per rank: max %+v min %+v, want 7 rounds, 7 messages each way", c.Max, c.Min)
		}
		if c.Max.BytesSent != 7*40 || c.Min.BytesSent != 7*40 || c.Max.BytesRecv != 7*40 || c.Min.BytesRecv != 7*40 {
			t.Errorf("bytes: max %+v min %+v, want %d each way", c.Max, c.Min, 7*40)
		}
		if c.Total.MsgsSent != 56 || c.Total.BytesSent != 56*40 {
			t.Errorf("total %+v, want 56 messages of 40 bytes", c.Total)
		}
		if c.Rounds != 7 || c.CommRounds != 7 || c.CritMsgs != 7 || c.CritBytes != 7*40 || c.CritReduced != 0 {
			t.Errorf("critical path %+v, want 7 rounds of one 40-byte message", c)
		}
	})
	t.Run("allreduce recursive doubling P=8", func(t *testing.T) {
		// lg 8 = 3 exchanges of the whole 16-float vector, each combined on
		// arrival.
		c := count(t, schedule.Allreduce, "recursive-doubling", 8, 16)
		if c.Max.Rounds != 3 || c.Min.Rounds != 3 || c.Max.MsgsSent != 3 || c.Min.MsgsSent != 3 {
			t.Errorf("per rank: max %+v min %+v, want 3 rounds and 3 messages", c.Max, c.Min)
		}
		if c.Max.BytesReduced != 3*64 || c.Min.BytesReduced != 3*64 {
			t.Errorf("reduced: max %d min %d, want %d", c.Max.BytesReduced, c.Min.BytesReduced, 3*64)
		}
		if c.Rounds != 3 || c.CritMsgs != 3 || c.CritBytes != 3*64 || c.CritReduced != 3*64 {
			t.Errorf("critical path %+v, want 3 rounds of 64 bytes sent and reduced", c)
		}
		if c.Total.MsgsSent != 24 {
			t.Errorf("total messages %d, want 24", c.Total.MsgsSent)
		}
	})
	t.Run("bcast binomial P=8", func(t *testing.T) {
		// The root sends 3 messages, 7 in all, in 3 rounds; leaves only receive.
		c := count(t, schedule.Bcast, "binomial", 8, 5)
		if c.Max.MsgsSent != 3 || c.Min.MsgsSent != 0 || c.Total.MsgsSent != 7 || c.Max.MsgsRecv != 1 {
			t.Errorf("messages: max %+v min %+v total %+v", c.Max, c.Min, c.Total)
		}
		if c.Rounds != 3 || c.CritMsgs != 3 || c.CritBytes != 3*20 {
			t.Errorf("critical path %+v, want 3 rounds of one 20-byte message", c)
		}
		// Hoefler–Moor memory: d·lg P descriptors at the root.
		if m := model.Memory(c, model.Params{MemDesc: 32}); m != 96 {
			t.Errorf("memory %g, want 3·32", m)
		}
	})
	t.Run("reduce binomial P=8", func(t *testing.T) {
		// The mirror image: every rank sends once, the root receives 3 times;
		// descriptors are kept for sent messages only.
		c := count(t, schedule.Reduce, "binomial", 8, 5)
		if c.Max.MsgsSent != 1 || c.Max.MsgsRecv != 3 || c.Total.MsgsSent != 7 {
			t.Errorf("messages: max %+v total %+v", c.Max, c.Total)
		}
		if m := model.Memory(c, model.Params{MemDesc: 32}); m != 32 {
			t.Errorf("memory %g, want 32", m)
		}
	})
	t.Run("bcast linear P=6", func(t *testing.T) {
		// One round: the root sends 5 messages.
		c := count(t, schedule.Bcast, "linear", 6, 3)
		if c.Rounds != 1 || c.CritMsgs != 5 || c.CritBytes != 5*12 || c.Max.MsgsSent != 5 {
			t.Errorf("counts %+v, want one round of 5 messages of 12 bytes", c)
		}
		if c.Max.RoundOps != 5 || c.Min.RoundOps != 1 || c.Total.RoundOps != 10 {
			t.Errorf("round operations %d %d %d, want max 5, min 1, total 10", c.Max.RoundOps, c.Min.RoundOps, c.Total.RoundOps)
		}
	})
	t.Run("barrier dissemination P=5", func(t *testing.T) {
		// ⌈lg 5⌉ = 3 rounds of one empty message each way per rank.
		c := count(t, schedule.Barrier, "dissemination", 5, 0)
		if c.Max.Rounds != 3 || c.Min.MsgsSent != 3 || c.Max.MsgsSent != 3 || c.Total.BytesSent != 0 || c.CritMsgs != 3 {
			t.Errorf("counts %+v, want 3 rounds of one empty message", c)
		}
	})
	t.Run("size 1", func(t *testing.T) {
		c := count(t, schedule.Allreduce, "ring", 1, 7)
		if c.Total.MsgsSent != 0 || c.CritMsgs != 0 || c.CommRounds != 0 {
			t.Errorf("one rank sends nothing, got %+v", c)
		}
	})
}

// handSchedule is a two-rank schedule that uses every kind of operation
// (bytes with 8-byte elements: A, B, C are its messages).
func handSchedule(b *schedule.Builder) {
	switch b.Rank() {
	case 0:
		// round 0: send 4 elements (A: 32 B), receive 2 (B: 16 B), copy 2
		b.Send(1, schedule.SendBuf(0, 4))
		b.Recv(1, schedule.RecvBuf(0, 2))
		b.Copy(schedule.RecvBuf(2, 2), schedule.SendBuf(0, 2))
		b.EndRound()
		// round 1: receive 2 and combine on arrival (C: 16 B)
		b.RecvReduce(1, schedule.RecvBuf(0, 2), schedule.RecvBuf(0, 2), false)
		b.EndRound()
	case 1:
		tmp := b.Alloc(3)
		// round 0: receive 4, send 2, reduce 4 (32 B)
		b.Recv(0, schedule.RecvBuf(0, 4))
		b.Send(0, schedule.SendBuf(0, 2))
		b.Reduce(schedule.RecvBuf(0, 4), schedule.SendBuf(0, 4))
		b.EndRound()
		// round 1: send 2
		b.Send(0, tmp.Sub(0, 2))
		b.EndRound()
	}
}

// TestCountHandSchedule counts handSchedule and checks every field and
// evaluation against hand values.
func TestCountHandSchedule(t *testing.T) {
	g := handSchedule
	c, err := model.Count(2, 8, g)
	if err != nil {
		t.Fatal(err)
	}
	// rank 0: sent 1 (32 B), received 2 (16+16 B), reduced 16, copied 16.
	// rank 1: sent 2 (16+16 B), received 1 (32 B), reduced 32, scratch 24.
	// Both ranks have 3 operations in round 0.
	wantTotal := model.RankCounts{Rounds: 4, MsgsSent: 3, MsgsRecv: 3, BytesSent: 64, BytesRecv: 64, BytesReduced: 48, BytesCopied: 16, Scratch: 24, RoundOps: 6}
	wantMax := model.RankCounts{Rounds: 2, MsgsSent: 2, MsgsRecv: 2, BytesSent: 32, BytesRecv: 32, BytesReduced: 32, BytesCopied: 16, Scratch: 24, RoundOps: 3}
	wantMin := model.RankCounts{Rounds: 2, MsgsSent: 1, MsgsRecv: 1, BytesSent: 32, BytesRecv: 32, BytesReduced: 16, BytesCopied: 0, Scratch: 0, RoundOps: 3}
	if c.Total != wantTotal || c.Max != wantMax || c.Min != wantMin {
		t.Errorf("got total %+v max %+v min %+v\nwant total %+v max %+v min %+v", c.Total, c.Max, c.Min, wantTotal, wantMax, wantMin)
	}
	// round 0: each rank 1 message each way, bytes max(32,16) = 32, reduced
	// 32 (rank 1), copied 16 (rank 0); round 1: 1 message of 16 bytes,
	// reduced 16.
	if c.Rounds != 2 || c.CommRounds != 2 || c.CritMsgs != 2 || c.CritBytes != 48 || c.CritReduced != 48 || c.CritCopied != 16 {
		t.Errorf("critical path: rounds %d comm %d msgs %d bytes %d reduced %d copied %d; want 2 2 2 48 48 16",
			c.Rounds, c.CommRounds, c.CritMsgs, c.CritBytes, c.CritReduced, c.CritCopied)
	}
	p := model.Params{Alpha: 1, Beta: 10, Gamma: 100, L: 1000, O: 100, GPerByte: 1, EMsg: 1, EByte: 0.01, PStatic: 2, MemDesc: 32}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		// 2α + (48+16)β + 48γ
		{"AlphaBetaGamma", model.AlphaBetaGamma(c, p), 2 + 640 + 4800},
		// 2 rounds of L + 2o, one message each, 48 bytes
		{"LogGP", model.LogGP(c, p), 2*1200 + 48},
		// 3 messages, 64 bytes, 2 ranks at 2 W for 3 s
		{"Energy", model.Energy(c, p, 3), 3 + 0.64 + 12},
		// rank 1 sends 2 messages
		{"Memory", model.Memory(c, p), 64},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	// The gap matters only when it exceeds the overhead.
	p.G = 150
	if got, want := model.LogGP(c, p), 2*1200.0+48; !near(got, want) {
		t.Errorf("LogGP with one message a round and g > o = %g, want %g", got, want)
	}
}

// TestLogGPGap checks that the gap replaces the overhead between the
// messages of one round when it is larger.
func TestLogGPGap(t *testing.T) {
	c := count(t, schedule.Bcast, "linear", 5, 1) // one round, 4 messages of 4 bytes
	p := model.Params{L: 10, O: 1, G: 3, GPerByte: 0.5}
	// L + 2o + 3 further messages at max(o, g) = 3 + 16 bytes·G
	if got, want := model.LogGP(c, p), 10+2+9+8.0; !near(got, want) {
		t.Errorf("LogGP = %g, want %g", got, want)
	}
}

// TestErrors checks the arguments and schedules Count and CriticalPath
// refuse, with the error each returns (count nil: a case Count does not
// check, as it takes no Params and counts deadlocked rounds as any others).
func TestErrors(t *testing.T) {
	ok := gen(t, schedule.Allreduce, "ring", 4, 8)
	for _, tc := range []struct {
		name            string
		size, elemSize  int
		gen             schedule.Generator
		p               model.Params
		count, critical error
	}{
		{"size 0", 0, 4, ok, model.Params{}, model.ErrArgument, model.ErrArgument},
		{"element size 0", 4, 0, ok, model.Params{}, model.ErrArgument, model.ErrArgument},
		{"nil generator", 4, 4, nil, model.Params{}, model.ErrArgument, model.ErrArgument},
		{"bad params", 4, 4, ok, model.Params{Beta: -1}, nil, model.ErrParams},
		{"builder error", 4, 4, func(b *schedule.Builder) {
			if b.Rank() == 2 {
				b.Failf("broken")
			}
		}, model.Params{}, schedule.ErrBuild, schedule.ErrBuild},
		{"unmatched", 2, 4, func(b *schedule.Builder) {
			if b.Rank() == 0 {
				b.Send(1, schedule.SendBuf(0, 1))
			}
		}, model.Params{}, model.ErrArgument, model.ErrArgument},
		{"deadlock", 2, 4, func(b *schedule.Builder) {
			// both receive first, then send
			b.Recv(1-b.Rank(), schedule.RecvBuf(0, 1))
			b.EndRound()
			b.Send(1-b.Rank(), schedule.SendBuf(0, 1))
		}, model.Params{}, nil, model.ErrArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.count != nil {
				if _, err := model.Count(tc.size, tc.elemSize, tc.gen); !errors.Is(err, tc.count) {
					t.Errorf("Count: err = %v, want %v", err, tc.count)
				}
			}
			if _, err := model.CriticalPath(tc.size, tc.elemSize, tc.gen, tc.p); !errors.Is(err, tc.critical) {
				t.Errorf("CriticalPath: err = %v, want %v", err, tc.critical)
			}
		})
	}
	_, err := model.Count(4, 4, func(b *schedule.Builder) {
		if b.Rank() >= 1 {
			b.Failf("broken")
		}
	})
	if !errors.Is(err, schedule.ErrBuild) || !strings.Contains(err.Error(), "rank 1:") {
		t.Errorf("err = %v, want the first failing rank, 1", err)
	}
}

// exactness says on which sizes a registered cost is reproduced exactly.
type exactness uint8

const (
	inexact exactness = iota // not claimed
	onPow2                   // on powers of two
	always                   // on every size of the sweep
)

// exact lists, as the package documentation does, the algorithms whose
// registered α-β-γ cost is reproduced exactly, on counts the ranks divide:
// by the coefficients Count puts on the round-synchronous critical path
// (counted), and by CriticalPath term by term (critical).
var exact = []struct {
	coll              schedule.Collective
	name              string
	counted, critical exactness
}{
	{schedule.Allgather, "exchange", always, always},
	{schedule.Allreduce, "chain", inexact, always},
	{schedule.Allreduce, "exchange", always, always},
	{schedule.Allreduce, "meet", always, always},
	{schedule.Barrier, "exchange", always, always},
	{schedule.Barrier, "meet", always, always},
	{schedule.Bcast, "chain", always, always},
	{schedule.Bcast, "exchange", always, always},
	{schedule.Bcast, "meet", always, always},
	{schedule.Exscan, "chain", always, always},
	{schedule.Gather, "chain", always, always},
	{schedule.Reduce, "chain", always, always},
	{schedule.Reduce, "exchange", always, always},
	{schedule.Reduce, "meet", always, always},
	{schedule.Scan, "chain", always, always},
	{schedule.Allgather, "bruck", always, always},
	{schedule.Allgather, "linear", always, always},
	{schedule.Allgather, "neighbor-exchange", always, always},
	{schedule.Allgather, "recursive-doubling", always, always},
	{schedule.Allgather, "ring", always, always},
	{schedule.Allreduce, "allgather-reduce", always, always},
	{schedule.Allreduce, "rabenseifner", onPow2, always},
	{schedule.Allreduce, "recursive-doubling", always, always},
	{schedule.Allreduce, "reduce-bcast", always, always},
	{schedule.Allreduce, "ring", always, always},
	{schedule.Alltoall, "bruck", always, always},
	{schedule.Alltoall, "direct", always, always},
	{schedule.Alltoall, "pairwise", always, always},
	{schedule.Barrier, "dissemination", always, always},
	{schedule.Barrier, "recursive-doubling", always, always},
	{schedule.Barrier, "tree", inexact, always},
	{schedule.Bcast, "binomial", always, always},
	{schedule.Bcast, "linear", always, always},
	{schedule.Bcast, "scatter-allgather", inexact, always},
	{schedule.Bcast, "scatter-ring-allgather", onPow2, always},
	{schedule.Gather, "binomial", always, always},
	{schedule.Gather, "linear", always, always},
	{schedule.Reduce, "binomial", always, always},
	{schedule.Reduce, "linear", always, always},
	{schedule.Reduce, "parallel-ring", always, always},
	{schedule.Reduce, "rabenseifner", onPow2, onPow2},
	{schedule.Reduce, "radix-k", always, always},
	{schedule.ReduceScatterBlock, "pairwise", always, always},
	{schedule.ReduceScatterBlock, "recursive-halving", onPow2, onPow2},
	{schedule.ReduceScatterBlock, "reduce-scatter", onPow2, always},
	{schedule.ReduceScatterBlock, "ring", always, always},
	{schedule.Scatter, "binomial", onPow2, inexact},
	{schedule.Scatter, "linear", always, always},
	{schedule.Scan, "recursive-doubling", onPow2, onPow2},
}

// TestCountedMatchesRegisteredCost checks that the round-synchronous
// critical path has exactly the α, β and γ coefficients of the registered
// cost for the algorithms documented as exact, on counts the ranks divide.
func TestCountedMatchesRegisteredCost(t *testing.T) {
	sweepExact(t, false, func(t *testing.T, coll schedule.Collective, name string, P, cnt int, cost algorithms.Cost) {
		c := count(t, coll, name, P, cnt)
		if float64(c.CritMsgs) != cost.Alpha || float64(c.CritBytes) != cost.Beta || float64(c.CritReduced) != cost.Gamma {
			t.Errorf("P=%d count=%d: counted α %d β %d γ %d, registered α %g β %g γ %g",
				P, cnt, c.CritMsgs, c.CritBytes, c.CritReduced, cost.Alpha, cost.Beta, cost.Gamma)
		}
		p := model.Params{Alpha: 3e-6, Beta: 1e-9, Gamma: 5e-10}
		withCopy := cost.Time(p.Alpha, p.Beta, p.Gamma) + p.Beta*(float64(c.CritCopied)-cost.Copy)
		if got := model.AlphaBetaGamma(c, p); !near(got, withCopy) {
			t.Errorf("P=%d count=%d: AlphaBetaGamma = %g, registered time with counted copies %g", P, cnt, got, withCopy)
		}
	})
}

// sweepExact runs check on the registered cost of every algorithm of exact
// that is exact when counted (or, with critical, on the critical path): on
// every size of the sweep, or on its powers of two, for counts n/4 and n
// that every size divides, when the algorithm takes the call.
func sweepExact(t *testing.T, critical bool,
	check func(t *testing.T, coll schedule.Collective, name string, P, cnt int, cost algorithms.Cost)) {
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 32, 64}
	const n = 80640 // 2^8·3^2·5·7: every size above divides n and n/4
	for _, x := range exact {
		e := x.counted
		if critical {
			e = x.critical
		}
		if e == inexact {
			continue
		}
		name := x.coll.String() + "/" + x.name
		if e == onPow2 {
			name += "/pow2"
		}
		t.Run(name, func(t *testing.T) {
			in, ok := algorithms.Lookup(x.coll, x.name)
			if !ok {
				t.Fatalf("no algorithm %s/%s", x.coll, x.name)
			}
			for _, P := range sizes {
				if e == onPow2 && P&(P-1) != 0 {
					continue
				}
				for _, cnt := range []int{n / 4, n} {
					if x.coll == schedule.Barrier {
						cnt = 0
					}
					ap := algorithms.Params{Spec: schedule.Spec{Coll: x.coll, Size: P, Count: cnt}, Commutative: true, ElemSize: 4}
					if in.Check(&ap) != nil {
						continue
					}
					check(t, x.coll, x.name, P, cnt, in.Cost(&ap))
				}
			}
		})
	}
}

// TestCountedPipelineUnderestimates pins down the documented limit of the
// round-synchronous view: a chain pipeline's counted time is below its
// registered (P + S − 2) steps.
func TestCountedPipelineUnderestimates(t *testing.T) {
	c := count(t, schedule.Bcast, "pipeline", 8, 4*16384) // 4 segments of 64 KiB
	if c.CritMsgs != 5 {                                  // S + 1 rounds of the middle ranks
		t.Errorf("counted %d start-ups, want 5 (the registered cost has P+S−2 = 10)", c.CritMsgs)
	}
}
