package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport"
	"github.com/spf13/cobra"
)

// The README embeds the markdown table between these markers.
const (
	beginMarker = "<!-- algorithms:begin -->"
	endMarker   = "<!-- algorithms:end -->"
)

func newAlgorithmsCmd() *cobra.Command {
	var format, update string
	cmd := &cobra.Command{
		Use:   "algorithms [collective]",
		Short: "List the registered algorithms of every collective, or of one",
		Long: `algorithms prints scoll's algorithm registry: for each collective, each
algorithm's name (what --algorithm and scoll.WithAlgorithm take), how it
moves the data, what it requires of the call, and a one-line description;
then the communicator split algorithms (collective "split": what
scoll.WithSplitAlgorithm and scoll split --algorithm take), and the paths
by which each transport moves messages.

Which code moves a call's bytes: the algorithm WithAlgorithm names, else
the default choice — first the shared-memory paths (exchange, then meet)
when their conditions hold, then the registered message schedule with the
least α-β-γ cost (scoll.WithoutAlgorithm excludes names from it). A
message schedule's messages travel by its transport's paths (below). The
shared-memory paths run natively on transports that offer them and as
their message schedules elsewhere.

--format markdown prints the table embedded in README.md between the markers
` + beginMarker + ` and ` + endMarker + `; --update README.md rewrites that
section in place.`,
		Example: `  scoll algorithms
  scoll algorithms allreduce
  scoll algorithms --format markdown --update README.md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var infos []scoll.AlgorithmInfo
			if len(args) == 1 {
				c := strings.ToLower(args[0])
				infos = scoll.Algorithms(c)
				if c == "split" {
					infos = splitAlgorithms()
				} else if infos == nil && !slices.Contains(scoll.Collectives(), c) {
					return fmt.Errorf("unknown collective %q (have %s)", args[0], strings.Join(scoll.Collectives(), ", "))
				}
			} else {
				infos = allAlgorithms()
			}
			if update != "" {
				if format != "markdown" {
					return errors.New("--update needs --format markdown")
				}
				if len(args) > 0 {
					return errors.New("--update writes the table of every collective; give no collective")
				}
				return updateFile(update, markdownTable(infos))
			}
			w := cmd.OutOrStdout()
			switch format {
			case "table":
				if err := writeAlgorithmTable(w, infos); err != nil {
					return err
				}
				if len(args) == 0 {
					return writePathTable(w)
				}
				return nil
			case "markdown", "md":
				_, err := io.WriteString(w, markdownTable(infos))
				return err
			case "json":
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(algorithmsJSON(infos))
			}
			return fmt.Errorf("--format %q: want table, markdown or json", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, markdown or json")
	cmd.Flags().StringVar(&update, "update", "", "with --format markdown: replace the section between the algorithm markers of this file")
	return cmd
}

// algorithmJSON is an algorithm of scoll algorithms --format json
// (docs/json.md).
type algorithmJSON struct {
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
func algorithmsJSON(infos []scoll.AlgorithmInfo) []algorithmJSON {
	out := []algorithmJSON{}
	for _, a := range infos {
		out = append(out, algorithmJSON{Collective: a.Collective, Name: a.Name, Path: pathOf(a), When: a.When, Requires: a.Requires,
			Commutative: a.Commutative, PowerOfTwo: a.PowerOfTwo, Doc: a.Doc, Source: a.Source})
	}
	return out
}

// allAlgorithms returns the registry, by collective then name, and the
// split algorithms last (collective "split").
func allAlgorithms() []scoll.AlgorithmInfo {
	var out []scoll.AlgorithmInfo
	for _, c := range scoll.Collectives() {
		out = append(out, scoll.Algorithms(c)...)
	}
	return append(out, splitAlgorithms()...)
}

// splitAlgorithms returns the split registry as algorithm rows.
func splitAlgorithms() []scoll.AlgorithmInfo {
	var out []scoll.AlgorithmInfo
	for _, a := range scoll.SplitAlgorithms() {
		out = append(out, scoll.AlgorithmInfo{Collective: "split", Name: a.Name, Doc: a.Doc, Source: a.Source, Requires: "-"})
	}
	return out
}

func writeAlgorithmTable(w io.Writer, infos []scoll.AlgorithmInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COLLECTIVE\tNAME\tPATH\tREQUIRES\tDOC")
	for _, a := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Collective, a.Name, pathOf(a), a.Requires, a.Doc)
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
func pathOf(a scoll.AlgorithmInfo) string {
	if a.Path == "" {
		return "messages"
	}
	return a.Path
}

// writePathTable lists the transports' paths.
func writePathTable(w io.Writer) error {
	fmt.Fprintln(w, "\nTransport paths (how messages travel):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSPORT\tPATH\tWHEN\tDOC")
	for _, p := range transport.Paths() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Transport, p.Name, p.When, p.Doc)
	}
	return tw.Flush()
}

// markdownTable renders infos as a GitHub markdown table ending in a newline.
func markdownTable(infos []scoll.AlgorithmInfo) string {
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		return strings.ReplaceAll(s, "\n", " ")
	}
	var b strings.Builder
	b.WriteString("| collective | algorithm | moves data by | requires | description | source |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, a := range infos {
		path := pathOf(a)
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

// replaceSection returns doc with the text between the markers replaced by
// table. ok is false when doc lacks the markers (in that order).
func replaceSection(doc, table string) (string, bool) {
	i, j, ok := sectionBounds(doc)
	if !ok {
		return "", false
	}
	return doc[:i] + "\n" + table + doc[j:], true
}

// section returns the text between the markers of doc.
func section(doc string) (string, bool) {
	i, j, ok := sectionBounds(doc)
	if !ok {
		return "", false
	}
	return doc[i:j], true
}

// sectionBounds returns where the text between the markers of doc starts
// and ends; ok is false when doc lacks the markers (in that order).
func sectionBounds(doc string) (start, end int, ok bool) {
	i := strings.Index(doc, beginMarker)
	if i < 0 {
		return 0, 0, false
	}
	i += len(beginMarker)
	j := strings.Index(doc[i:], endMarker)
	if j < 0 {
		return 0, 0, false
	}
	return i, i + j, true
}

func updateFile(path, table string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, ok := replaceSection(string(old), table)
	if !ok {
		return fmt.Errorf("%s has no %s ... %s section", path, beginMarker, endMarker)
	}
	if doc == string(old) {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(doc), st.Mode().Perm())
}
