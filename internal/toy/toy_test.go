package toy_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/algtable"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/registrytest"
	"github.com/scoll/scoll/schedule"
)

// The toy algorithm, as the checklist adds one: a file with its builder,
// its cost and its knob (algorithms/<collective>_<family>.go), and an
// option (scoll.WithKnob here; a typed With<Knob> in options.go for a real
// one). Nothing else names the knob: the plan key, the signature, the
// environment override, the workloads and the command line's flags derive
// from its declaration.

// toyRounds is the toy knob: over how many rounds rank 0 takes the inputs.
var toyRounds = algorithms.DefineKnob(algorithms.Knob{Name: "toy-rounds",
	Doc: "rounds over which the toy allreduce's rank 0 takes the inputs (default 1)", Min: 1})

// toy is an allreduce: rank 0 takes every input, spread over toy-rounds
// rounds (rank q in round (q−1) mod R), folds them in rank order and sends
// every rank the result.
func toy(b *schedule.Builder, p *algorithms.Params) {
	n, P, r := p.Count, p.Size, p.Rank
	in, out := p.Input(), schedule.RecvBuf(0, n)
	R := max(min(p.Knob(toyRounds), P-1), 1)
	if r != 0 {
		b.Send(0, in)
		b.EndRound()
		b.Recv(0, out)
		b.EndRound()
		return
	}
	slots := b.Alloc(max(P-1, 0) * n)
	for i := range R {
		for q := 1; q < P; q++ {
			if (q-1)%R == i {
				b.Recv(q, slots.Sub((q-1)*n, n))
			}
		}
		if i == R-1 {
			if in != out {
				b.Copy(out, in)
			}
			for q := 1; q < P; q++ {
				b.Reduce(out, slots.Sub((q-1)*n, n))
			}
		}
		b.EndRound()
	}
	for q := 1; q < P; q++ {
		b.Send(q, out)
	}
	b.EndRound()
}

func toyCost(p *algorithms.Params) algorithms.Cost {
	k, nb := float64(p.Size-1), float64(p.Count*max(p.ElemSize, 1))
	return algorithms.Cost{Alpha: 2 * k, Beta: 2 * k * nb, Gamma: k * nb}
}

func init() {
	algorithms.Register(algorithms.Info{Coll: schedule.Allreduce, Name: "toy", Build: toy, Cost: toyCost, Explicit: true,
		Doc: "toy: rank 0 takes the inputs over toy-rounds rounds and sends the result", Source: "scoll's architecture test"})
}

func isToy(in *algorithms.Info) bool { return in.Name == "toy" }

// TestToyRegistry: the registry and the public API list the toy, and the
// verifier proves its schedules for every rank count and knob value.
func TestToyRegistry(t *testing.T) {
	if _, ok := algorithms.Lookup(schedule.Allreduce, "toy"); !ok {
		t.Fatal("the toy is not registered")
	}
	found := false
	for _, a := range scoll.Algorithms("allreduce") {
		found = found || a.Name == "toy" && a.Path == "messages"
	}
	if !found {
		t.Error("scoll.Algorithms does not list the toy")
	}
	found = false
	for _, k := range scoll.Knobs() {
		found = found || k.Name == "toy-rounds" && k.Env == "SCOLL_TOY_ROUNDS_"
	}
	if !found {
		t.Error("scoll.Knobs does not list toy-rounds with its environment variable")
	}
	in, _ := algorithms.Lookup(schedule.Allreduce, "toy")
	for P := 1; P <= 9; P++ {
		for _, R := range []int{0, 1, 2, 5} {
			spec := schedule.Spec{Coll: schedule.Allreduce, Size: P, Count: 3}
			p := algorithms.Params{Spec: spec, Commutative: true, ElemSize: 4}
			p.Knobs[toyRounds.Index()] = R
			if err := schedule.Verify(&spec, in.Generator(p), schedule.Options{}); err != nil {
				t.Errorf("P=%d rounds=%d: %v", P, R, err)
			}
		}
	}
}

