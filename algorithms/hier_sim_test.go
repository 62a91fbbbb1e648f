package algorithms_test

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// nodeMapping places rank r on node nodes[r]; unlike topology.Explicit it
// lets several ranks share a node, which sim's models accept through
// Config.Mapping (a message between two ranks of a node crosses no link).
type nodeMapping []int

func (m nodeMapping) Node(r int) int { return m[r] }

// TestHierSimulated runs the node-aware allreduce and bcast through the
// flow model and the embedding measure on a ring of 4 nodes carrying 4 ranks
// each (consecutive and interleaved), and checks that they load the links
// less than the flat default choice. (Their times are logged, not compared:
// the models charge a message inside a node like one over a link, so the
// cheaper shared memory that makes the scheme pay is not modelled.)
func TestHierSimulated(t *testing.T) {
	const P, perNode = 16, 4
	torus, err := topology.NewTorus(P / perNode)
	if err != nil {
		t.Fatal(err)
	}
	block, inter := make([]int, P), make([]int, P)
	for r := range P {
		block[r], inter[r] = r/perNode, r%(P/perNode)
	}
	for _, c := range []schedule.Collective{schedule.Allreduce, schedule.Bcast} {
		for _, nodes := range [][]int{block, inter} {
			cfg := sim.FlowConfig{Config: sim.Config{Topology: torus, Mapping: nodeMapping(nodes),
				Alpha: 1e-6, Delta: 1e-9, Ports: sim.MultiPort}}
			p := algorithms.Params{Spec: schedule.Spec{Coll: c, Size: P, Count: 1 << 16, Root: 5},
				Commutative: true, ElemSize: 4, Nodes: nodes}
			hier, ok := algorithms.Lookup(c, algorithms.Hier)
			if !ok {
				t.Fatal("no hier")
			}
			if sel := algorithms.Select(&p, algorithms.InProcess, algorithms.Caps{}); sel != hier {
				t.Errorf("%s nodes %v: Select = %v, want hier", c, nodes, sel)
			}
			q := p
			q.Nodes = nil
			flat := algorithms.Select(&q, algorithms.InProcess, algorithms.Caps{})
			th, err := sim.FlowModel(cfg, P, 4, hier.Generator(p))
			if err != nil {
				t.Fatalf("%s hier: %v", c, err)
			}
			tf, err := sim.FlowModel(cfg, P, 4, flat.Generator(q))
			if err != nil {
				t.Fatalf("%s %s: %v", c, flat.Name, err)
			}
			eh, err := sim.Embed(cfg.Config, P, hier.Generator(p))
			if err != nil {
				t.Fatal(err)
			}
			ef, err := sim.Embed(cfg.Config, P, flat.Generator(q))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s nodes %v: hier %.1f µs, link load %g, graph %+v; %s %.1f µs, link load %g, graph %+v",
				c, nodes, th.Time*1e6, th.MaxCongestion, eh.Graph, flat.Name, tf.Time*1e6, tf.MaxCongestion, ef.Graph)
			if eh.Graph.Load != perNode {
				t.Errorf("%s: embedding load %d, want %d ranks a node", c, eh.Graph.Load, perNode)
			}
			// Only the 4 leaders cross links, one flow per link at a time.
			if th.MaxCongestion > 1 || !(th.MaxCongestion < tf.MaxCongestion) || !(eh.Graph.Congestion < ef.Graph.Congestion) {
				t.Errorf("%s nodes %v: hier link load %g (graph %g), flat %s %g (graph %g)", c, nodes,
					th.MaxCongestion, eh.Graph.Congestion, flat.Name, tf.MaxCongestion, ef.Graph.Congestion)
			}
		}
	}
}
