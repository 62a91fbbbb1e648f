package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// snakeCase is the one convention of JSON keys (docs/json.md).
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// jsonKeys returns every object key in the JSON values of text (one value
// or JSON lines), at any depth.
func jsonKeys(t *testing.T, text string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys[k] = true
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	n := 0
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not JSON: %v\n%.400s", err, text)
		}
		walk(v)
		n++
	}
	if n == 0 {
		t.Fatalf("no JSON value")
	}
	return keys
}

// TestJSONKeysSnakeCase runs every command that writes JSON, with tiny
// arguments, and fails on a key that is not snake_case.
func TestJSONKeysSnakeCase(t *testing.T) {
	trace := recordRing(t, 64)
	params := filepath.Join(t.TempDir(), "params.json")
	for _, c := range []struct {
		args []string
		// want are keys the output must have (the ones most likely to be
		// renamed by mistake).
		want []string
	}{
		{[]string{"algorithms", "--format", "json"}, []string{"collective", "name", "power_of_two", "path"}},
		{[]string{"sim", "--topology", "torus:2x2x2", "--op", "allgather", "--algorithm", "ring", "--sizes", "64", "--stages", "--format", "json", "--progress", "never"},
			[]string{"time_s", "alpha_count", "stages", "max_distance", "max_bytes", "latency_s"}},
		{[]string{"sim", "--topology", "torus:2x2x2", "--op", "bcast", "--algorithm", "binomial", "--sizes", "64", "--model", "flow", "--format", "json", "--progress", "never"},
			[]string{"time_s", "mbps", "round_opt_s", "notes_bound_s"}},
		{[]string{"sim", "--topology", "mesh:4x4", "--op", "allgather", "--algorithm", "ring", "--sizes", "64", "--embedding", "--format", "json"},
			[]string{"mean_dilation", "stage_congestion"}},
		{[]string{"sim", "--topology", "torus:2x2x2", "--trace", trace, "--format", "json"}, []string{"time_s"}},
		{[]string{"model", "--op", "bcast", "--np", "8", "--sizes", "8", "--round-sync", "--format", "json"},
			[]string{"critical_s", "loggp_s", "counted_s", "loggp_sync_s", "energy_j", "memory_bytes", "arrival_s", "round_opt_s"}},
		{[]string{"model", "--trace", trace, "--round-sync", "--format", "json"}, []string{"critical_s", "loggp_s", "counted_s", "loggp_sync_s"}},
		{[]string{"schedule", "--op", "allreduce", "--algorithm", "rabenseifner", "--np", "4", "--size", "16", "--format", "json"}, []string{"rounds", "src_left", "space"}},
		{[]string{"clairvoyant", "--np", "4", "--segments", "2", "--format", "json"}, []string{"segments", "ranks"}},
		{[]string{"split", "--np", "4", "--algorithm", "cheng", "--reps", "1", "--format", "json", "--progress", "off"}, []string{"median_ms", "phases"}},
		{[]string{"bench", "--np", "2", "--algorithm", "ring", "--sizes", "8", "--iters", "2", "--format", "json", "--progress", "never"}, []string{"avg_us"}},
		{[]string{"calibrate", "--time", "20ms", "--output", params}, nil},
	} {
		out, stderr, err := run(t, c.args...)
		if err != nil {
			t.Errorf("%v: %v\n%s", c.args, err, stderr)
			continue
		}
		if c.args[0] == "calibrate" {
			b, err := os.ReadFile(params)
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		keys := jsonKeys(t, out)
		var bad []string
		for k := range keys {
			if !snakeCase.MatchString(k) {
				bad = append(bad, k)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("scoll %s: keys not snake_case: %v", strings.Join(c.args, " "), bad)
		}
		for _, k := range c.want {
			if !keys[k] {
				t.Errorf("scoll %s: no key %q", strings.Join(c.args, " "), k)
			}
		}
	}
}
