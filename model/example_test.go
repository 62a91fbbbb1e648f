package model_test

import (
	"fmt"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// Hoefler and Moor's Fig. 5 trade-off for one size: an allreduce of 8 bytes
// on 64 ranks of their InfiniBand machine. The registered cost, the
// round-synchronous count and the critical path agree except for the ring:
// with 2 elements on 64 ranks most of its blocks are empty, so its ranks
// have few rounds, but each block still passes the ring hop by hop, which
// only the critical path sees. Energy is dominated by the static power of
// 64 network interfaces.
func ExampleEvaluate() {
	p, err := model.ParamsByName("infiniband")
	if err != nil {
		panic(err)
	}
	rows, err := model.Evaluate(schedule.Allreduce, 64, 8, p)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%-18s %8s %8s %8s %8s %5s %8s %9s %5s\n",
		"algorithm", "cost", "rounds", "critical", "LogGP", "form", "form", "energy", "mem")
	fmt.Printf("%-18s %8s %8s %8s %8s %5s %8s %9s %5s\n", "", "µs", "µs", "µs", "µs", "", "µs", "µJ", "B")
	for _, r := range rows {
		fmt.Printf("%-18s %8.1f %8.1f %8.1f %8.1f %5s %8.1f %9.1f %5.0f\n", r.Algorithm, r.Cost*1e6, r.Counted*1e6,
			r.Critical*1e6, r.CriticalLogGP*1e6, r.Form, r.FormTime*1e6, r.Energy*1e6, r.Memory)
	}
	// Output:
	// algorithm              cost   rounds critical    LogGP  form     form    energy   mem
	//                          µs       µs       µs       µs             µs        µJ     B
	// allgather-reduce       60.4     60.4     60.4     60.4   B~F     60.4    1938.7   192
	// bucket                180.0     90.1    180.1    180.1            0.0    5765.0   192
	// bucket3               540.0     90.1    180.1    180.1            0.0    5765.0   192
	// bucket6              1080.0    100.1    180.1    180.1            0.0    5764.8   192
	// rabenseifner          120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-halving            120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-optimal            120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-path               120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-paths              360.0    120.1    120.1    120.1            0.0    3844.1   224
	// recursive-doubling     60.0     60.0     60.0     60.0    BF     60.0    1927.5   192
	// reduce-bcast          120.1    120.1    120.1    120.1  2xBT    120.1    3844.3   192
	// ring                 1260.0     60.0   1260.4   1260.4            0.0   40335.9   128
}

// Counting the ring allgather on 8 ranks: 7 steps of one block each way.
func ExampleCount() {
	in, _ := algorithms.Lookup(schedule.Allgather, "ring")
	gen := in.Generator(algorithms.Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 8, Count: 256}, ElemSize: 4})
	c, err := model.Count(8, 4, gen)
	if err != nil {
		panic(err)
	}
	fmt.Println("messages per rank:", c.Max.MsgsSent, "rounds:", c.Rounds)
	fmt.Println("critical path:", c.CritMsgs, "messages,", c.CritBytes, "bytes")
	fmt.Printf("α-β-γ on curie: %.2f µs\n", 1e6*model.AlphaBetaGamma(c, model.Params{Alpha: 2.66e-6, Beta: 4.8179e-10}))
	// Output:
	// messages per rank: 7 rounds: 7
	// critical path: 7 messages, 7168 bytes
	// α-β-γ on curie: 22.57 µs
}

// The broadcast lower bound of Heath and Solomonik's notes for 1 MiB on 64
// ranks, and Marendic et al.'s optimal segment count for a reduction of
// 1 MiB whose first segment needs n = 6 rounds.
func ExampleBcastLowerBound() {
	const alpha, beta = 2e-6, 1e-9 // 2 µs, 1 GB/s
	s := float64(1 << 20)
	fmt.Printf("bound on 64 ranks: %.0f µs\n", 1e6*model.BcastLowerBound(alpha, beta, 64, s))
	n := model.NOpt(6, s, alpha, beta, 0)
	fmt.Printf("optimal segments for n = 6 rounds: %.1f\n", n)
	// Output:
	// bound on 64 ranks: 1284 µs
	// optimal segments for n = 6 rounds: 51.2
}
