package main

import (
	"regexp"
	"strings"
	"testing"
)

// tableFields splits a line of a table into its cells: the columns are at
// least two spaces apart, and a cell with a unit ("12.34 µs") has one.
func tableFields(line string) []string {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	return regexp.MustCompile(`\s{2,}`).Split(line, -1)
}

func TestFormatHelpers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtTime(0), "0 s"},
		{fmtTime(12.344e-6), "12.34 µs"},
		{fmtTime(3.4561e-3), "3.456 ms"},
		{fmtTime(1.2341), "1.234 s"},
		{fmtTime(999.99e-6), "1.000 ms"},
		{fmtTime(850e-9), "850.0 ns"},
		{fmtTime(2093.06), "2093 s"},
		{fmtEnergy(6.4559825e-4), "645.6 µJ"},
		{fmtRate(374.157), "374.16 MB/s"},
		{fmtRate(1360), "1.36 GB/s"},
		{fmtBytes(8), "8 B"},
		{fmtBytes(65536), "64 KiB"},
		{fmtBytes(1500), "1.465 KiB"},
		{fmtBytes(2.09306e+06), "1.996 MiB"},
		{fmtBytes(12.5), "12.5 B"},
		{fmtCount(511), "511"},
		{fmtCount(2.5), "2.50"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// exponentNumber matches numbers printed with an exponent (2.09306e+06).
var exponentNumber = regexp.MustCompile(`\d[eE][+-]\d`)

// TestTablesHaveUnits: the tables of scoll model, sim and sim --embedding
// print ordinary values without exponents and with their units, and CSV
// keeps plain numbers.
func TestTablesHaveUnits(t *testing.T) {
	for _, c := range []struct {
		args  []string
		units []string
	}{
		{[]string{"model", "--op", "allreduce", "--np", "8,256", "--sizes", "8,1M", "--round-sync"}, []string{" µs", " ms", " mJ", " B", " KiB", " MiB"}},
		{[]string{"model", "--op", "bcast", "--np", "64", "--sizes", "64K"}, []string{" µs", " KiB"}},
		{[]string{"sim", "--topology", "torus:8x8x8", "--op", "allgather", "--algorithm", "ring,recursive-doubling", "--sizes", "64,1M", "--progress", "never"},
			[]string{" µs", " ms", " s", " MB/s", " MiB", " KiB"}},
		{[]string{"sim", "--topology", "torus:4x4x4", "--op", "allgather", "--algorithm", "recursive-doubling", "--sizes", "1K", "--stages", "--progress", "never"},
			[]string{" µs", " KiB"}},
		{[]string{"sim", "--topology", "mesh:4x4", "--op", "allgather", "--algorithm", "ring,bruck", "--sizes", "64", "--embedding"}, []string{" B"}},
	} {
		out, _, err := run(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if m := exponentNumber.FindString(out); m != "" {
			t.Errorf("%v: a number with an exponent (%s):\n%s", c.args, m, out)
		}
		for _, u := range c.units {
			if !strings.Contains(out, u) {
				t.Errorf("%v: no %q in the table:\n%s", c.args, u, out)
			}
		}
	}
	out, _, err := run(t, "sim", "--topology", "torus:4x4", "--op", "allgather", "--algorithm", "ring", "--sizes", "64", "--format", "csv", "--progress", "never")
	if err != nil || strings.Contains(out, " µs") || strings.Contains(out, "MB/s") {
		t.Errorf("csv with units: %v\n%s", err, out)
	}
}
