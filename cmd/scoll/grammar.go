package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/internal/names"
	"github.com/scoll/scoll/internal/sizes"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The grammar every command shares: one parser for sizes and rank counts
// (package internal/sizes: 64,4K,1.5M lists, 8..1M and 8:1M:x4 ranges),
// one check of --np, one default --op, one set of --progress values, one
// wording for an unknown name (package internal/names), and errors of the
// shape "scoll COMMAND: WHAT: WHY".

// defaultOp is the collective of every command that takes --op.
const defaultOp = "allreduce"

// maxRanks is the largest rank count --np takes.
const maxRanks = 1 << 20

// sizesHelp describes the values of --sizes, for the flags' help.
const sizesHelp = "a list like 64,4K,1.5M, ranges 64..1M (the powers of two between) or 8:16M:x4 (each step: xF multiplies, +N adds), units B, K, M, G, T (1K = 1024)"

// parseSizes parses the sizes flag named flag.
func parseSizes(flag, s string) ([]int, error) {
	out, err := sizes.List(s, bench.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("--%s %w", flag, err)
	}
	return out, nil
}

// parseSize parses a flag that takes one size.
func parseSize(flag, s string) (int, error) {
	if strings.ContainsAny(s, ",:") || strings.Contains(s, "..") {
		return 0, fmt.Errorf("--%s %q: one size here, not a list or a range", flag, s)
	}
	n, err := sizes.One(s, bench.MaxSize)
	if err != nil {
		return 0, fmt.Errorf("--%s %w", flag, err)
	}
	return n, nil
}

// errNP is the one refusal of a bad --np, on every command.
var errNP = errors.New("want a rank count of at least 1, like 8, 64 or 1K")

// checkNP refuses a rank count below 1.
func checkNP(n int) error {
	if n < 1 {
		return errNP
	}
	return nil
}

// parseNPs parses a --np of rank counts (one when one is true) in the
// grammar of sizes, refusing what checkNP refuses.
func parseNPs(s string, one bool) ([]int, error) {
	if i, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && i < 1 {
		return nil, errNP // 0 or negative
	}
	if one && (strings.ContainsAny(s, ",:") || strings.Contains(s, "..")) {
		return nil, errors.New("one rank count here, not a list or a range")
	}
	ns, err := sizes.List(s, maxRanks)
	if err != nil {
		if strings.Contains(err.Error(), "not a number") || strings.Contains(err.Error(), "empty") {
			return nil, errNP
		}
		return nil, err
	}
	for _, n := range ns {
		if err := checkNP(n); err != nil {
			return nil, err
		}
	}
	return ns, nil
}

// npValue is a --np of one rank count, as a pflag.Value: its Set refuses
// what checkNP refuses, before the command runs. 0 is "not given".
type npValue struct{ p *int }

func (v npValue) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return strconv.Itoa(*v.p)
}

func (v npValue) Type() string { return "ranks" }

func (v npValue) Set(s string) error {
	ns, err := parseNPs(s, true)
	if err != nil {
		return err
	}
	*v.p = ns[0]
	return nil
}

// addNPFlag registers --np, one rank count, with default def (0: none,
// the command picks).
func addNPFlag(f *pflag.FlagSet, p *int, def int, usage string) {
	*p = def
	f.Var(npValue{p}, "np", usage)
}

// npListValue is a --np of rank counts: a list or ranges, each one as
// checkNP wants it.
type npListValue struct {
	p   *[]int
	def string
}

func (v npListValue) String() string { return v.def }

func (v npListValue) Type() string { return "ranks" }

func (v npListValue) Set(s string) error {
	ns, err := parseNPs(s, false)
	if err != nil {
		return err
	}
	*v.p = ns
	return nil
}

// addNPListFlag registers --np, a list of rank counts, with default def.
func addNPListFlag(f *pflag.FlagSet, p *[]int, def, usage string) {
	v := npListValue{p, def}
	if err := v.Set(def); err != nil {
		panic(err)
	}
	f.Var(v, "np", usage+"; a list like 8,64,512 or ranges like 8..4096 (the powers of two between)")
}

