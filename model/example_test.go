package model_test

import (
	"fmt"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

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
