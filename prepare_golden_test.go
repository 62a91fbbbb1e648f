package scoll_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/golden"
)

// prepCase is one call prepared on every rank of a world of p ranks: init
// makes it persistent (no rank communicates), so what each rank reports —
// the algorithm it would run or its own argument error — depends on its
// arguments alone.
type prepCase struct {
	name string
	p    int
	init func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error)
}

// prepColls are the collectives of the default-choice cases.
var prepColls = []string{"bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall",
	"reducescatter", "scan", "exscan", "gatherv", "scatterv", "allgatherv", "alltoallv", "reducescatterv", "barrier"}

// initColl prepares coll on float64 buffers of n elements per block, root 0
// where the collective has one, with op for the reducing ones.
func initColl(ctx context.Context, c *scoll.Comm, coll string, n int, inPlace bool, op scoll.Op, opts ...scoll.CallOption) (*scoll.Persistent, error) {
	p := c.Size()
	f := func(k int) []float64 { return make([]float64, k) }
	one, all := f(n), f(n*p)
	if inPlace {
		one = nil
	}
	counts := make([]int, p)
	for i := range counts {
		counts[i] = n
	}
	switch coll {
	case "bcast":
		return scoll.BcastInit(ctx, c, f(n), 0, opts...)
	case "reduce":
		return scoll.ReduceInit(ctx, c, one, f(n), op, 0, opts...)
	case "allreduce":
		return scoll.AllreduceInit(ctx, c, one, f(n), op, opts...)
	case "gather":
		return scoll.GatherInit(ctx, c, one, all, 0, opts...)
	case "scatter":
		return scoll.ScatterInit(ctx, c, all, one, 0, opts...)
	case "allgather":
		return scoll.AllgatherInit(ctx, c, one, all, opts...)
	case "alltoall":
		var send []float64
		if !inPlace {
			send = f(n * p)
		}
		return scoll.AlltoallInit(ctx, c, send, all, opts...)
	case "reducescatter":
		return scoll.ReduceScatterBlockInit(ctx, c, all, one, op, opts...)
	case "scan":
		return scoll.ScanInit(ctx, c, one, f(n), op, opts...)
	case "exscan":
		return scoll.ExscanInit(ctx, c, one, f(n), op, opts...)
	case "gatherv":
		return scoll.GathervInit(ctx, c, one, all, counts, nil, 0, opts...)
	case "scatterv":
		return scoll.ScattervInit(ctx, c, all, one, counts, nil, 0, opts...)
	case "allgatherv":
		return scoll.AllgathervInit(ctx, c, one, all, counts, nil, opts...)
	case "alltoallv":
		return scoll.AlltoallvInit(ctx, c, f(n*p), counts, nil, all, counts, nil, opts...)
	case "reducescatterv":
		var send []float64
		if !inPlace {
			send = all
		}
		return scoll.ReduceScatterInit(ctx, c, send, f(n), counts, op, opts...)
	case "barrier":
		return scoll.BarrierInit(ctx, c, opts...)
	}
	return nil, fmt.Errorf("no collective %q", coll)
}

