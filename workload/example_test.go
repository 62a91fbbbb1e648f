package workload_test

// The examples open as other packages' examples do (a call, then
// "if err != nil { panic(err) }"): each is shown alone in godoc, so none
// leans on a shared helper.

import (
	"fmt"

	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
)

// Hoefler and Moor's Fig. 5 trade-off for one size: an allreduce of 8 bytes
// on 64 ranks of their InfiniBand machine. The registered cost, the
// round-synchronous count and the critical path agree except for the ring:
// with 2 elements on 64 ranks most of its blocks are empty, so its ranks
// have few rounds, but each block still passes the ring hop by hop, which
// only the critical path sees. Energy is dominated by the static power of
// 64 network interfaces. The shared-memory paths (exchange, meet) cost one
// or two hand-offs natively (cost) but all of their messages over a network
// (rounds, critical). LogGP charges a rank's send and receive overheads on
// its one CPU, so rounds of many messages (bucket6, rd-paths, exchange) cost
// more there relative to the other columns.
func ExampleEvaluate() {
	p, err := model.ParamsByName("infiniband")
	if err != nil {
		panic(err)
	}
	rows, err := workload.Evaluate(schedule.Allreduce, 64, 8, p)
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
	// bucket6              1080.0    100.1    180.1    189.5            0.0    5764.8   192
	// chain                 110.1    110.1    110.1    129.4            0.0    3533.3   352
	// clairvoyant           120.1    120.1    120.1    120.1            0.0    3844.3   192
	// exchange              630.4    630.4    630.4    593.1            0.0   20238.7  2016
	// hier                   60.0     60.0     60.0     60.0            0.0    1927.7   192
	// meet                 1260.7   1260.7   1260.7    603.1            0.0   40345.8  2016
	// rabenseifner          120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-halving            120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-optimal            120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-path               120.0    120.1    120.1    120.1            0.0    3844.2   224
	// rd-paths              360.0    120.1    120.1    124.8            0.0    3844.1   224
	// recursive-doubling     60.0     60.0     60.0     60.0    BF     60.0    1927.5   192
	// reduce-bcast          120.1    120.1    120.1    120.1  2xBT    120.1    3844.3   192
	// ring                 1260.0     60.0   1260.4   1260.3            0.0   40335.9   128
}