// TestToyGolden: the toy's golden schedules (testdata; -update writes
// them, as the checklist's step for the registry's goldens does).
func TestToyGolden(t *testing.T) {
	registrytest.GoldenOf(t, "testdata", func(t *testing.T, in *algorithms.Info, ap algorithms.Params) []byte {
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "# %s %s, P=%d, count=%d\n", in.Coll, in.Name, ap.Size, ap.Count)
		for r := range ap.Size {
			ap.Rank = r
			s, err := in.Schedule(&ap)
			if err != nil {
				t.Fatal(err)
			}
			if err := schedule.WriteText(&buf, s); err != nil {
				t.Fatal(err)
			}
		}
		return buf.Bytes()
	}, isToy)
}

// TestToyTables: docs/algorithms.md's table and scoll algorithms show the toy.
func TestToyTables(t *testing.T) {
	md := algtable.Markdown(algtable.All())
	if !strings.Contains(md, "| allreduce | `toy` | messages | - | toy: rank 0 takes the inputs") {
		t.Error("the markdown table has no toy row")
	}
	var text bytes.Buffer
	if err := algtable.Write(&text, algtable.All()); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(strings.Split(text.String(), "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 2 && f[0] == "allreduce" && f[1] == "toy" && f[2] == "messages"
	}) {
		t.Errorf("scoll algorithms lists no toy:\n%s", text.String())
	}
}

// TestToyEnvironment: SCOLL_TOY_ROUNDS_ALLREDUCE sets the knob of the
// calls that do not, in the plan (its rounds) and in a run (which the
// environment's algorithm makes the toy's, with a correct result).
func TestToyEnvironment(t *testing.T) {
	env := []string{"SCOLL_TOY_ROUNDS_ALLREDUCE=3"}
	ov, err := plan.OverridesFromEnv(env, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	call := &plan.Call{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 5, Count: 2}, ElemSize: 8, Commutative: true, OpID: 1}
	for _, tc := range []struct {
		o    plan.Options
		over *plan.Overrides
		want int // rank 0's rounds
	}{
		{plan.Options{Alg: "toy"}, nil, 2},
		{plan.Options{Alg: "toy"}, ov, 4},
		{plan.Options{Alg: "toy", Knobs: knob(2)}, ov, 3}, // the call's own wins
	} {
		e, err := plan.New(call, &tc.o, &plan.Defaults{Machine: algorithms.InProcess, Over: tc.over})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(e.Plan.Sched.Rounds); got != tc.want {
			t.Errorf("%+v with overrides %v: rank 0 has %d rounds, want %d", tc.o.Knobs, tc.over != nil, got, tc.want)
		}
	}
	_, err = plan.OverridesFromEnv([]string{"SCOLL_TOY_ROUNDS_ALLREDUCE=0"}, func(string) string { return "" })
	if err == nil {
		t.Error("SCOLL_TOY_ROUNDS_ALLREDUCE=0 accepted")
	}

	t.Setenv("SCOLL_TOY_ROUNDS_ALLREDUCE", "3")
	t.Setenv("SCOLL_ALGORITHM_ALLREDUCE", "toy")
	var mu sync.Mutex
	var ran []string
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: func(p []byte) { ran = append(ran, string(p)) }}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	err = scoll.Run(context.Background(), 5, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int64, 2)
		if err := scoll.Allreduce(ctx, c, []int64{int64(c.Rank()), 1}, recv, scoll.Sum); err != nil {
			return err
		}
		if recv[0] != 10 || recv[1] != 5 {
			return fmt.Errorf("rank %d: %v, want [10 5]", c.Rank(), recv)
		}
		return nil
	}, scoll.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) == 0 || !strings.Contains(ran[0], "algorithm=toy") {
		t.Errorf("the environment's algorithm did not run: %q", ran)
	}
}

// knob returns the toy knob set to v.
func knob(v int) (kv algorithms.KnobValues) {
	kv[toyRounds.Index()] = v
	return kv
}

// lockedWriter hands every write to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  func([]byte)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w(p)
	return len(p), nil
}
