package main

import (
	"strings"
	"testing"
)

// scoll tune checks its flags before it needs MPI, and without the mpi
// build tag says how to build it.
func TestTuneFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tune"}, "give --mpi"},
		{[]string{"tune", "--mpi", "--ops", "allredcue"}, `did you mean "allreduce"`},
		{[]string{"tune", "--mpi", "--ops", "scan"}, `unknown collective "scan"`},
		{[]string{"tune", "--mpi", "--sizes", "8..1Q"}, "--sizes"},
		{[]string{"tune", "--mpi", "--reps", "0"}, "--reps 0"},
		{[]string{"tune", "--mpi", "--time", "0s"}, "--time"},
		{[]string{"tune", "--mpi", "--margin", "1"}, "--margin 1"},
		{[]string{"tune", "--mpi", "--tune-out", t.TempDir()}, "is a directory"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scoll %s: %v, want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if tuneMPI == nil {
		_, _, err := run(t, "tune", "--mpi", "--tune-out", t.TempDir()+"/rules.json")
		if err == nil || !strings.Contains(err.Error(), "-tags mpi") {
			t.Errorf("scoll tune --mpi without MPI: %v", err)
		}
	}
}
