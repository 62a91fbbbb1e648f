package scoll_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/scoll/scoll"
)

// TestPaths: the shared-memory paths are algorithms the default choice
// takes by their rules, WithAlgorithm picks (natively where the transport
// offers them, as their message schedules elsewhere) and WithoutAlgorithm
// excludes; and every way gives the right sums.
func TestPaths(t *testing.T) {
	cpus := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		name  string
		p     int
		count int
		opts  []scoll.CallOption
		want  string // "exchange", "meet", "plan:<name>", "plan:*" any schedule
	}{
		{"default small, a CPU each", cpus, 4, nil, "exchange"},
		{"default small, more ranks than CPUs", cpus + 2, 4, nil, "meet"},
		{"default large", cpus, 1 << 16, nil, "plan:*"},
		{"exchange excluded", cpus, 4, []scoll.CallOption{scoll.WithoutAlgorithm("exchange")}, "plan:*"},
		{"meet excluded", cpus + 2, 4, []scoll.CallOption{scoll.WithoutAlgorithm("meet")}, "plan:*"},
		{"exchange named", cpus, 4, []scoll.CallOption{scoll.WithAlgorithm("exchange")}, "exchange"},
		{"exchange named, input beyond its slots", cpus, 1 << 16, []scoll.CallOption{scoll.WithAlgorithm("exchange")}, "plan:exchange"},
		{"exchange named, no exchanges with more ranks than CPUs", cpus + 2, 4, []scoll.CallOption{scoll.WithAlgorithm("exchange")}, "plan:exchange"},
		{"meet named", cpus, 1 << 16, []scoll.CallOption{scoll.WithAlgorithm("meet")}, "meet"},
		{"ring named", cpus, 4, []scoll.CallOption{scoll.WithAlgorithm("ring")}, "plan:ring"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.p < 2 {
				t.Skip("one rank")
			}
			err := scoll.Run(context.Background(), tc.p, func(ctx context.Context, c *scoll.Comm) error {
				got, err := scoll.PathForTest(c, "allreduce", tc.count, tc.opts...)
				if err != nil {
					return err
				}
				if got != tc.want && !(tc.want == "plan:*" && strings.HasPrefix(got, "plan:") &&
					got != "plan:exchange" && got != "plan:meet") {
					t.Errorf("rank %d: %s, want %s", c.Rank(), got, tc.want)
				}
				send := make([]float32, tc.count)
				for i := range send {
					send[i] = float32(c.Rank() + i)
				}
				recv := make([]float32, tc.count)
				if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, tc.opts...); err != nil {
					return err
				}
				p := float32(c.Size())
				for i, v := range recv {
					if want := p*(p-1)/2 + p*float32(i); v != want {
						t.Errorf("rank %d: recv[%d] = %g, want %g", c.Rank(), i, v, want)
						break
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWithoutAlgorithmErrors: an unknown name, or a name both chosen and
// excluded, fails with ErrInvalidArgument; excluding every algorithm that
// fits fails with ErrUnsupported.
func TestWithoutAlgorithmErrors(t *testing.T) {
	var all []string
	for _, a := range scoll.Algorithms("bcast") {
		all = append(all, a.Name)
	}
	err := scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		buf := make([]int32, 8)
		for _, tc := range []struct {
			opts []scoll.CallOption
			want error
		}{
			{[]scoll.CallOption{scoll.WithoutAlgorithm("no-such")}, scoll.ErrInvalidArgument},
			{[]scoll.CallOption{scoll.WithAlgorithm("ring"), scoll.WithoutAlgorithm("ring")}, scoll.ErrInvalidArgument},
			{[]scoll.CallOption{scoll.WithoutAlgorithm(all...)}, scoll.ErrUnsupported},
		} {
			if err := scoll.Bcast(ctx, c, buf, 0, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("rank %d: %v, want %v", c.Rank(), err, tc.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
