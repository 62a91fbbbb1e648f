package bench

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// The case: allgather-reduce keeps every rank's vector in scratch
// (P·n per rank), 16 GiB at 64 ranks of 4 MiB, far more than its buffers
// (512 MiB). Run refuses it with the estimate, before allocating.
func TestMaxMemoryCountsScratch(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := Run(context.Background(), Config{
		Op:    "allreduce",
		OnRow: func(Result) { t.Error("ran") }, Common: Common{NP: 64, Algorithms: []string{"allgather-reduce"}, Sizes: []int{4 << 20}, Reps: 1},
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 {
		t.Fatalf("skipped %v", rep.Skipped)
	}
	why := rep.Skipped[0].Reason
	if f := rep.Skipped[0].Memory; f == nil || f.Scratch != 16<<30 || f.Partial {
		t.Errorf("estimate %+v", f)
	}
	for _, want := range []string{"estimated memory 16.5 GiB", "buffers 512 MiB", "64 ranks × 64 KiB", "scratch 16 GiB", "exceeds the limit of 1G"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q lacks %q", why, want)
		}
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Errorf("refusing allocated %d MiB", d>>20)
	}
}

// The same algorithm at a size whose scratch fits runs; one whose scratch
// does not is refused although its buffers fit. Ring keeps no P·n
// scratch and runs under the same limit.
func TestMaxMemoryUnderLimitRuns(t *testing.T) {
	cfg := Config{Op: "allreduce", Common: Common{NP: 8, Algorithms: []string{"allgather-reduce", "ring"}, Sizes: []int{1 << 10, 64 << 10}, Reps: 1, MaxMemory: 3 << 20}}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, r := range rep.Rows {
		ran = append(ran, r.Algorithm+" "+FormatSize(r.Bytes))
	}
	if got := strings.Join(ran, ", "); got != "allgather-reduce 1K, ring 1K, ring 64K" {
		t.Errorf("ran %s (skipped %v)", got, rep.Skipped)
	}
	// 8 ranks × 64 KiB buffers ×2 = 1 MiB, ranks 512 KiB: 1.5 MiB; the
	// scratch, 8 × 8 × 64 KiB = 4 MiB, passes 3 MiB.
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "scratch 4") {
		t.Errorf("skipped %v", rep.Skipped)
	}
}

// At 100,000 ranks the ranks alone pass the default limit: the refusal
// says so at once, building no schedule and starting no rank.
func TestMaxMemoryCountsRanks(t *testing.T) {
	rep, err := Run(context.Background(), Config{Op: "allreduce", Common: Common{NP: 100000, Algorithms: []string{"ring"}, Sizes: []int{8}, Reps: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 0 || len(rep.Skipped) != 1 {
		t.Fatalf("results %v, skipped %v", rep.Rows, rep.Skipped)
	}
	want := "estimated memory at least 6.1 GiB (buffers 1.5 MiB, 100000 ranks × 64 KiB, schedules not counted) over 100000 ranks exceeds the limit of 1G"
	if got := rep.Skipped[0].Reason; got != want {
		t.Errorf("reason %q\nwant %q", got, want)
	}
}

// Footprints of schedules: a ring's plan grows with its rounds (2(P−1)
// per rank), recursive doubling's with lg P; both are counted for every
// rank.
func TestFootprintSchedules(t *testing.T) {
	c, err := Config{Op: "allreduce", Common: Common{NP: 64, MaxMemory: -1}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := c.shape(64 << 10)
	ring, rd := c.footprint("ring", sh), c.footprint("recursive-doubling", sh)
	if ring.Partial || rd.Partial || rd.Schedules <= 0 || ring.Schedules <= 4*rd.Schedules {
		t.Errorf("ring %+v, recursive doubling %+v: want ring's schedules several times larger", ring, rd)
	}
	if auto := c.footprint(Auto, sh); auto.Partial || auto.Schedules <= 0 {
		t.Errorf("auto %+v", auto)
	}
	// An algorithm that cannot run the configuration is not counted
	// (running it says why).
	c, _ = Config{Op: "allgather", Common: Common{NP: 6, MaxMemory: -1}}.normalize()
	sh, _ = c.shape(64)
	if f := c.footprint("recursive-doubling", sh); !f.Partial || f.Schedules != 0 {
		t.Errorf("recursive-doubling allgather on 6 ranks: %+v", f)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 6 << 30: "6 GiB", 1<<40 + 1<<39: "1.5 TiB"} {
		if got := HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
