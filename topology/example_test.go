package topology_test

// The examples open as other packages' examples do (a call, then
// "if err != nil { panic(err) }"): each is shown alone in godoc, so none
// leans on a shared helper.

import (
	"fmt"

	"github.com/scoll/scoll/topology"
)

// Route a message across a ring of 8 (half a ring: split both ways) and
// across leaf switches of a tapered Clos network.
func Example() {
	ring, err := topology.Parse("torus:8")
	if err != nil {
		panic(err)
	}
	var buf []topology.Hop // reused across calls: no allocations
	buf = ring.Route(0, 4, buf)
	for i, h := range buf {
		from, to := ring.Endpoint(h.Link)
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("%v→%v %.1f", from, to, h.Frac)
	}
	fmt.Println()

	clos, err := topology.Parse("clos:R=32,T=16,mu=0.25")
	if err != nil {
		panic(err)
	}
	fmt.Println(clos, clos.Nodes(), "nodes, bisection", clos.Bisection())
	buf = clos.Route(0, 100, buf)
	for _, h := range buf {
		from, to := clos.Endpoint(h.Link)
		fmt.Printf("%v→%v %.2f (capacity %g)\n", from, to, h.Frac, clos.Capacity(h.Link))
	}
	// Output:
	// n0→n1 0.5, n1→n2 0.5, n2→n3 0.5, n3→n4 0.5, n0→n7 0.5, n7→n6 0.5, n6→n5 0.5, n5→n4 0.5
	// clos:R=32,T=16,mu=0.25 512 nodes, bisection 64
	// n0→s0 1.00 (capacity 1)
	// s0→s32 0.25 (capacity 1)
	// s0→s33 0.25 (capacity 1)
	// s0→s34 0.25 (capacity 1)
	// s0→s35 0.25 (capacity 1)
	// s32→s6 0.25 (capacity 1)
	// s33→s6 0.25 (capacity 1)
	// s34→s6 0.25 (capacity 1)
	// s35→s6 0.25 (capacity 1)
	// s6→n100 1.00 (capacity 1)
}

// Place ranks on a torus in Z order.
func ExampleMorton() {
	torus, _ := topology.Parse("torus:4x4")
	m, err := topology.Morton(torus)
	if err != nil {
		panic(err)
	}
	var nodes []int
	for r := range 8 {
		nodes = append(nodes, m.Node(r))
	}
	fmt.Println(nodes)
	// Output: [0 1 4 5 2 3 6 7]
}
