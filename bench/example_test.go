package bench_test

// The examples open as other packages' examples do (a call, then
// "if err != nil { panic(err) }"): each is shown alone in godoc, so none
// leans on a shared helper.

import (
	"context"
	"fmt"
	"os"

	"github.com/scoll/scoll/bench"
)

func ExampleParseSizes() {
	sizes, err := bench.ParseSizes("8:1K:x4,64KiB,16M")
	if err != nil {
		panic(err)
	}
	for _, s := range sizes {
		fmt.Print(bench.FormatSize(s), " ")
	}
	fmt.Println()
	// Output: 8 32 128 512 1K 64K 16M
}

// Run measures; Write prints the results. Timings vary, so this example
// prints only what does not.
func ExampleRun() {
	rep, err := bench.Run(context.Background(), bench.Config{
		Op: "allgather", Type: "float64", Common: bench.Common{NP: 4, Algorithms: []string{"ring"}, Sizes: []int{8, 1024}, Reps: 10},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, r := range rep.Rows {
		fmt.Println(r.Op, r.Algorithm, r.NP, r.Type, r.Bytes, r.Count, r.Iters)
	}
	// Output:
	// allgather ring 4 float64 8 1 10
	// allgather ring 4 float64 1024 128 10
}
