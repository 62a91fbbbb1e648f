package launch

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parseCPUList parses a list like "0-3,6" as in /proc/self/status.
func parseCPUList(t *testing.T, s string) []int {
	t.Helper()
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil {
			t.Fatalf("CPU list %q: %v", s, err)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func TestLaunchBind(t *testing.T) {
	t.Parallel()
	all := allowedCPUs()
	if len(all) < 2 {
		t.Skipf("%d CPUs allowed: need 2 to bind two ranks apart", len(all))
	}
	for _, noBind := range []bool{false, true} {
		j, stdout, _ := testJob(t, "affinity", 2)
		j.NoBind = noBind
		if code, err := runJob(t, t.Context(), j); code != 0 || err != nil {
			t.Fatalf("Run = %d, %v", code, err)
		}
		want := bindPlan(2, all)
		for r := range 2 {
			got := parseCPUList(t, envOf(stdout.String(), r)["CPUS"])
			if noBind {
				if !slices.Equal(got, all) {
					t.Errorf("unbound rank %d runs on CPUs %v, want all of %v", r, got, all)
				}
			} else if !slices.Equal(got, want[r]) {
				t.Errorf("bound rank %d runs on CPUs %v, want %v", r, got, want[r])
			}
		}
	}
	// The launcher's own threads keep every CPU.
	if got := allowedCPUs(); !slices.Equal(got, all) {
		t.Errorf("launcher thread now allowed %v, was %v", got, all)
	}
}