// progressModes are the values of --progress; on and off are aliases of
// always and never.
var progressModes = []string{"auto", "always", "never"}

// checkProgress returns --progress as auto, always or never.
func checkProgress(s string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(s)); m {
	case "auto", "always", "never":
		return m, nil
	case "on":
		return "always", nil
	case "off":
		return "never", nil
	}
	return "", fmt.Errorf("--progress: %w", names.Unknown("progress mode", s, "", progressModes))
}

// collectiveNames lists the collectives schedules are built for.
func collectiveNames() []string {
	var out []string
	for c := range schedule.NumCollectives {
		out = append(out, c.String())
	}
	return out
}

// parseTopology reads --topology, an unknown kind reported as every
// unknown name is.
func parseTopology(spec string) (topology.Topology, error) {
	if kind, _, ok := strings.Cut(spec, ":"); ok {
		k := strings.ToLower(strings.TrimSpace(kind))
		if err := checkName("topology", "topology kind", k, topology.Kinds()); err != nil {
			return nil, err
		}
	}
	t, err := topology.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("--topology: %w", err)
	}
	return t, nil
}

// openParams reads --params: a preset or a JSON file; a name that is
// neither is reported as every unknown name is.
func openParams(name string) (model.Params, error) {
	if _, err := os.Stat(name); err != nil && !strings.ContainsAny(name, "/.") {
		if err := checkName("params", "params preset", name, model.Presets()); err != nil {
			return model.Params{}, fmt.Errorf("%w, nor a file", err)
		}
	}
	p, err := model.OpenParams(name)
	if err != nil {
		return p, fmt.Errorf("--params: %w", err)
	}
	return p, nil
}

// scalarCollectives lists the collectives that are not vector ones (the
// v-variants).
func scalarCollectives() []string {
	var out []string
	for c := range schedule.NumCollectives {
		if !c.Vector() {
			out = append(out, c.String())
		}
	}
	return out
}

// parseOp reads --op: a collective among valid (all of them when nil).
func parseOp(op string, valid []string) (schedule.Collective, error) {
	if valid == nil {
		valid = collectiveNames()
	}
	c, ok := schedule.ParseCollective(strings.ToLower(strings.TrimSpace(op)))
	for _, v := range valid {
		if ok && v == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("--op: %w", names.Unknown("collective", op, "", valid))
}

// checkAlgorithm returns nil when name is an algorithm registered for
// coll or one of extra ("auto", "all"), else the error that lists them.
func checkAlgorithm(coll schedule.Collective, name string, extra ...string) error {
	valid := append([]string(nil), extra...)
	for _, in := range algorithms.List(coll) {
		valid = append(valid, in.Name)
	}
	for _, v := range valid {
		if v == name {
			return nil
		}
	}
	return fmt.Errorf("--algorithm: %w", names.Unknown("algorithm", name, coll.String(), valid))
}

// checkName returns nil when name is among valid, else the error of flag
// that lists them, name being of kind.
func checkName(flag, kind, name string, valid []string) error {
	for _, v := range valid {
		if v == name {
			return nil
		}
	}
	return fmt.Errorf("--%s: %w", flag, names.Unknown(kind, name, "", valid))
}

// flagError renders the errors of flag parsing in the shape of every
// other error, "WHAT: WHY" on one line, with a suggestion for a mistyped
// flag; cobra calls it (Command.SetFlagErrorFunc).
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var required *pflag.ValueRequiredError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		help := "scoll --help"
		if cmd.HasParent() {
			help = "scoll help " + strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		}
		if sh := notExist.GetSpecifiedShortnames(); sh != "" {
			if sh == name {
				return fmt.Errorf("unknown flag -%s (flags: %s)", name, help)
			}
			return fmt.Errorf("unknown flag -%s in -%s (flags: %s)", name, sh, help)
		}
		var valid []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				valid = append(valid, f.Name)
			}
		})
		msg := "unknown flag --" + name
		if s := names.Suggest(name, valid); len(s) > 0 {
			msg += "; did you mean --" + strings.Join(s, " or --") + "?"
		}
		return errors.New(msg + " (flags: " + help + ")")
	case errors.As(err, &invalid):
		f, v := invalid.GetFlag(), invalid.GetValue()
		cause := errors.Unwrap(invalid)
		why := ""
		if cause != nil {
			why = cause.Error()
		}
		// The grammar's errors start with the value; strconv's and
		// time's say nothing a user needs.
		why = strings.TrimPrefix(why, strconv.Quote(v)+": ")
		if strings.Contains(why, "strconv.") || strings.HasPrefix(why, "time: ") {
			why = "want " + valueKind(f.Value.Type())
		}
		return fmt.Errorf("--%s %q: %s", f.Name, v, why)
	case errors.As(err, &required):
		return fmt.Errorf("--%s: needs a value", required.GetFlag().Name)
	case errors.As(err, &syntax):
		return fmt.Errorf("%s: bad flag syntax (want --name or --name=value)", syntax.GetSpecifiedFlag())
	}
	return err
}

