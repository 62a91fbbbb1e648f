package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestGrammarValues: the one parser of sizes and rank counts, as the
// flags use it: what it takes and how it refuses the rest.
func TestGrammarValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"64,4K,32K", []int{64, 4096, 32768}},
		{"64..1K", []int{64, 128, 256, 512, 1024}},
		{"8:1K:x4", []int{8, 32, 128, 512, 1024}},
		{"0:32:+16", []int{0, 16, 32}},
		{"1.5K", []int{1536}},
		{"1.5M,1K", []int{1024, 3 << 19}},
	} {
		if got, err := parseSizes("sizes", c.in); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("--sizes %s: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"99999999999999999999", `--sizes "99999999999999999999": too large (at most 1T)`},
		{"12Q", `--sizes "12Q": unknown unit "Q" (valid: B, K, KiB, M`},
		{"1.1K", `--sizes "1.1K": not a whole number`},
		{"64..1Q", `--sizes "1Q": unknown unit "Q"`},
		{"1K..8", `--sizes "1K..8": the start is above the end`},
		{"", `--sizes "": empty`},
	} {
		_, err := parseSizes("sizes", c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "strconv") {
			t.Errorf("--sizes %q: %v; want %q...", c.in, err, c.want)
		}
	}
	if _, err := parseSize("size", "8,16"); err == nil || !strings.Contains(err.Error(), "one size") {
		t.Errorf("--size 8,16: %v; want one size", err)
	}
	for _, c := range []struct {
		in   string
		one  bool
		want []int
	}{
		{"8", true, []int{8}}, {"1K", true, []int{1024}}, {"8..64", false, []int{8, 16, 32, 64}},
		{"6..40", false, []int{6, 8, 16, 32, 40}}, {"3,5", false, []int{3, 5}}, {"2:16:x2", false, []int{2, 4, 8, 16}},
	} {
		if got, err := parseNPs(c.in, c.one); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("--np %s: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in  string
		one bool
	}{{"0", true}, {"-3", true}, {"abc", true}, {"", true}, {"0", false}, {"0..8", false}, {"4,-1", false}} {
		if _, err := parseNPs(c.in, c.one); err != errNP {
			t.Errorf("--np %q: %v; want %v", c.in, err, errNP)
		}
	}
	for _, in := range []string{"8..64", "2M"} {
		if _, err := parseNPs(in, true); err == nil || err == errNP {
			t.Errorf("--np %q (one): %v; want its own error", in, err)
		}
	}
	for in, want := range map[string]string{"auto": "auto", "on": "always", "OFF": "never", "never": "never"} {
		if got, err := checkProgress(in); err != nil || got != want {
			t.Errorf("--progress %s: %q, %v; want %q", in, got, err, want)
		}
	}
}

// errorOf runs scoll with args and returns the line main prints for its
// error ("" when it succeeds) and its standard output.
func errorOf(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	c, err := cmd.ExecuteC()
	if err == nil {
		return "", out.String()
	}
	return errorLine(c, err), out.String()
}

// TestGrammarErrors: every bad input on the command line gives one line,
// "scoll COMMAND: WHAT: WHY", a suggestion where a name was mistyped, the
// valid names, no Go-internal text, and nothing on standard output.
func TestGrammarErrors(t *testing.T) {
	for _, c := range []struct {
		args string
		want string // a regular expression
	}{
		{"sim --topo x", `^scoll sim: unknown flag --topo; did you mean --topology\?`},
		{"bench --szes 8", `^scoll bench: unknown flag --szes; did you mean --sizes\?`},
		{"sim --op allredcue", `^scoll sim: --op: unknown collective "allredcue"; did you mean "allreduce"\? \(valid: .*allgather`},
		{"model --op allredcue", `^scoll model: --op: unknown collective "allredcue"; did you mean "allreduce"\?`},
		{"sim --algorithm rign", `^scoll sim: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\? \(valid: .*rabenseifner`},
		{"schedule --algorithm rign", `^scoll schedule: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\?`},
		{"bench --algorithm rign", `^scoll bench: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\?`},
		{"predict --algorithm rign", `^scoll predict: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\?`},
		{"split --algorithm chneg", `^scoll split: --algorithm: unknown split algorithm "chneg"; did you mean "cheng"\? \(valid: .*bitonic`},
		{"schedule --algorithm ring --format txt", `^scoll schedule: --format: unknown format "txt"; did you mean "text"\?`},
		{"sim --progress sometimes", `^scoll sim: --progress: unknown progress mode "sometimes" \(valid: auto, always, never\)`},
		{"sim --sizes 99999999999999999999", `^scoll sim: --sizes "99999999999999999999": too large`},
		{"model --sizes 12Q", `^scoll model: --sizes "12Q": unknown unit "Q"`},
		{"schedule --algorithm ring --size 1Q", `^scoll schedule: --size "1Q": unknown unit "Q"`},
		{"bench --iters x", `^scoll bench: --iters "x": want a whole number$`},
		{"bench --time x", `^scoll bench: --time "x": want a duration`},
		{"bench --np", `^scoll bench: --np: needs a value$`},
		{"siim", `^scoll: unknown command "siim"; did you mean "sim"\? \(valid: .*bench`},
		{"sim extra", `^scoll sim: unexpected argument "extra"`},
		{"algorithms a b", `^scoll algorithms: arguments: want at most 1, got 2`},
		{"algorithms allredcue", `^scoll algorithms: unknown collective "allredcue"; did you mean "allreduce"\?`},
		{"run", `^scoll run: no program: `},
		{"--np 4", `^scoll: unknown flag --np \(flags: scoll --help\)$`},
		{"sim --topology torsu:4x4", `^scoll sim: --topology: unknown topology kind "torsu"; did you mean "torus"\? \(valid: torus, mesh`},
		{"model --params infinband", `^scoll model: --params: unknown params preset "infinband"; did you mean "infiniband"\?`},
	} {
		line, out := errorOf(t, strings.Fields(c.args)...)
		if !regexp.MustCompile(c.want).MatchString(line) {
			t.Errorf("scoll %s:\n got %q\nwant %s", c.args, line, c.want)
		}
		for _, bad := range []string{"\n", "strconv", "scoll: scoll", "Did you mean this", "invalid argument"} {
			if strings.Contains(line, bad) {
				t.Errorf("scoll %s: %q contains %q", c.args, line, bad)
			}
		}
		if out != "" {
			t.Errorf("scoll %s: printed %q before failing", c.args, out)
		}
	}
	// Every command that takes --np refuses 0, a negative count and
	// garbage with the same words.
	for _, cmd := range []string{"sim", "bench", "model", "schedule", "split", "run", "predict", "clairvoyant", "marendic"} {
		for _, np := range []string{"0", "-2", "abc"} {
			line, _ := errorOf(t, cmd, "--np", np)
			if want := "scoll " + cmd + `: --np "` + np + `": ` + errNP.Error(); line != want {
				t.Errorf("scoll %s --np %s:\n got %q\nwant %q", cmd, np, line, want)
			}
		}
	}
}

// TestGrammarFlags: the flags are the same on every command: --np of the
// grammar, --op defaulting to allreduce, --progress taking on and off,
// --size and --sizes each other's alias.
func TestGrammarFlags(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Name {
			case "np":
				if f.Value.Type() != "ranks" {
					t.Errorf("%s --np is a %s, not the grammar's rank count", c.CommandPath(), f.Value.Type())
				}
			case "op":
				if f.DefValue != defaultOp {
					t.Errorf("%s --op defaults to %s, not %s", c.CommandPath(), f.DefValue, defaultOp)
				}
			case "progress":
				if !strings.Contains(f.Usage, "auto (when stderr is a terminal), always or never") {
					t.Errorf("%s --progress: %q", c.CommandPath(), f.Usage)
				}
			}
		})
	}
	walk(newRootCmd())

	for _, args := range [][]string{
		{"sim", "--topology", "torus:2x2", "--op", "allgather", "--algorithm", "ring", "--sizes", "64..1K", "--progress", "on"},
		{"sim", "--topology", "torus:2x2", "--op", "allgather", "--algorithm", "ring", "--size", "1.5K", "--progress", "off"},
		{"schedule", "--algorithm", "rabenseifner", "--np", "4", "--sizes", "1.5K", "--format", "json"}, // allreduce by default
		{"model", "--np", "4..8", "--sizes", "8,1.5K", "--progress", "on", "--format", "csv"},
	} {
		if _, _, err := run(t, args...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
