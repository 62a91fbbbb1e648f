package workload

import (
	"errors"
	"slices"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

func TestEvaluateRows(t *testing.T) {
	p, err := model.ParamsByName("infiniband")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		coll  schedule.Collective
		size  int
		bytes int
	}{
		{schedule.Allreduce, 8, 4096},
		{schedule.Allreduce, 6, 4096},
		{schedule.Allreduce, 7, 30}, // not a multiple of 4: 1-byte elements
		{schedule.Bcast, 13, 1 << 17},
		{schedule.Alltoall, 4, 64},
		{schedule.Barrier, 5, 0},
		{schedule.Scan, 9, 100},
		{schedule.Gather, 1, 100},
	} {
		rows, err := Evaluate(tc.coll, tc.size, tc.bytes, p)
		if err != nil {
			t.Fatalf("%s P=%d: %v", tc.coll, tc.size, err)
		}
		es := 4
		if tc.bytes%4 != 0 {
			es = 1
		}
		ap := algorithms.Params{Spec: schedule.Spec{Coll: tc.coll, Size: tc.size, Count: tc.bytes / es}, Commutative: true, ElemSize: es,
			Machine: algorithms.Machine{Alpha: p.Alpha, Beta: p.Beta, Gamma: p.Gamma}}
		if tc.coll == schedule.Barrier {
			ap.Count = 0
		}
		var want []string
		for _, in := range algorithms.List(tc.coll) {
			if in.Check(&ap) == nil {
				want = append(want, in.Name)
			}
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Algorithm)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s P=%d: rows %v, want one per applicable algorithm %v", tc.coll, tc.size, got, want)
		}
		for _, r := range rows {
			in, _ := algorithms.Lookup(tc.coll, r.Algorithm)
			c, err := model.Count(tc.size, es, Generator(in, ap))
			if err != nil {
				t.Fatal(err)
			}
			if r.Counts != c || r.Counts.ElemSize != es {
				t.Errorf("%s/%s: counts %+v, want %+v", tc.coll, r.Algorithm, r.Counts, c)
			}
			cp, err := model.CriticalPath(tc.size, es, Generator(in, ap), p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Counted != model.AlphaBetaGamma(c, p) || r.LogGP != model.LogGP(c, p) ||
				c.Total.RoundOps > model.MaxCriticalOps ||
				r.Critical != cp.AlphaBetaGamma || r.CriticalLogGP != cp.LogGP ||
				r.Memory != model.Memory(c, p) || r.Energy != model.Energy(c, p, r.Critical) {
				t.Errorf("%s/%s: row %+v does not match its counts and critical path %+v", tc.coll, r.Algorithm, r, cp)
			}
			if cost := in.Cost(&ap).Time(p.Alpha, p.Beta, p.Gamma); r.Cost != cost {
				t.Errorf("%s/%s: Cost %g, registered %g", tc.coll, r.Algorithm, r.Cost, cost)
			}
			form, e, ok := model.HoeflerMoor(r.Algorithm, Call(&ap), p)
			if r.Form != form || (ok && r.FormTime != e.Time) || (!ok && r.FormTime != 0) {
				t.Errorf("%s/%s: form %q %g, want %q %g", tc.coll, r.Algorithm, r.Form, r.FormTime, form, e.Time)
			}
			if tc.size > 1 && tc.coll != schedule.Barrier && (r.Counted <= 0 || r.Critical <= 0 || r.Energy <= 0 || r.Memory <= 0) {
				t.Errorf("%s/%s: empty row %+v", tc.coll, r.Algorithm, r)
			}
		}
	}
}