func prepCases() []prepCase {
	var cases []prepCase
	add := func(name string, p int, init func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error)) {
		cases = append(cases, prepCase{name, p, init})
	}
	nonComm := scoll.UserOp(func(inout, in []float64) {}, false)
	// The default choice.
	for _, coll := range prepColls {
		for _, p := range []int{1, 2, 3, 4, 7, 8, 16, 64} {
			for _, n := range []int{0, 1, 7, 1000, 40000} {
				add(fmt.Sprintf("%s p=%d n=%d", coll, p, n), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
					return initColl(ctx, c, coll, n, false, scoll.Sum)
				})
			}
		}
	}
	// Options, operators and in place.
	for _, coll := range prepColls {
		for _, p := range []int{4, 6, 8} {
			n := 500
			add(fmt.Sprintf("%s p=%d in place", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				return initColl(ctx, c, coll, n, true, scoll.Sum)
			})
			add(fmt.Sprintf("%s p=%d non-commutative", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				return initColl(ctx, c, coll, n, false, nonComm)
			})
			add(fmt.Sprintf("%s p=%d max", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				return initColl(ctx, c, coll, n, false, scoll.Max)
			})
			add(fmt.Sprintf("%s p=%d radix 4 segment 1 KiB", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				return initColl(ctx, c, coll, n, false, scoll.Sum, scoll.WithRadix(4), scoll.WithSegmentSize(1024))
			})
			add(fmt.Sprintf("%s p=%d grid", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				return initColl(ctx, c, coll, n, false, scoll.Sum, scoll.WithGrid(2, p/2))
			})
			add(fmt.Sprintf("%s p=%d placement", coll, p), p, func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error) {
				nodes := make([]int, p)
				for i := range nodes {
					nodes[i] = 2 * i
				}
				return initColl(ctx, c, coll, n, false, scoll.Sum, scoll.WithPlacement([]int{4, p / 2}, nodes))
			})
		}
	}
	// Argument errors.
	i32 := func(n int) []int32 { return make([]int32, n) }
	bad := func(name string, p int, fn func(ctx context.Context, c *scoll.Comm) (*scoll.Persistent, error)) {
		add("error: "+name, p, fn)
	}
	type pe = *scoll.Persistent
	bad("bcast root -1", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) { return scoll.BcastInit(ctx, c, i32(2), -1) })
	bad("bcast root 3", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) { return scoll.BcastInit(ctx, c, i32(2), 3) })
	bad("reduce lengths at root", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceInit(ctx, c, i32(2), i32(3), scoll.Sum, 1)
	})
	bad("allreduce lengths", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, c, i32(2), i32(3), scoll.Sum)
	})
	bad("scan lengths", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScanInit(ctx, c, i32(2), i32(3), scoll.Sum)
	})
	bad("exscan lengths", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ExscanInit(ctx, c, i32(4), i32(3), scoll.Sum)
	})
	bad("gather in place not a multiple", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GatherInit(ctx, c, nil, i32(7), 2)
	})
	bad("gather recv length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GatherInit(ctx, c, i32(2), i32(7), 0)
	})
	bad("scatter in place not a multiple", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScatterInit(ctx, c, i32(7), nil, 1)
	})
	bad("scatter send length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScatterInit(ctx, c, i32(7), i32(2), 0)
	})
	bad("allgather in place not a multiple", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgatherInit(ctx, c, nil, i32(7))
	})
	bad("allgather recv length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgatherInit(ctx, c, i32(2), i32(7))
	})
	bad("alltoall not a multiple", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallInit(ctx, c, i32(4), i32(4))
	})
	bad("alltoall lengths", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallInit(ctx, c, i32(3), i32(6))
	})
	bad("reducescatter in place not a multiple", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceScatterBlockInit(ctx, c, nil, i32(7), scoll.Sum)
	})
	bad("reducescatter send length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceScatterBlockInit(ctx, c, i32(7), i32(2), scoll.Sum)
	})
	bad("gatherv counts length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GathervInit(ctx, c, i32(1), i32(4), []int{1, 1}, nil, 0)
	})
	bad("gatherv negative count", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GathervInit(ctx, c, i32(1), i32(4), []int{1, -1, 1}, nil, 0)
	})
	bad("gatherv displacements length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GathervInit(ctx, c, i32(1), i32(4), []int{1, 1, 1}, []int{0, 1}, 0)
	})
	bad("gatherv recv too short", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GathervInit(ctx, c, i32(1), i32(2), []int{1, 1, 1}, nil, 1)
	})
	bad("gatherv send length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.GathervInit(ctx, c, i32(2), i32(3), []int{1, 1, 1}, nil, 1)
	})
	bad("allgatherv overlapping displacements", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgathervInit(ctx, c, i32(2), i32(6), []int{2, 2, 2}, []int{0, 1, 4})
	})
	bad("allgatherv negative displacement", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgathervInit(ctx, c, i32(2), i32(6), []int{2, 2, 2}, []int{0, -2, 4})
	})
	bad("scatterv send too short", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScattervInit(ctx, c, i32(3), i32(2), []int{2, 2, 2}, nil, 0)
	})
	bad("scatterv recv length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScattervInit(ctx, c, i32(6), i32(3), []int{2, 2, 2}, nil, 2)
	})
	bad("alltoallv in place", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallvInit(ctx, c, nil, []int{2, 2}, nil, i32(4), []int{2, 2}, nil)
	})
	bad("alltoallv counts", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallvInit(ctx, c, i32(4), []int{2}, nil, i32(4), []int{2, 2}, nil)
	})
	bad("alltoallv send too short", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallvInit(ctx, c, i32(3), []int{2, 2}, nil, i32(4), []int{2, 2}, nil)
	})
	bad("alltoallv recv too short", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallvInit(ctx, c, i32(4), []int{2, 2}, nil, i32(3), []int{2, 2}, nil)
	})
	bad("alltoallv self counts", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AlltoallvInit(ctx, c, i32(4), []int{2, 2}, nil, i32(5), []int{3, 2}, nil)
	})
	bad("reducescatterv in place sum", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceScatterInit(ctx, c, nil, i32(5), []int{2, 2, 2}, scoll.Sum)
	})
	bad("reducescatterv send sum", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceScatterInit(ctx, c, i32(5), i32(2), []int{2, 2, 2}, scoll.Sum)
	})
	bad("reducescatterv recv length", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceScatterInit(ctx, c, i32(6), i32(3), []int{2, 2, 2}, scoll.Sum)
	})
	bad("band on floats", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, c, make([]float64, 2), make([]float64, 2), scoll.Band)
	})
	bad("zero op", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ReduceInit(ctx, c, i32(2), i32(2), scoll.Op{}, 0)
	})
	bad("user op of another type", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.ScanInit(ctx, c, i32(2), i32(2), nonComm)
	})
	bad("unknown algorithm", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, c, i32(2), i32(2), scoll.Sum, scoll.WithAlgorithm("no-such"))
	})
	bad("non-commutative op on a commutative-only algorithm", 4, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, c, make([]float64, 8), make([]float64, 8), nonComm, scoll.WithAlgorithm(commutativeOnly()))
	})
	bad("power-of-two algorithm on 3 ranks", 3, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgatherInit(ctx, c, i32(2), i32(6), scoll.WithAlgorithm(powerOfTwoOnly()))
	})
	bad("negative segment size", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, c, i32(2), i32(2), scoll.Sum, scoll.WithSegmentSize(-8))
	})
	bad("radix 1", 2, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.BcastInit(ctx, c, i32(2), 0, scoll.WithRadix(1))
	})
	bad("grid of another size", 4, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgatherInit(ctx, c, i32(2), i32(8), scoll.WithGrid(3, 2))
	})
	bad("placement with a node twice", 4, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllgatherInit(ctx, c, i32(2), i32(8), scoll.WithPlacement([]int{4, 4}, []int{0, 1, 1, 2}))
	})
	bad("nil communicator", 1, func(ctx context.Context, c *scoll.Comm) (pe, error) {
		return scoll.AllreduceInit(ctx, nil, i32(2), i32(2), scoll.Sum)
	})
	return cases
}

