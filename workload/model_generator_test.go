package workload

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

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
