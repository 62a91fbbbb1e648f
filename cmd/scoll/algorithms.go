package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/algtable"
	"github.com/scoll/scoll/internal/names"
	"github.com/spf13/cobra"
)

// docs/algorithms.md embeds the markdown table between these markers.
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
the default choice — first the native paths (chain, exchange, meet) whose
rule takes the call, given what the transport, the communicator and the
call's form offer, then the registered message schedule with the least
α-β-γ cost (scoll.WithoutAlgorithm excludes names from it). A native path
runs natively where its rule lets it and as its stand-in message schedule
elsewhere; scoll sim and scoll model take the same capabilities (--caps)
and name the same choice. A message schedule's messages travel by its
transport's paths (below).

--format markdown prints the table embedded in docs/algorithms.md between
the markers ` + beginMarker + ` and ` + endMarker + `; --update
docs/algorithms.md rewrites that section in place.`,
		Example: `  scoll algorithms
  scoll algorithms allreduce
  scoll algorithms --format markdown --update docs/algorithms.md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var infos []scoll.AlgorithmInfo
			if len(args) == 1 {
				c := strings.ToLower(args[0])
				infos = scoll.Algorithms(c)
				if c == "split" {
					infos = algtable.Split()
				} else if infos == nil && !slices.Contains(scoll.Collectives(), c) {
					return names.Unknown("collective", args[0], "", append(scoll.Collectives(), "split"))
				}
			} else {
				infos = algtable.All()
			}
			if update != "" {
				if format != "markdown" {
					return errors.New("--update needs --format markdown")
				}
				if len(args) > 0 {
					return errors.New("--update writes the table of every collective; give no collective")
				}
				return updateFile(update, algtable.Markdown(infos))
			}
			w := cmd.OutOrStdout()
			switch format {
			case "table":
				if err := algtable.Write(w, infos); err != nil {
					return err
				}
				if len(args) == 0 {
					return algtable.WritePaths(w)
				}
				return nil
			case "markdown", "md":
				_, err := io.WriteString(w, algtable.Markdown(infos))
				return err
			case "json":
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(algtable.JSON(infos))
			}
			return checkName("format", "format", format, []string{"table", "markdown", "json"})
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, markdown or json")
	cmd.Flags().StringVar(&update, "update", "", "with --format markdown: replace the section between the algorithm markers of this file")
	return cmd
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