// chainErrCase is a blocking chain call whose arguments are wrong at rank 0,
// which reports its error (the others' outcome follows from it).
type chainErrCase struct {
	name string
	call func(ctx context.Context, c *scoll.Comm) error
}

func chainErrCases() []chainErrCase {
	i32 := func(n int) []int32 { return make([]int32, n) }
	ch := scoll.WithAlgorithm(scoll.ChainAlgorithm)
	return []chainErrCase{
		{"bcast root 3", func(ctx context.Context, c *scoll.Comm) error { return scoll.Bcast(ctx, c, i32(2), 3, ch) }},
		{"reduce lengths at root", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, i32(2), i32(3), scoll.Sum, 0, ch)
		}},
		{"allreduce lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, i32(2), i32(3), scoll.Sum, ch)
		}},
		{"allreduce float lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, make([]float64, 2), make([]float64, 3), scoll.Sum, ch)
		}},
		{"scan zero op", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scan(ctx, c, i32(2), i32(2), scoll.Op{}, ch)
		}},
		{"exscan lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Exscan(ctx, c, i32(2), i32(1), scoll.Sum, ch)
		}},
		{"gather in place not a multiple", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, nil, i32(7), 0, ch)
		}},
		{"gather recv length", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, i32(2), i32(7), 0, ch)
		}},
		{"scatter in place not a multiple", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatter(ctx, c, i32(7), nil, 0, ch)
		}},
		{"scatter send length", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatter(ctx, c, i32(7), i32(2), 0, ch)
		}},
		{"bcast negative segment size", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, i32(2), 0, ch, scoll.WithSegmentSize(-1))
		}},
		{"reduce radix 1", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, i32(2), i32(2), scoll.Sum, 0, ch, scoll.WithRadix(1))
		}},
		{"scan grid of another size", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scan(ctx, c, i32(2), i32(2), scoll.Sum, ch, scoll.WithGrid(2, 2))
		}},
		{"gather bad placement", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, i32(2), i32(6), 0, ch, scoll.WithPlacement([]int{3}, []int{0, 0, 1}))
		}},
		{"double scan lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleScan(ctx, c, i32(2), i32(2), i32(1), scoll.Sum)
		}},
		{"double exscan unknown algorithm", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleExscan(ctx, c, i32(2), i32(2), i32(2), scoll.Sum, scoll.WithAlgorithm("ring"))
		}},
	}
}

