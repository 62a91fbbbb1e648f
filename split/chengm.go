package split

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// ChengM lists the item limits M of the cheng-M algorithms.
var ChengM = []int{128, 512, 2048, 8192}

func init() {
	for _, m := range ChengM {
		Register(Info{
			Name:   fmt.Sprintf("cheng-%d", m),
			Doc:    fmt.Sprintf("cheng with p = ⌈n/%d⌉ sorting ranks: at most %d items per sorter (Moody's Cheng%d)", m, m, m),
			Source: "Moody, Ahn, de Supinski 2011, sec. 3.2; Sack 2011, sec. 2.3.1",
			Phases: []string{"collect", "splitters", "exchange", "merge", "allgather", "broadcast", "records", "scatter", "rows", "links", "build"},
			Run: func(ctx context.Context, c Conn, me Entry, o *Options, st *Stats) (*Sorted, error) {
				oo := *o
				oo.Sorters = (c.Size() + m - 1) / m
				return runCheng(ctx, c, me, &oo, st)
			},
			Refuse: func(o *Options) error {
				if o.Sorters != 0 {
					return fmt.Errorf("%w: cheng-%d sets its own number of sorters", errs.InvalidArgument, m)
				}
				return nil
			},
		})
	}
}
