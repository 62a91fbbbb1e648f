package scoll_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/internal/sweep"
)

// splitRef returns, for each rank of a communicator of len(colors) ranks,
// the ranks of its new communicator in order (nil for a negative color):
// the naive reference of Split.
func splitRef(colors, keys []int) [][]int {
	out := make([][]int, len(colors))
	for r, col := range colors {
		if col < 0 {
			continue
		}
		var mem []int
		for q, c2 := range colors {
			if c2 == col {
				mem = append(mem, q)
			}
		}
		slices.SortStableFunc(mem, func(a, b int) int {
			if c := cmp.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		out[r] = mem
	}
	return out
}

// checkSplit checks rank r's new communicator sub of c against want, the
// ranks of c it must hold in order.
func checkSplit(c, sub *scoll.Comm, want []int) error {
	r := c.Rank()
	if want == nil {
		if sub != nil {
			return fmt.Errorf("rank %d: undefined color got a communicator of %d", r, sub.Size())
		}
		return nil
	}
	if sub == nil {
		return fmt.Errorf("rank %d: no communicator, want %d members", r, len(want))
	}
	if sub.Size() != len(want) {
		return fmt.Errorf("rank %d: size %d, want %d", r, sub.Size(), len(want))
	}
	if want[sub.Rank()] != r {
		return fmt.Errorf("rank %d: new rank %d holds parent rank %d", r, sub.Rank(), want[sub.Rank()])
	}
	got, err := translateAll(sub, c)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("rank %d: members %v, want %v", r, got, want)
	}
	return nil
}

// splitPatterns returns named color and key patterns for p ranks.
func splitPatterns(p int, rng *rand.Rand) []struct {
	name         string
	colors, keys []int
} {
	type pat = struct {
		name         string
		colors, keys []int
	}
	mk := func(f func(r int) int) []int {
		s := make([]int, p)
		for r := range s {
			s[r] = f(r)
		}
		return s
	}
	rc := mk(func(int) int { return rng.IntN(4) - 1 })
	rk := mk(func(int) int { return rng.IntN(5) })
	return []pat{
		{"random", rc, rk},
		{"one-color-reverse", mk(func(int) int { return 7 }), mk(func(r int) int { return -r })},
		{"equal-keys", mk(func(r int) int { return r % 3 }), mk(func(int) int { return 0 })},
		{"unique", mk(func(r int) int { return r }), mk(func(r int) int { return r })},
		{"all-undefined", mk(func(int) int { return scoll.Undefined }), mk(func(r int) int { return r })},
		{"big-colors", mk(func(r int) int { return (r % 2) << 40 }), mk(func(r int) int { return -(r % 5) << 50 })},
	}
}

func TestSplitReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 100}
	for _, alg := range scoll.SplitAlgorithms() {
		for _, p := range sizes {
			for _, pt := range splitPatterns(p, rng) {
				want := splitRef(pt.colors, pt.keys)
				err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
					sub, err := c.Split(ctx, pt.colors[c.Rank()], pt.keys[c.Rank()], scoll.WithSplitAlgorithm(alg.Name))
					if err != nil {
						return err
					}
					return checkSplit(c, sub, want[c.Rank()])
				})
				if err != nil {
					t.Fatalf("%s P=%d %s: %v", alg.Name, p, pt.name, err)
				}
			}
		}
	}
}