// TestPrepareGolden compares what every rank prepares — the default
// algorithm for each collective, size, count and option, and the argument
// errors, persistent and chain — with testdata/prepare.golden. Run with
// -update to rewrite it after an intended change.
func TestPrepareGolden(t *testing.T) {
	t.Parallel()
	// The default takes the shared-memory paths by the number of CPUs
	// (meet when the ranks outnumber them): fix it, so that the file is the
	// same on every machine.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var out bytes.Buffer
	ctx := context.Background()
	for _, pc := range prepCases() {
		res := make([]string, pc.p)
		err := scoll.Run(ctx, pc.p, func(ctx context.Context, c *scoll.Comm) error {
			p, err := pc.init(ctx, c)
			if err != nil {
				// Without the rank the error starts with, so that ranks
				// with the same error read as one.
				res[c.Rank()] = "error " + strings.TrimPrefix(err.Error(), fmt.Sprintf("rank %d: ", c.Rank()))
			} else {
				res[c.Rank()] = p.Algorithm()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", pc.name, err)
		}
		fmt.Fprintf(&out, "%s: %s\n", pc.name, summary(res))
	}
	for _, cc := range chainErrCases() {
		var got string
		_ = scoll.Run(ctx, 3, func(ctx context.Context, c *scoll.Comm) error {
			err := cc.call(ctx, c)
			if c.Rank() == 0 {
				got = fmt.Sprint(err)
			}
			return nil
		})
		fmt.Fprintf(&out, "chain error: %s: %s\n", cc.name, got)
	}
	golden.Check(t, "testdata/prepare.golden", out.Bytes())
}

// summary renders every rank's result: one when all agree, else each.
func summary(res []string) string {
	same := true
	for _, r := range res {
		same = same && r == res[0]
	}
	if same {
		return res[0]
	}
	var b strings.Builder
	for i, r := range res {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "rank %d: %s", i, r)
	}
	return b.String()
}
