package scoll_test

// Benchmarks of the in-process world itself at large sizes: what Run costs
// before and after the ranks' work (see docs/world-scaling.md). Every
// iteration is one Run; ns/op is the time of the whole Run. The largest
// sizes take a second or more per Run, so select one size and few
// iterations, e.g.
//
//	go test -run '^$' -bench 'RunEmpty/P=65536$' -benchtime 5x -timeout 0 .
//
// -scoll.ranks replaces the sizes (-scoll.ranks 8192,1048576).

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll"
)

var worldRanksFlag = flag.String("scoll.ranks", "4096,16384,65536,262144", "comma-separated world sizes of the world-scale benchmarks")

func worldScaleRanks(b *testing.B) []int {
	var ps []int
	for _, f := range strings.Split(*worldRanksFlag, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			b.Fatalf("-scoll.ranks: bad size %q", f)
		}
		ps = append(ps, p)
	}
	return ps
}

// BenchmarkRunEmpty measures Run with a function that returns at once:
// making the world and its communicators, starting and ending every rank,
// and closing the world.
func BenchmarkRunEmpty(b *testing.B) {
	for _, p := range worldScaleRanks(b) {
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			ctx := context.Background()
			empty := func(context.Context, *scoll.Comm) error { return nil }
			for b.Loop() {
				if err := scoll.Run(ctx, p, empty); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRunBarrierAllreduce measures Run with a function in which every
// rank calls one Barrier and one Allreduce of one int64 (8 bytes), and
// checks the sum: a world of that size is usable, not only cheap to start.
func BenchmarkRunBarrierAllreduce(b *testing.B) {
	for _, p := range worldScaleRanks(b) {
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			ctx := context.Background()
			want := int64(p) * int64(p-1) / 2
			fn := func(ctx context.Context, c *scoll.Comm) error {
				if err := c.Barrier(ctx); err != nil {
					return err
				}
				recv := make([]int64, 1)
				if err := scoll.Allreduce(ctx, c, []int64{int64(c.Rank())}, recv, scoll.Sum); err != nil {
					return err
				}
				if recv[0] != want {
					return fmt.Errorf("rank %d: sum %d, want %d", c.Rank(), recv[0], want)
				}
				return nil
			}
			for b.Loop() {
				if err := scoll.Run(ctx, p, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
