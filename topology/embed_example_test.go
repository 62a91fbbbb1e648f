package topology_test

import (
	"fmt"

	"github.com/scoll/scoll/topology"
)

// A ring of 16 ranks on a 4×4 mesh: stretched in XYZ order, dilation 1
// along the ring mapping's Hamiltonian cycle (Fig. 5 of the
// Heath–Solomonik notes).
func ExampleEmbed() {
	mesh, err := topology.Parse("mesh:4x4")
	if err != nil {
		panic(err)
	}
	for _, spec := range []string{"xyz", "ring"} {
		m, err := topology.ParseMapping(spec, mesh, 16)
		if err != nil {
			panic(err)
		}
		e, err := topology.Embed(mesh, m, 16, topology.RingPairs(16))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: load %d, dilation %d, congestion %g\n", spec, e.Load, e.Dilation, e.Congestion)
	}
	// Output:
	// xyz: load 1, dilation 6, congestion 2
	// ring: load 1, dilation 1, congestion 1
}
