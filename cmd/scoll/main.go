// Command scoll is the command-line tool of the scoll collectives library.
//
// Subcommands:
//
//	scoll bench        OSU-style benchmark of a collective on in-process ranks
//	scoll algorithms   the algorithm registry as a table, markdown or JSON
//	scoll sim          simulate algorithms on a network topology (stage or flow model)
//	scoll schedule     print a schedule: text, JSON, LogGOPSim GOAL or SVG timeline
//	scoll model        runtime, energy and memory of each algorithm (analytic models)
//	scoll calibrate    measure α, β, γ of the in-process transport
//	scoll predict      predicted (α-β-γ) against measured time per algorithm
//	scoll figures      the allgather and reduce-scatter figures of Sack's thesis, predicted
//	scoll run          start N local processes of a program, one per rank (a small mpirun)
//	scoll completion   shell completion script (bash, zsh, fish, powershell)
//
// scoll --version prints the module version and the commit it was built from.
// Run "scoll help COMMAND" for a command's flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	cmd, err := newRootCmd().ExecuteContextC(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, errorLine(cmd, err))
		os.Exit(1)
	}
}

// errorLine renders a command's error with one prefix, the command's own
// ("scoll sim: ..."): the prefixes the packages put on their errors
// ("scoll: ", "bench: ", "sim: ", ...) are dropped from its start, so that
// neither a doubled "scoll: scoll:" nor another command's name leads.
func errorLine(cmd *cobra.Command, err error) string {
	name := "scoll"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	msg := unknownCommand(cmd, err).Error()
	prefixes := []string{"scoll: ", "bench: ", "sim: ", "model: ", "workload: ", "schedule: ", "topology: ", "split: "}
	for again := true; again; {
		again = false
		for _, p := range prefixes {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				msg, again = rest, true
			}
			// After a flag's name too: "--topology: topology: ..."
			if strings.Contains(msg, ": "+p) {
				msg, again = strings.ReplaceAll(msg, ": "+p, ": "), true
			}
		}
	}
	// One line: the lines of a multi-line message are joined.
	msg = strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(msg), "\n", " \x00 ")), " ")
	msg = strings.ReplaceAll(msg, " \x00 ", "; ")
	return name + ": " + msg
}

// newRootCmd returns the scoll command with every subcommand. Each
// subcommand is built by its own newXxxCmd function in its own file; a new
// one is added here.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "scoll",
		Short: "scoll: scalable MPI-style collectives with many algorithms each",
		Long: `scoll runs, benchmarks and describes the collective algorithms of the scoll
library (github.com/scoll/scoll).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentPreRunE = checkOutputFlags
	root.SetFlagErrorFunc(flagError)
	root.Version = version()
	root.SetVersionTemplate("scoll {{.Version}}\n")
	root.AddCommand(newBenchCmd(), newAlgorithmsCmd(), newSimCmd(), newScheduleCmd(), newCalibrateCmd(), newPredictCmd(), newModelCmd(), newFiguresCmd(), newRunCmd(), newSplitCmd(), newSplitPhasesCmd(), newClairvoyantCmd(), newMarendicCmd(), newTuneCmd())
	shapeArgs(root)
	aliasFlags(root)
	return root
}

// version returns the module version and the VCS revision the binary was
// built from, as the Go toolchain recorded them ("(devel)" for a build in
// the module's own tree; the revision and a "+dirty" mark when built from
// a checkout).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty, at string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		case "vcs.time":
			at = s.Value
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += fmt.Sprintf(" commit %.12s%s", rev, dirty)
	}
	if at != "" {
		v += " " + at
	}
	return v + " " + info.GoVersion
}
