// Package algtable renders scoll's registry as scoll algorithms prints it
// and as docs/algorithms.md embeds it: a text table, a markdown table and JSON
// objects, from the public scoll.Algorithms, plus the transports' paths.
package algtable

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport"
)

// JSONRow is an algorithm of scoll algorithms --format json
// (docs/json.md).
type JSONRow struct {
	Collective  string `json:"collective"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	When        string `json:"when,omitempty"`
	Requires    string `json:"requires"`
	Commutative bool   `json:"commutative"`
	PowerOfTwo  bool   `json:"power_of_two"`
	Doc         string `json:"doc"`
	Source      string `json:"source"`
}

// algorithmsJSON returns infos as JSON objects (an empty list for none).
func JSON(infos []scoll.AlgorithmInfo) []JSONRow {
	out := []JSONRow{}
	for _, a := range infos {
		out = append(out, JSONRow{Collective: a.Collective, Name: a.Name, Path: PathOf(a), When: a.When, Requires: a.Requires,
			Commutative: a.Commutative, PowerOfTwo: a.PowerOfTwo, Doc: a.Doc, Source: a.Source})
	}
	return out
}

// allAlgorithms returns the registry, by collective then name, and the
// split algorithms last (collective "split").
func All() []scoll.AlgorithmInfo {
	var out []scoll.AlgorithmInfo
	for _, c := range scoll.Collectives() {
		out = append(out, scoll.Algorithms(c)...)
	}
	return append(out, Split()...)
}

// splitAlgorithms returns the split registry as algorithm rows.
func Split() []scoll.AlgorithmInfo {
	var out []scoll.AlgorithmInfo
	for _, a := range scoll.SplitAlgorithms() {
		out = append(out, scoll.AlgorithmInfo{Collective: "split", Name: a.Name, Doc: a.Doc, Source: a.Source, Requires: "-"})
	}
	return out
}

// Write writes infos as the table scoll algorithms prints, then the
// native paths' rules.
func Write(w io.Writer, infos []scoll.AlgorithmInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COLLECTIVE\tNAME\tPATH\tREQUIRES\tDOC")
	for _, a := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Collective, a.Name, PathOf(a), a.Requires, a.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sep := "\n"
	for _, a := range infos {
		if a.When != "" {
			fmt.Fprintf(w, "%s%s/%s (%s): %s.\n", sep, a.Collective, a.Name, a.Path, a.When)
			sep = ""
		}
	}
	return nil
}

// pathOf is the path column of an algorithm ("messages" for split
// algorithms, which are Go code over messages too).
func PathOf(a scoll.AlgorithmInfo) string {
	if a.Path == "" {
		return "messages"
	}
	return a.Path
}

// writePathTable lists the transports' paths.
func WritePaths(w io.Writer) error {
	fmt.Fprintln(w, "\nTransport paths (how messages travel):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSPORT\tPATH\tWHEN\tDOC")
	for _, p := range transport.Paths() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Transport, p.Name, p.When, p.Doc)
	}
	return tw.Flush()
}

// markdownTable renders infos as a GitHub markdown table ending in a newline.
func Markdown(infos []scoll.AlgorithmInfo) string {
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		return strings.ReplaceAll(s, "\n", " ")
	}
	var b strings.Builder
	b.WriteString("| collective | algorithm | moves data by | requires | description | source |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, a := range infos {
		path := PathOf(a)
		if a.When != "" {
			path += ": " + a.When
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", a.Collective, a.Name, cell(path), cell(a.Requires), cell(a.Doc), cell(a.Source))
	}
	b.WriteString("\n| transport | path | when | description |\n| --- | --- | --- | --- |\n")
	for _, p := range transport.Paths() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p.Transport, p.Name, cell(p.When), cell(p.Doc))
	}
	return b.String()
}
