package jobenv

import (
	"errors"
	"sync"
	"testing"

	"github.com/scoll/scoll/internal/errs"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestRankFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env         func(string) string
		rank, size  int
		found, fail bool
	}{
		{env(), 0, 1, false, false},
		{env(Rank, "2", Size, "4"), 2, 4, true, false},
		{env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "3"), 1, 3, true, false},
		{env("SLURM_PROCID", "0", "SLURM_NTASKS", "2"), 0, 2, true, false},
		{env(Rank, "1", Size, "8", "PMI_RANK", "5", "PMI_SIZE", "6"), 1, 8, true, false}, // scoll's own first
		{env(Rank, "4", Size, "4"), 0, 0, false, true},
		{env(Rank, "x", Size, "4"), 0, 0, false, true},
		{env("PMI_RANK", "0"), 0, 0, false, true},
	} {
		r, n, found, err := RankFromEnv(tc.env)
		if tc.fail {
			if !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("want InvalidArgument, got %d %d %v %v", r, n, found, err)
			}
			continue
		}
		if err != nil || r != tc.rank || n != tc.size || found != tc.found {
			t.Errorf("got %d %d %v %v, want %d %d %v", r, n, found, err, tc.rank, tc.size, tc.found)
		}
	}
}

func TestJobFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  func(string) string
		want string
	}{
		{env(), ""},
		{env(Job, "j1", "PMIX_NAMESPACE", "ns"), "j1"},
		{env("PMIX_NAMESPACE", "ns"), "ns"},
		{env("SLURM_JOB_ID", "42", "SLURM_STEP_ID", "3"), "42.3"},
	} {
		if got := JobFromEnv(tc.env); got != tc.want {
			t.Errorf("JobFromEnv = %q, want %q", got, tc.want)
		}
	}
	if got := Sanitize("a/b c.d-e_f"); got != "a_b_c.d-e_f" {
		t.Errorf("Sanitize = %q", got)
	}
}

// TestSharedSecret: ranks racing to create the secret all read the same
// one, of 64 hex digits.
func TestSharedSecret(t *testing.T) {
	dir := t.TempDir()
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			b, err := SharedSecret(dir)
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for _, b := range got {
		if len(b) != 64 || string(b) != string(got[0]) {
			t.Fatalf("secrets differ or are short: %q", got)
		}
	}
}
