package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/split"
)

// SplitFigure is a set of split configurations whose times against the
// number of ranks have the shape of one of Moody, Ahn and de Supinski's
// figures (2011, sec. 4), measured on in-process ranks (scoll split
// --figure). Every configuration keeps its result as a chain
// (WithChainGroup), as the paper's algorithms do: cheng and cheng-M too,
// whose sorters then post every contributor its links (no table anywhere).
type SplitFigure struct {
	// Name is what scoll split --figure takes; Title describes it.
	Name, Title string
	// Algorithms are the figure's lines. Those not registered in this
	// build, and those refusing a variant, are skipped rows.
	Algorithms []string
	// Variants are the configurations every algorithm runs at every n.
	Variants []SplitVariant
}

// SplitVariant is one configuration of a figure: a panel of it and a line
// style within the panel.
type SplitVariant struct {
	// Panel names the sub-figure ("" for a figure of one panel) and
	// Label the line style within it.
	Panel, Label string
	// Colors, Bytes, ColorLen, NoReorder and NoSplit are SplitConfig's.
	Colors             string
	Bytes              bool
	ColorLen           int
	NoReorder, NoSplit bool
}

// Name is the variant's label in results (SplitResult.Variant): panel and
// label joined by a slash.
func (v SplitVariant) Name() string {
	if v.Panel == "" {
		return v.Label
	}
	return v.Panel + "/" + v.Label
}

// apply sets the variant's fields of cfg.
func (v SplitVariant) apply(cfg *SplitConfig) {
	cfg.Colors, cfg.Bytes, cfg.ColorLen = v.Colors, v.Bytes, v.ColorLen
	cfg.NoReorder, cfg.NoSplit, cfg.Chain = v.NoReorder, v.NoSplit, true
	cfg.Variant = v.Name()
}

// MoodyColorLens are the lengths of the string colors of Figures 4 and 5.
var MoodyColorLens = []int{5, 80}

// groupVariants returns Figures 4 and 5's variants: (a) many groups (one
// per rank) and (b) few groups (SmallGroups), each with string colors of
// every MoodyColorLens length.
func groupVariants(noReorder bool) []SplitVariant {
	var out []SplitVariant
	for _, p := range []struct{ panel, colors string }{{"many", "N"}, {"few", "small"}} {
		for _, l := range MoodyColorLens {
			out = append(out, SplitVariant{Panel: p.panel, Label: "len" + strconv.Itoa(l), Colors: p.colors, Bytes: true, ColorLen: l, NoReorder: noReorder})
		}
	}
	return out
}

// lens lists MoodyColorLens in words.
func lens() string {
	var s []string
	for _, l := range MoodyColorLens {
		s = append(s, strconv.Itoa(l))
	}
	return strings.Join(s, " and ")
}

// SplitFigures lists the figure modes.
func SplitFigures() []SplitFigure {
	fig3 := []string{"allgather", "allgather-chain", "gather-scatter"}
	for _, m := range split.ChengM {
		fig3 = append(fig3, "cheng-"+strconv.Itoa(m))
	}
	fig3 = append(fig3, "bitonic", "radix")
	return []SplitFigure{{
		Name:       "moody3",
		Title:      "Moody et al. Fig. 3 shape: reorder without split, integer keys",
		Algorithms: fig3,
		Variants:   []SplitVariant{{Label: "reorder", Colors: "1", NoSplit: true}},
	}, {
		Name: "moody4",
		Title: fmt.Sprintf("Moody et al. Fig. 4 shape: split without reorder, string colors of %s bytes, (a) many groups (one per rank), (b) few groups (%d)",
			lens(), SmallGroups),
		// allgather is integer-only: its rows say it refuses string
		// colors; allgather-chain is the baseline that runs.
		Algorithms: []string{"bitonic", "hash", "hash64", "allgather-chain", "allgather"},
		Variants:   groupVariants(true),
	}, {
		Name: "moody5",
		Title: fmt.Sprintf("Moody et al. Fig. 5 shape: split with reorder, integer keys, string colors of %s bytes, (a) many groups, (b) few groups (%d)",
			lens(), SmallGroups),
		Algorithms: []string{"bitonic", "hash", "hash64"},
		Variants:   groupVariants(false),
	}}
}

// SplitFigureNames lists the figure modes' names.
//
// It and LookupSplitFigure are shaped like model's Presets and ParamsByName
// (names of a list, look-up by name), kept apart because the lists' types
// and matching (exact here, case-insensitive there) differ.
func SplitFigureNames() []string {
	var out []string
	for _, f := range SplitFigures() {
		out = append(out, f.Name)
	}
	return out
}

// LookupSplitFigure returns the figure mode called name.
func LookupSplitFigure(name string) (SplitFigure, error) {
	for _, f := range SplitFigures() {
		if f.Name == name {
			return f, nil
		}
	}
	return SplitFigure{}, fmt.Errorf("%w: unknown figure %q (have %s)", ErrConfig, name, strings.Join(SplitFigureNames(), ", "))
}

// RunSplitFigure measures every variant of fig at every n of nps (with
// World, at its size only) by RunSplit: base supplies the rest of the
// configuration (keys, seed, representations, repetitions, memory guard,
// callbacks); base.Algorithms, when set, replace the figure's lines. The
// results are in the order run: by n, variant, algorithm.
func RunSplitFigure(ctx context.Context, fig SplitFigure, base SplitConfig, nps []int) (*Results[SplitResult], error) {
	if base.World != nil {
		nps = []int{base.World.Size()}
	}
	if len(nps) == 0 {
		return nil, fmt.Errorf("%w: figure %s: no rank counts", ErrConfig, fig.Name)
	}
	algs := fig.Algorithms
	if len(base.Algorithms) > 0 {
		algs = base.Algorithms
	}
	var have, missing []string
	for _, a := range algs {
		if _, ok := split.Lookup(a); ok {
			have = append(have, a)
		} else {
			missing = append(missing, a)
		}
	}
	if len(base.Algorithms) > 0 && len(missing) > 0 {
		return nil, fmt.Errorf("%w: unknown split algorithm %q", ErrConfig, missing[0])
	}
	rep := &Results[SplitResult]{}
	for _, n := range nps {
		for _, v := range fig.Variants {
			cfg := base
			cfg.NP = n
			v.apply(&cfg)
			for _, a := range missing {
				r := cfg.result(n, a, "auto")
				r.Skipped = "not registered in this build (have " + strings.Join(splitNames(), ", ") + ")"
				add(rep, cfg.OnRow, r)
			}
			if len(have) == 0 {
				continue
			}
			cfg.Algorithms = have
			r, err := RunSplit(ctx, cfg)
			if r != nil {
				rep.Rows = append(rep.Rows, r.Rows...)
				rep.Skipped = append(rep.Skipped, r.Skipped...)
			}
			if err != nil {
				return rep, fmt.Errorf("figure %s, %s: %w", fig.Name, v.Name(), err)
			}
		}
	}
	return rep, nil
}

// splitNames lists the registered split algorithms.
func splitNames() []string {
	var out []string
	for _, a := range scoll.SplitAlgorithms() {
		out = append(out, a.Name)
	}
	return out
}
