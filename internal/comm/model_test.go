package comm

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
)

// TestParseParams reads parameters files as scoll calibrate writes them:
// α, β and γ always, the LogP part only when it builds a tree.
func TestParseParams(t *testing.T) {
	for _, tc := range []struct {
		file string
		ok   bool
		m    algorithms.Machine
		lp   *algorithms.LogP
	}{
		{`{"alpha": 2e-6, "beta": 1e-9, "gamma": 5e-10, "latency": 1e-6, "overhead": 3e-7, "gap": 4e-7}`, true,
			algorithms.Machine{Alpha: 2e-6, Beta: 1e-9, Gamma: 5e-10}, &algorithms.LogP{L: 1e-6, O: 3e-7, G: 4e-7}},
		{`{"alpha": 2e-6, "beta": 1e-9, "gamma": 0, "latency": 2e-6}`, true, // o = g = 0: no tree
			algorithms.Machine{Alpha: 2e-6, Beta: 1e-9}, nil},
		{`{"alpha": 2e-6, "beta": 1e-9, "latency": -1, "overhead": 1e-7, "gap": 1e-7}`, true,
			algorithms.Machine{Alpha: 2e-6, Beta: 1e-9}, nil},
		{`{"alpha": 0, "beta": 1e-9}`, false, algorithms.Machine{}, nil},
		{`{"alpha": 1e-6, "beta": -1}`, false, algorithms.Machine{}, nil},
		{`not json`, false, algorithms.Machine{}, nil},
	} {
		lm, ok := parseParams([]byte(tc.file))
		if ok != tc.ok || (ok && (lm.m != tc.m || (lm.lp == nil) != (tc.lp == nil) || (lm.lp != nil && *lm.lp != *tc.lp))) {
			t.Errorf("%s: got %+v %v (LogP %+v), want %+v %v (LogP %+v)", tc.file, lm.m, ok, lm.lp, tc.m, tc.ok, tc.lp)
		}
	}
}
