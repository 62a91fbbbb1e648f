package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// scoll model marks the rows whose cost and critical times differ by more
// than 2× and says why once, under the table: at 8 ranks and 8 bytes the
// registered cost of bucket3 is 3× its critical path (two elements leave
// most of its three buckets empty); CSV carries no marks.
func TestModelCostNote(t *testing.T) {
	out, _, err := run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "8", "--progress", "never")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	rows := map[string]string{}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "allreduce" {
			rows[f[1]] = l
		}
	}
	if !strings.Contains(rows["bucket3"], "µs†") || strings.Contains(rows["recursive-doubling"], "†") {
		t.Errorf("marks:\nbucket3: %s\nrecursive-doubling: %s", rows["bucket3"], rows["recursive-doubling"])
	}
	if n := strings.Count(out, "† cost > 2× critical"); n != 1 || !strings.HasPrefix(lines[len(lines)-1], "† ") ||
		!strings.Contains(out, "round-synchronous") || !strings.Contains(out, "critical path") {
		t.Errorf("want one footnote under the table, got %d:\n%s", n, out)
	}
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "8", "--format", "csv", "--progress", "never")
	if err != nil || strings.ContainsAny(out, "†‡") {
		t.Errorf("csv: %v\n%s", err, out)
	}
	// Where the columns agree, no note.
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "4M", "--progress", "never")
	if err != nil || strings.ContainsAny(out, "†‡") {
		t.Errorf("4 MiB: %v\n%s", err, out)
	}
}

// helpWord reports whether help names word as a whole word (not as part
// of time_s or round_opt).
func helpWord(help, word string) bool {
	isWord := func(r byte) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	for i := 0; ; {
		j := strings.Index(help[i:], word)
		if j < 0 {
			return false
		}
		j += i
		k := j + len(word)
		if (j == 0 || !isWord(help[j-1])) && (k == len(help) || !isWord(help[k])) {
			return true
		}
		i = j + 1
	}
}

// printedColumns returns the table's headings (the first line not a
// comment, split on runs of two spaces) and the CSV header's columns.
func printedColumns(table, csv string) []string {
	var cols []string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		for _, h := range strings.Split(strings.TrimSpace(l), "  ") {
			if h = strings.TrimSpace(h); h != "" {
				cols = append(cols, h)
			}
		}
		break
	}
	if first, _, _ := strings.Cut(csv, "\n"); first != "" {
		cols = append(cols, strings.Split(first, ",")...)
	}
	return cols
}

// Each command's --help names the columns its table and CSV print, as
// they print them, and no column they do not print.
func TestHelpNamesColumns(t *testing.T) {
	for _, c := range []struct {
		args  []string
		stale []string // names the help must not use
	}{
		{[]string{"sim", "--topology", "torus:2x2", "--algorithm", "ring", "--sizes", "64", "--progress", "never"}, []string{"mbps is", "time_s is"}},
		{[]string{"sim", "--topology", "torus:2x2", "--op", "bcast", "--algorithm", "binomial", "--sizes", "64", "--progress", "never"}, nil},
		{[]string{"model", "--np", "8", "--sizes", "8", "--round-sync", "--progress", "never"}, nil},
		{[]string{"model", "--op", "bcast", "--np", "8", "--sizes", "8", "--progress", "never"}, nil},
		{[]string{"bench", "--np", "2", "--sizes", "8", "--algorithm", "ring", "--progress", "never"}, []string{"avg(us)", "GB/s is"}},
		{[]string{"split", "--np", "8", "--reps", "1", "--algorithm", "cheng", "--progress", "never"}, nil},
		{[]string{"split", "--figure", "moody4", "--np", "8", "--reps", "1", "--progress", "never"}, nil},
		{[]string{"predict", "--np", "2", "--sizes", "8", "--algorithm", "ring", "--params", "infiniband"}, []string{"predicted_us"}},
	} {
		help, _, err := run(t, c.args[0], "--help")
		if err != nil {
			t.Fatal(err)
		}
		table, _, err := run(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		csv := ""
		if f := newRootCmd(); hasFlag(f, c.args[0], "format") {
			if csv, _, err = run(t, append(c.args, "--format", "csv")...); err != nil {
				t.Fatalf("%v csv: %v", c.args, err)
			}
		}
		for _, col := range printedColumns(table, csv) {
			if !helpWord(help, col) {
				t.Errorf("%s --help does not name the column %q (%v)", c.args[0], col, c.args)
			}
		}
		for _, s := range c.stale {
			if strings.Contains(help, s) {
				t.Errorf("%s --help says %q", c.args[0], s)
			}
		}
	}
}

// No flag's help repeats the default pflag prints after it.
func TestHelpDefaultsOnce(t *testing.T) {
	root := newRootCmd()
	for _, cmd := range root.Commands() {
		help, _, err := run(t, cmd.Name(), "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(help, "\n") {
			if strings.Count(l, "(default") > 1 {
				t.Errorf("%s --help: %s", cmd.Name(), strings.TrimSpace(l))
			}
		}
	}
}

// hasFlag reports whether the subcommand name of root takes --flag.
func hasFlag(root *cobra.Command, name, flag string) bool {
	cmd, _, err := root.Find([]string{name})
	return err == nil && cmd.Flags().Lookup(flag) != nil
}
