package model_test

import (
	"testing"

	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// BenchmarkCriticalPath evaluates both critical paths of a few allreduce
// and bcast algorithms on 1024 ranks.
func BenchmarkCriticalPath(b *testing.B) {
	for _, tc := range []struct {
		coll schedule.Collective
		name string
	}{
		{schedule.Allreduce, "recursive-doubling"},
		{schedule.Allreduce, "ring"},
		{schedule.Bcast, "two-tree"},
		{schedule.Bcast, "linear"},
	} {
		b.Run(tc.coll.String()+"/"+tc.name, func(b *testing.B) {
			g := gen(b, tc.coll, tc.name, 1024, 16384)
			p, _ := model.ParamsByName("infiniband")
			for b.Loop() {
				if _, err := model.CriticalPath(1024, 4, g, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
