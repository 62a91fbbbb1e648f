package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/workload"
)

// embeddingHelp is the help of scoll sim --embedding.
const embeddingHelp = "print, instead of times, the embedding of each algorithm's communication graph on the topology by --mapping " +
	"(Heath-Solomonik notes sec. 3.1.2): load, dilation (max and mean hops of an edge), congestion (edges per link, " +
	"an edge per ordered pair of ranks that talk), stage_congestion (the most messages on a link in one stage) and " +
	"model_congestion (the stage model's, at least 1); docs/embeddings.md"

// embedRow is the embedding of one algorithm's communication graph.
type embedRow struct {
	Topology        string  `json:"topology"`
	Mapping         string  `json:"mapping"`
	Ranks           int     `json:"ranks"`
	Op              string  `json:"op"`
	Algorithm       string  `json:"algorithm"`
	Bytes           int     `json:"bytes"`
	Load            int     `json:"load"`
	Dilation        int     `json:"dilation"`
	MeanDilation    float64 `json:"mean_dilation"`
	Congestion      float64 `json:"congestion"`
	StageCongestion float64 `json:"stage_congestion"`
	ModelCongestion float64 `json:"model_congestion"`
	Edges           int     `json:"edges"`
	Messages        int64   `json:"messages"`
}

var embedFormat = rowFormat[embedRow]{
	columns: []string{"topology", "mapping", "ranks", "op", "algorithm", "bytes", "load", "dilation", "mean_dilation",
		"congestion", "stage_congestion", "model_congestion", "edges", "messages"},
	csv: func(r embedRow) []string {
		g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
		return []string{r.Topology, r.Mapping, strconv.Itoa(r.Ranks), r.Op, r.Algorithm, strconv.Itoa(r.Bytes), strconv.Itoa(r.Load),
			strconv.Itoa(r.Dilation), g(r.MeanDilation), g(r.Congestion), g(r.StageCongestion), g(r.ModelCongestion),
			strconv.Itoa(r.Edges), strconv.FormatInt(r.Messages, 10)}
	},
	cells: func(r embedRow) string {
		return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%.3f\t%s\t%s\t%s\t%d\t%d\t", r.Topology, r.Mapping, r.Ranks, r.Op, r.Algorithm, fmtBytes(float64(r.Bytes)),
			r.Load, r.Dilation, r.MeanDilation, fmtCount(r.Congestion), fmtCount(r.StageCongestion), fmtCount(r.ModelCongestion), r.Edges, r.Messages)
	},
}

// simEmbedding writes the embedding rows of the named algorithms at the
// given sizes: w is the workload without its algorithm and bytes, cfg the
// stage model's network. With skip, an algorithm that cannot run is
// reported on stderr and left out.
func simEmbedding(out, stderr io.Writer, format, mapSpec string, cfg sim.Config, w workload.Workload, names []string, sizes []int, skip bool) error {
	var rows []embedRow
	for _, name := range names {
		for _, n := range sizes {
			w.Algorithm, w.Bytes = name, n
			gen, err := w.Generator()
			if err != nil {
				if skip {
					fmt.Fprintf(stderr, "scoll sim: skipping %s: %v\n", name, err)
					break
				}
				return err
			}
			emb, err := sim.Embed(cfg, w.Size, gen)
			if err != nil {
				return fmt.Errorf("%s at %d B: %w", name, n, err)
			}
			cfg.Stages = false
			st, err := sim.StageModel(cfg, w.Size, 1, gen)
			if err != nil {
				return fmt.Errorf("%s at %d B: %w", name, n, err)
			}
			g := emb.Graph
			rows = append(rows, embedRow{Topology: cfg.Topology.String(), Mapping: mapSpec, Ranks: w.Size, Op: w.Coll.String(), Algorithm: name,
				Bytes: n, Load: g.Load, Dilation: g.Dilation, MeanDilation: g.MeanDilation, Congestion: g.Congestion,
				StageCongestion: emb.MaxStageCongestion, ModelCongestion: st.MaxCongestion, Edges: g.Edges, Messages: emb.Messages})
		}
	}
	return writeRows(out, format, rows, embedFormat)
}