// TestEvaluateFig5 checks the shape of Hoefler and Moor's Fig. 5 on their
// InfiniBand parameters (allreduce of 8 bytes): the butterfly
// (recursive doubling) is fastest, two binomial trees (reduce-bcast) need
// less dynamic energy, and the butterfly's memory grows with lg P.
func TestEvaluateFig5(t *testing.T) {
	p, _ := model.ParamsByName("infiniband")
	for _, P := range []int{16, 64} {
		rows, err := Evaluate(schedule.Allreduce, P, 8, p)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]model.Row{}
		for _, r := range rows {
			by[r.Algorithm] = r
		}
		bf, bt := by["recursive-doubling"], by["reduce-bcast"]
		if bf.Form != "BF" || bt.Form != "2xBT" {
			t.Fatalf("forms %q, %q", bf.Form, bt.Form)
		}
		if !(bf.LogGP < bt.LogGP) || !near(bf.LogGP, bf.FormTime) || !near(bt.LogGP, bt.FormTime) {
			t.Errorf("P=%d: butterfly %g (form %g), trees %g (form %g)", P, bf.LogGP, bf.FormTime, bt.LogGP, bt.FormTime)
		}
		dyn := func(r model.Row) float64 { return model.Energy(r.Counts, p, 0) }
		if !(dyn(bt) < dyn(bf)) {
			t.Errorf("P=%d: dynamic energy trees %g, butterfly %g", P, dyn(bt), dyn(bf))
		}
		lg := 0
		for q := 1; q < P; q *= 2 {
			lg++
		}
		if bf.Memory != float64(lg)*p.MemDesc {
			t.Errorf("P=%d: butterfly memory %g, want d·lg P = %g", P, bf.Memory, float64(lg)*p.MemDesc)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	p, _ := model.ParamsByName("infiniband")
	for _, tc := range []struct {
		name  string
		coll  schedule.Collective
		size  int
		bytes int
		p     model.Params
		want  error
	}{
		{"vector", schedule.Allgatherv, 4, 8, p, model.ErrArgument},
		{"unknown collective", schedule.NumCollectives, 4, 8, p, model.ErrArgument},
		{"size 0", schedule.Allreduce, 0, 8, p, model.ErrArgument},
		{"negative bytes", schedule.Allreduce, 4, -4, p, model.ErrArgument},
		{"bad params", schedule.Allreduce, 4, 8, model.Params{Alpha: -1}, model.ErrParams},
	} {
		if _, err := Evaluate(tc.coll, tc.size, tc.bytes, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestEvaluateGenerator: a registry algorithm's generator evaluates to
// Evaluate's row without the closed forms, and a schedule that needs
// eager sends has no critical path but is counted.
func TestEvaluateGenerator(t *testing.T) {
	p, _ := model.ParamsByName("infiniband")
	rows, err := Evaluate(schedule.Allreduce, 16, 1024, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range rows {
		in, _ := algorithms.Lookup(schedule.Allreduce, want.Algorithm)
		ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 16, Count: 256}, Commutative: true, ElemSize: 4}
		got, err := model.EvaluateGenerator(want.Algorithm, 16, 4, Generator(in, ap), p)
		if err != nil {
			t.Fatal(err)
		}
		want.Cost, want.Form, want.FormTime = 0, "", 0
		if got != want {
			t.Errorf("%s: got %+v\nwant %+v", want.Algorithm, got, want)
		}
	}
	// Both ranks send, then receive: fine with eager sends, a deadlock
	// when a send waits for its receive.
	eager := func(b *schedule.Builder) {
		peer := 1 - b.Rank()
		b.Send(peer, schedule.SendBuf(0, 8))
		b.EndRound()
		b.Recv(peer, schedule.RecvBuf(0, 8))
	}
	r, err := model.EvaluateGenerator("eager", 2, 1, eager, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Critical != 0 || r.CriticalLogGP != 0 || r.Counted <= 0 || r.Counts.Total.MsgsSent != 2 || r.Energy <= 0 {
		t.Errorf("eager: %+v", r)
	}
	if _, err := model.EvaluateGenerator("bad", 0, 1, eager, p); err == nil {
		t.Error("no error for 0 ranks")
	}
}

// TestInProcessPreset: the model's "inprocess" preset is the machine the
// default algorithm selector assumes (algorithms.InProcess); model cannot
// refer to it (it depends on schedules, not algorithms), so this keeps the
// two equal.
func TestInProcessPreset(t *testing.T) {
	p, err := model.ParamsByName("inprocess")
	if err != nil {
		t.Fatal(err)
	}
	m := algorithms.InProcess
	if p.Alpha != m.Alpha || p.Beta != m.Beta || p.Gamma != m.Gamma || p.L != m.Alpha || p.GPerByte != m.Beta {
		t.Errorf("inprocess preset %+v, selector machine %+v", p, m)
	}
}