func TestSubCommCollectives(t *testing.T) {
	for _, p := range []int{2, 5, 8, 13} {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			sub, err := c.Split(ctx, c.Rank()%2, -c.Rank())
			if err != nil {
				return err
			}
			oc := matrix.OpCases[int32]()[0]
			for _, coll := range []string{"allreduce", "bcast", "allgather", "alltoall", "reduce", "scan", "barrier"} {
				for _, alg := range scoll.Algorithms(coll) {
					if alg.PowerOfTwo && sub.Size()&(sub.Size()-1) != 0 {
						continue
					}
					for _, n := range []int{0, 3, 1000} {
						if coll == "barrier" && n > 0 {
							continue
						}
						if err := matrix.CheckCase(ctx, sub, nil, coll, alg.Name, n, sub.Size()-1, false, oc); err != nil {
							return fmt.Errorf("%s/%s n=%d: %w", coll, alg.Name, n, err)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

// subCommSizes are the sizes of the derived communicators the sub-matrix
// runs on.
var subCommSizes = []int{1, 2, 3, 5, 8, 17}

// onSub runs fn on a communicator of p ranks derived from a world of p+3
// in-process ranks by one of several constructors (by kind): a split with
// reversed keys, a Create of every other rank in reverse, or a split kept
// in a distributed table. The other ranks of the world only take part in
// the construction.
func onSub(p int, kind string, fn func(ctx context.Context, sub *scoll.Comm) error, opts ...scoll.Option) error {
	n := p + 3
	return scoll.Run(context.Background(), n, func(ctx context.Context, c *scoll.Comm) error {
		var sub *scoll.Comm
		var err error
		switch kind {
		case "split":
			color := 0
			if c.Rank() >= p {
				color = scoll.Undefined
			}
			sub, err = c.Split(ctx, color, -c.Rank())
		case "distributed":
			color := 1
			if c.Rank() >= p {
				color = 2
			}
			sub, err = c.Split(ctx, color, c.Rank(), scoll.WithDistributedGroup(2))
			if color == 2 && sub != nil {
				sub.Close()
				sub = nil
			}
		case "chain":
			// Members in reverse order, kept as a chain: collectives
			// learn the members or run along the chain.
			var color []byte
			if c.Rank() < p {
				color = []byte("chain")
			}
			sub, err = c.SplitBytes(ctx, color, []byte{byte(n - c.Rank())}, scoll.WithChainGroup(), scoll.WithSplitAlgorithm("bitonic"))
		case "create":
			ranks := make([]int, p)
			for i := range ranks {
				ranks[i] = n - 1 - i
			}
			sub, err = c.Create(ctx, ranks)
		}
		if err != nil || sub == nil {
			return err
		}
		defer sub.Close()
		return fn(ctx, sub)
	}, opts...)
}

// TestMatrixSubComm runs every algorithm of every collective, and the
// default choice (which takes the in-process shared-memory paths where
// they apply), on derived communicators against the naive reference.
func TestMatrixSubComm(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	for _, coll := range scoll.Collectives() {
		t.Run(coll, func(t *testing.T) {
			t.Parallel()
			algs := append([]scoll.AlgorithmInfo{{Name: ""}}, scoll.Algorithms(coll)...)
			for i, p := range subCommSizes {
				kind := []string{"split", "create", "distributed", "chain"}[i%4]
				for _, alg := range algs {
					if alg.PowerOfTwo && p&(p-1) != 0 {
						continue
					}
					counts := []int{0, 1, 3, 1000}
					err := onSub(p, kind, func(ctx context.Context, sub *scoll.Comm) error {
						return matrix.ForCases(coll, alg, p, counts, func(n, root int, inPlace bool, oc matrix.OpCase[int32]) error {
							return matrix.CheckCase(ctx, sub, nil, coll, alg.Name, n, root, inPlace, oc)
						})
					})
					if err != nil {
						t.Fatalf("%s P=%d (%s): %v", alg.Name, p, kind, err)
					}
				}
			}
		})
	}
}

// TestSubCommFastPaths shows which in-process shared-memory paths derived
// communicators take: exchanges and meetings when their members are known
// here (a replicated table), neither for a distributed table, whose
// members no rank holds; the default algorithm's results are checked
// either way.
func TestSubCommFastPaths(t *testing.T) {
	oc := matrix.OpCases[int32]()[0]
	for _, kind := range []string{"split", "distributed"} {
		for _, exch := range []bool{true, false} {
			err := onSub(3, kind, func(ctx context.Context, sub *scoll.Comm) error {
				limit, meets := scoll.ExchangeLimitForTest(sub), scoll.MeetsForTest(sub)
				switch {
				case kind == "distributed" && (limit >= 0 || meets):
					return fmt.Errorf("distributed table: exchange limit %d, meetings %v: want neither", limit, meets)
				case kind == "split" && exch && limit < 0:
					return fmt.Errorf("replicated table: no exchanges")
				case kind == "split" && !meets:
					return fmt.Errorf("replicated table: no meetings")
				}
				for _, coll := range []string{"allreduce", "bcast", "allgather", "reduce", "barrier"} {
					n := 2
					if coll == "barrier" {
						n = 0
					}
					if err := matrix.CheckCase(ctx, sub, nil, coll, "", n, 1, false, oc); err != nil {
						return fmt.Errorf("%s: %w", coll, err)
					}
				}
				return nil
			}, scoll.WithExchangesForTest(exch))
			if err != nil {
				t.Fatalf("%s, exchanges %v: %v", kind, exch, err)
			}
		}
	}
}

// TestNestedSplits splits a split of a split and checks every level
// against the reference.
func TestNestedSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const p = 37
	c1, k1 := make([]int, p), make([]int, p)
	for r := range p {
		c1[r], k1[r] = rng.IntN(2), rng.IntN(4)
	}
	want1 := splitRef(c1, k1)
	for _, alg := range scoll.SplitAlgorithms() {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			opt := scoll.WithSplitAlgorithm(alg.Name)
			a, err := c.Split(ctx, c1[c.Rank()], k1[c.Rank()], opt)
			if err != nil {
				return err
			}
			if err := checkSplit(c, a, want1[c.Rank()]); err != nil {
				return err
			}
			// Level 2: thirds of a, reversed; level 3: pairs of those.
			n := a.Size()
			c2, k2 := make([]int, n), make([]int, n)
			for q := range n {
				c2[q], k2[q] = q%3, -q
			}
			b, err := a.Split(ctx, c2[a.Rank()], k2[a.Rank()], opt, scoll.WithDistributedGroup(1+a.Rank()%1))
			if err != nil {
				return err
			}
			if err := checkSplit(a, b, splitRef(c2, k2)[a.Rank()]); err != nil {
				return fmt.Errorf("level 2: %w", err)
			}
			m := b.Size()
			c3, k3 := make([]int, m), make([]int, m)
			for q := range m {
				c3[q], k3[q] = q/2, q
			}
			d, err := b.Split(ctx, c3[b.Rank()], k3[b.Rank()], opt)
			if err != nil {
				return err
			}
			if err := checkSplit(b, d, splitRef(c3, k3)[b.Rank()]); err != nil {
				return fmt.Errorf("level 3: %w", err)
			}
			// The grandchild translates to the world directly, and its
			// collectives work after its parents are closed.
			a.Close()
			b.Close()
			v := []int32{int32(c.Rank())}
			if err := scoll.Allreduce(ctx, d, nil, v, scoll.Sum); err != nil {
				return err
			}
			world, err := translateAll(d, c)
			if err != nil {
				return err
			}
			var sum int32
			for _, w := range world {
				sum += int32(w)
			}
			if v[0] != sum {
				return fmt.Errorf("level 3 allreduce %d, want %d (members %v)", v[0], sum, world)
			}
			return d.Close()
		})
		if err != nil {
			t.Fatalf("%s: %v", alg.Name, err)
		}
	}
}

// TestDupIsolation: a message on a duplicate never matches one on its
// parent, with equal tags, in either order.
func TestDupIsolation(t *testing.T) {
	err := scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		d, err := c.Dup(ctx)
		if err != nil {
			return err
		}
		defer d.Close()
		if c.Rank() == 0 {
			if err := d.Send(ctx, 1, 5, []byte("dup")); err != nil {
				return err
			}
			return c.Send(ctx, 1, 5, []byte("parent"))
		}
		buf := make([]byte, 8)
		n, err := c.Recv(ctx, 0, 5, buf)
		if err != nil || string(buf[:n]) != "parent" {
			return fmt.Errorf("parent received %q (%v)", buf[:n], err)
		}
		n, err = d.Recv(ctx, 0, 5, buf)
		if err != nil || string(buf[:n]) != "dup" {
			return fmt.Errorf("dup received %q (%v)", buf[:n], err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSiblingsConcurrent runs collectives on sibling communicators and on
// duplicates at the same time, blocking and non-blocking, many times.
func TestSiblingsConcurrent(t *testing.T) {
	const p, iters = 12, 200
	err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		half, err := c.Split(ctx, c.Rank()%3, c.Rank())
		if err != nil {
			return err
		}
		dup, err := half.Dup(ctx)
		if err != nil {
			return err
		}
		var want int64
		for q := c.Rank() % 3; q < p; q += 3 {
			want += int64(q)
		}
		for i := range iters {
			a, b := []int64{int64(c.Rank())}, []int64{int64(i)}
			req, err := scoll.IAllreduce(ctx, half, nil, a, scoll.Sum)
			if err != nil {
				return err
			}
			if err := scoll.Allreduce(ctx, dup, nil, b, scoll.Max); err != nil {
				return err
			}
			if err := req.Wait(ctx); err != nil {
				return err
			}
			if a[0] != want || b[0] != int64(i) {
				return fmt.Errorf("iteration %d: sum %d max %d, want %d and %d", i, a[0], b[0], want, i)
			}
		}
		dup.Close()
		return half.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDerivedTopology: SplitGrid gives the topology-aware algorithms the
// kept dimensions as their grid (first dimension fastest), and a derived
// communicator gives the path algorithms its members' nodes on the world's
// machine.
func TestDerivedTopology(t *testing.T) {
	err := scoll.Run(context.Background(), 24, func(ctx context.Context, c *scoll.Comm) error {
		g, err := c.SplitGrid(ctx, []int{2, 3, 4}, []bool{true, false, true})
		if err != nil {
			return err
		}
		defer g.Close()
		if got := scoll.GridForTest(g); !slices.Equal(got, []int{4, 2}) {
			return fmt.Errorf("grid %v, want [4 2]", got)
		}
		machine, nodes := scoll.PlacementForTest(g)
		if !slices.Equal(machine, []int{4, 3, 2}) {
			return fmt.Errorf("machine %v, want [4 3 2]", machine)
		}
		world, err := translateAll(g, c)
		if err != nil || !slices.Equal(world, nodes) {
			return fmt.Errorf("nodes %v, members %v (%v)", nodes, world, err)
		}
		// The grid's row-major numbering: rank r is at (i, j, k) with r =
		// 12i + 4j + k; this rank's communicator keeps i and k.
		i, j, k := c.Rank()/12, c.Rank()/4%3, c.Rank()%4
		if g.Rank() != 4*i+k || world[0] != 4*j {
			return fmt.Errorf("rank %d: grid rank %d (want %d), first member %d (want %d)", c.Rank(), g.Rank(), 4*i+k, world[0], 4*j)
		}
		// The topology-aware algorithms run on it.
		oc := matrix.OpCases[int32]()[0]
		for _, alg := range []string{"bucket", "rd-optimal", "rd-path"} {
			if err := matrix.CheckCase(ctx, g, nil, "allgather", alg, 3, 0, false, oc); err != nil {
				return fmt.Errorf("%s: %w", alg, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestManySmallCommunicators: communicators cost memory in proportion to
// their members, so a large world holds many small ones. 1,024 ranks each
// join 16 communicators of 8 and run a collective on each; the heap may
// grow by at most a few KiB per membership (the in-process transport's
// call records, 4 KiB per member, are the largest part).
func TestManySmallCommunicators(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	const p, comms, size = 1024, 16, 8
	per, err := bytesPerMembership(p, comms, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.0f bytes per membership", per)
	if per > 16<<10 {
		t.Fatalf("%.0f bytes per membership of a communicator of %d: not proportional to its size", per, size)
	}
}

// bytesPerMembership runs p ranks that each join comms communicators of
// size ranks (by Split, each checked by an Allreduce) and returns the heap
// they hold while all are open, per membership.
func bytesPerMembership(p, comms, size int) (float64, error) {
	var before, after runtime.MemStats
	err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		// Rank 0 reads the heap while every rank waits between two
		// barriers.
		heap := func(ms *runtime.MemStats) error {
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			if c.Rank() == 0 {
				runtime.GC()
				runtime.ReadMemStats(ms)
			}
			return c.Barrier(ctx)
		}
		if err := heap(&before); err != nil {
			return err
		}
		var subs []*scoll.Comm
		for k := range comms {
			sub, err := c.Split(ctx, (c.Rank()+k)/size, c.Rank())
			if err != nil {
				return err
			}
			v := []int32{1}
			if err := scoll.Allreduce(ctx, sub, nil, v, scoll.Sum, scoll.WithAlgorithm("recursive-doubling")); err != nil || v[0] != int32(sub.Size()) {
				return fmt.Errorf("allreduce on communicator %d: %d, %v", k, v[0], err)
			}
			subs = append(subs, sub)
		}
		if err := heap(&after); err != nil {
			return err
		}
		for _, s := range subs {
			s.Close()
		}
		return nil
	})
	return float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc)) / float64(p*comms), err
}

// TestSplitLarge checks every algorithm and both representations against
// the reference at 600 ranks (1,000 and 1,024 with -tags long), with random
// colors and keys.
func TestSplitLarge(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, p := range sweep.More([]int{600}, 1000, 1024) {
		colors, keys := make([]int, p), make([]int, p)
		for r := range p {
			colors[r], keys[r] = rng.IntN(5)-1, rng.IntN(50)
		}
		want := splitRef(colors, keys)
		for _, alg := range scoll.SplitAlgorithms() {
			for _, gs := range []int{1, 8} {
				err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
					opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg.Name), scoll.WithDistributedGroup(gs)}
					if alg.Name == "cheng" {
						opts = append(opts, scoll.WithSorters(7))
					}
					sub, err := c.Split(ctx, colors[c.Rank()], keys[c.Rank()], opts...)
					if err != nil {
						return err
					}
					if gs == 1 {
						return checkSplit(c, sub, want[c.Rank()])
					}
					if sub == nil {
						if err := checkSplit(c, sub, want[c.Rank()]); err != nil {
							return err
						}
						return c.Barrier(ctx) // the members' lookups end before anyone leaves
					}
					// A distributed table: check rank, size and the
					// members through a collective.
					if sub.Size() != len(want[c.Rank()]) || want[c.Rank()][sub.Rank()] != c.Rank() {
						return fmt.Errorf("rank %d: rank %d of %d", c.Rank(), sub.Rank(), sub.Size())
					}
					got := make([]int32, sub.Size())
					if err := scoll.Allgather(ctx, sub, []int32{int32(c.Rank())}, got); err != nil {
						return err
					}
					for i, w := range want[c.Rank()] {
						if int(got[i]) != w {
							return fmt.Errorf("rank %d: member %d is %d, want %d", c.Rank(), i, got[i], w)
						}
					}
					// Every world rank translated into the distributed
					// table: its rank there, or Undefined.
					tr, err := translateAll(c, sub)
					if err != nil {
						return err
					}
					for w, r := range tr {
						wantR := scoll.Undefined
						if i := slices.Index(want[c.Rank()], w); i >= 0 {
							wantR = i
						}
						if r != wantR {
							return fmt.Errorf("rank %d: world rank %d translates to %d, want %d", c.Rank(), w, r, wantR)
						}
					}
					// Owners answer only while they are members: wait
					// for every rank's lookups before leaving.
					return c.Barrier(ctx)
				})
				if err != nil {
					t.Fatalf("P=%d %s P'=%d: %v", p, alg.Name, gs, err)
				}
			}
		}
	}
}

// TestPersistentOnSubComm runs persistent and non-blocking collectives on
// a derived communicator.
func TestPersistentOnSubComm(t *testing.T) {
	err := onSub(5, "split", func(ctx context.Context, sub *scoll.Comm) error {
		in := []int64{int64(sub.Rank())}
		out := make([]int64, 1)
		h, err := scoll.AllreduceInit(ctx, sub, in, out, scoll.Sum)
		if err != nil {
			return err
		}
		for i := range 5 {
			in[0] = int64(sub.Rank() + i)
			if err := h.Start(ctx); err != nil {
				return err
			}
			if err := h.Wait(ctx); err != nil {
				return err
			}
			if want := int64(10 + 5*i); out[0] != want {
				return fmt.Errorf("start %d: %d, want %d", i, out[0], want)
			}
		}
		buf := make([]int32, 3)
		if sub.Rank() == 2 {
			buf = []int32{7, 8, 9}
		}
		req, err := scoll.IBcast(ctx, sub, buf, 2)
		if err != nil {
			return err
		}
		if err := req.Wait(ctx); err != nil || !slices.Equal(buf, []int32{7, 8, 9}) {
			return fmt.Errorf("ibcast: %v (%v)", buf, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// translateAll translates every rank of c into sub (c.TranslateRanks of
// 0, 1, …, c.Size()−1).
func translateAll(c, sub *scoll.Comm) ([]int, error) {
	all := make([]int, c.Size())
	for i := range all {
		all[i] = i
	}
	return c.TranslateRanks(all, sub)
}
