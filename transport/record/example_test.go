package record_test

import (
	"fmt"
	"strings"

	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/scoll/scoll/transport/record"
)

// A trace written by hand: rank 0 sends 1 MB to ranks 1 and 2 in one
// round, and they answer with 8 bytes each. Its replay is simulated under
// the stage model on a crossbar: rank 0's two sends load its link twice
// (congestion 2) and go one after the other through its one port.
func ExampleRead() {
	tr, err := record.Read(strings.NewReader(`scoll-trace 1
ranks 3
rank 0
s1:1000000 s2:1000000
r1:8 r2:8
rank 1
r0:1000000
s0:8
rank 2
r0:1000000
s0:8
end
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tr.Messages(), "messages,", tr.Bytes(), "bytes,", tr.Rounds(), "rounds")
	topo, _ := topology.Parse("crossbar:3")
	cfg := sim.Config{Topology: topo, Alpha: 1e-6, Delta: 1e-9} // 1 GB/s links
	res, err := sim.StageModel(cfg, tr.Size, 1, tr.Generator())
	fmt.Printf("stage model: %.4g s, %v\n", res.Time, err)
	// Output:
	// 4 messages, 2000016 bytes, 2 rounds
	// stage model: 0.004004 s, <nil>
}