// valueKind says in words what a flag of pflag type typ takes.
func valueKind(typ string) string {
	switch typ {
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "a whole number"
	case "float64", "float32":
		return "a number"
	case "duration":
		return "a duration like 500ms, 2s or 1m"
	case "bool":
		return "true or false"
	}
	return "a " + typ
}

// shapeArgs wraps the Args check of cmd and of every command under it so
// that cobra's own messages ("unknown command ... Did you mean this?",
// "accepts 1 arg(s), received 2") read as the other errors: one line, the
// valid names listed.
func shapeArgs(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		shapeArgs(c)
	}
	check := cmd.Args
	if check == nil {
		return // cobra's legacy check: unknownCommand reshapes its error
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		err := check(c, args)
		if err == nil {
			return nil
		}
		msg := err.Error()
		switch {
		case strings.HasPrefix(msg, "unknown command "):
			return fmt.Errorf("unexpected argument %q (%s takes flags only)", args[0], c.CommandPath())
		case strings.HasPrefix(msg, "accepts "):
			want := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(msg, ",", 2)[0], "accepts "), " arg(s)")
			return fmt.Errorf("arguments: want %s, got %d (usage: %s)", want, len(args), c.UseLine())
		}
		return err
	}
}

// unknownCommand rewrites cobra's error for an unknown subcommand of cmd
// ("unknown command "x" for "scoll"" and a "Did you mean this?" block) as
// one line that lists the commands; other errors are returned as they are.
func unknownCommand(cmd *cobra.Command, err error) error {
	var name string
	if cmd == nil || !strings.HasPrefix(err.Error(), "unknown command ") {
		return err
	}
	if _, e := fmt.Sscanf(strings.TrimPrefix(err.Error(), "unknown command "), "%q", &name); e != nil {
		return err
	}
	var valid []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			valid = append(valid, s.Name())
		}
	}
	return names.Unknown("command", name, "", valid)
}

// flagAliases are other spellings of flags: a command that has the flag on
// the right also takes the one on the left (--size for a list of sizes,
// --sizes for one size, --algorithms for --algorithm).
var flagAliases = [][2]string{{"size", "sizes"}, {"sizes", "size"}, {"algorithms", "algorithm"}}

// aliasFlags gives cmd and every command under it the aliases of
// flagAliases for the flags it has, by pflag's name normalization.
func aliasFlags(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		aliasFlags(c)
	}
	alias := map[string]string{}
	for _, a := range flagAliases {
		if cmd.Flags().Lookup(a[1]) != nil && cmd.Flags().Lookup(a[0]) == nil {
			alias[a[0]] = a[1]
		}
	}
	if len(alias) == 0 {
		return
	}
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := alias[name]; ok {
			return pflag.NormalizedName(to)
		}
		return pflag.NormalizedName(name)
	})
}
