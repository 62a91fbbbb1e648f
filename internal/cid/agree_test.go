package cid

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/scoll/scoll/internal/errs"
)

// reducer is an in-memory allreduce among n goroutines (one round at a
// time, like a collective).
type reducer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	arrived int
	gen     int
	acc     []int64
	out     []int64
	rounds  int
	fail    error // returned by every allreduce once set
}

func newReducer(n int) *reducer {
	r := &reducer{n: n}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *reducer) allreduce(_ context.Context, v []int64, least bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	if r.arrived == 0 {
		r.acc = slices.Clone(v)
	} else {
		for i, x := range v {
			if (x < r.acc[i]) == least && x != r.acc[i] {
				r.acc[i] = x
			}
		}
	}
	r.arrived++
	g := r.gen
	if r.arrived == r.n {
		r.out, r.arrived = r.acc, 0
		r.gen++
		r.rounds++
		r.cond.Broadcast()
	} else {
		for r.gen == g {
			r.cond.Wait()
		}
	}
	copy(v, r.out)
	return nil
}

// agreeAll runs Agree on every pool at once.
func agreeAll(pools []*Pool, as []Agreement, r *reducer) ([]uint32, []error) {
	ids := make([]uint32, len(pools))
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i := range pools {
		wg.Go(func() { ids[i], errs[i] = Agree(context.Background(), pools[i], as[i], r.allreduce) })
	}
	wg.Wait()
	return ids, errs
}

func same(n int, a Agreement) []Agreement {
	as := make([]Agreement, n)
	for i := range as {
		as[i] = a
		as[i].Max = slices.Clone(a.Max)
	}
	return as
}

func fresh(n int) []*Pool {
	ps := make([]*Pool, n)
	for i := range ps {
		ps[i] = &Pool{}
	}
	return ps
}

func TestAgree(t *testing.T) {
	cases := []struct {
		name   string
		used   [][]uint32 // ids each rank holds before
		want   uint32
		rounds int // allreduces
	}{
		{"fresh", [][]uint32{nil, nil, nil}, 1, 1},
		{"one rank ahead, free elsewhere", [][]uint32{{1}, nil, nil, nil}, 2, 2},
		{"largest proposal taken on another rank", [][]uint32{{1, 2}, {3}, nil}, 4, 3},
		{"one rank", [][]uint32{{1, 2, 5}}, 3, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := fresh(len(tc.used))
			for i, u := range tc.used {
				for _, id := range u {
					if !ps[i].Reserve(id) {
						t.Fatalf("setup: rank %d could not reserve %d", i, id)
					}
				}
			}
			r := newReducer(len(ps))
			ids, es := agreeAll(ps, same(len(ps), Agreement{Sig: 42}), r)
			for i := range ps {
				if es[i] != nil || ids[i] != tc.want {
					t.Fatalf("rank %d: id %d, err %v; want %d", i, ids[i], es[i], tc.want)
				}
				if ps[i].Reserve(tc.want) {
					t.Fatalf("rank %d: the agreed id is still free", i)
				}
				if got := ps[i].ReserveFrom(1); got <= tc.want {
					t.Fatalf("rank %d: next free id %d is not above the agreed %d (floor not raised)", i, got, tc.want)
				}
			}
			if r.rounds != tc.rounds {
				t.Fatalf("%d allreduces, want %d", r.rounds, tc.rounds)
			}
		})
	}
}

func TestAgreeCarriesMax(t *testing.T) {
	ps := fresh(3)
	as := []Agreement{{Sig: 7, Max: []int64{-1, 5}}, {Sig: 7, Max: []int64{3, 2}}, {Sig: 7, Max: []int64{0, 0}}}
	_, es := agreeAll(ps, as, newReducer(3))
	for i, a := range as {
		if es[i] != nil || !slices.Equal(a.Max, []int64{3, 5}) {
			t.Fatalf("rank %d: max %v, err %v; want [3 5]", i, a.Max, es[i])
		}
	}
}

// TestAgreeErrors checks that each failure reaches every rank with its
// sentinel and leaves every pool as it was.
func TestAgreeErrors(t *testing.T) {
	own := errors.New("own arguments")
	full := &Pool{}
	full.Taken(Max)
	cases := []struct {
		name  string
		as    []Agreement
		pools []*Pool
		want  []error // per rank
	}{
		{"signatures differ", []Agreement{{Sig: 2}, {Sig: 2}, {Sig: 4}}, fresh(3), []error{errs.Mismatch, errs.Mismatch, errs.Mismatch}},
		{"one rank's bad arguments", []Agreement{{Sig: 2}, {Sig: 2, Bad: own}, {Sig: 2}}, fresh(3), []error{errs.InvalidArgument, own, errs.InvalidArgument}},
		{"no id left on one rank", same(2, Agreement{Sig: 2}), []*Pool{{}, full}, []error{errs.Unsupported, errs.Unsupported}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, es := agreeAll(tc.pools, tc.as, newReducer(len(tc.as)))
			for i, want := range tc.want {
				if !errors.Is(es[i], want) {
					t.Fatalf("rank %d: %v, want %v", i, es[i], want)
				}
				if p := tc.pools[i]; p != full && p.ReserveFrom(1) != 1 {
					t.Fatalf("rank %d: the pool kept a reservation", i)
				}
			}
		})
	}
	t.Run("allreduce fails", func(t *testing.T) {
		r := newReducer(1)
		r.fail = errs.PeerFailed
		p := &Pool{}
		if _, err := Agree(context.Background(), p, Agreement{}, r.allreduce); !errors.Is(err, errs.PeerFailed) {
			t.Fatalf("%v, want the allreduce's error", err)
		}
		if _, err := Agree(context.Background(), p, Agreement{Bad: own}, r.allreduce); !errors.Is(err, own) {
			t.Fatalf("%v, want the rank's own error first", err)
		}
		if p.ReserveFrom(1) != 1 {
			t.Fatal("the pool kept a reservation")
		}
	})
}

func TestID(t *testing.T) {
	if got := ID(0, 0); got != 1 {
		t.Fatalf("the world's id %d, want 1", got)
	}
	if got := ID(3, 7); got != 3<<32|8 {
		t.Fatalf("ID(3, 7) = %#x", got)
	}
	for _, b := range []uint64{P2PBit, SplitBit, ServiceBit, PostBit} {
		if ID(Max, 1<<31-2)&b != 0 {
			t.Fatalf("bit %#x collides with the largest id", b)
		}
	}
}
