package split

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/sweep"
)

// memNet is an in-memory network for the algorithms' unit tests: sends are
// buffered (eager), receives match by (source, destination, tag) in order.
type memNet struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue map[[3]int][][]byte
	posts map[int32][][]byte
}

// tickingNet returns a memNet whose waiters are woken periodically (so
// that their deadlines are noticed) until stop is called.
func tickingNet() (net *memNet, stop func()) {
	net = newMemNet()
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				net.mu.Lock()
				net.cond.Broadcast()
				net.mu.Unlock()
			}
		}
	}()
	return net, func() { close(done) }
}

func newMemNet() *memNet {
	n := &memNet{queue: map[[3]int][][]byte{}}
	n.cond = sync.NewCond(&n.mu)
	return n
}

type memConn struct {
	net        *memNet
	rank, size int
}

func (c *memConn) Rank() int { return c.rank }
func (c *memConn) Size() int { return c.size }

func (c *memConn) Round(ctx context.Context, sends []Send, recvs []Recv) error {
	n := c.net
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range sends {
		to := s.To
		if s.Direct {
			to -= 1000
		}
		if to < 0 || to >= c.size {
			return fmt.Errorf("send to %d", to)
		}
		k := [3]int{c.rank, to, s.Tag}
		n.queue[k] = append(n.queue[k], slices.Clone(s.Data))
	}
	n.cond.Broadcast()
	deadline := time.Now().Add(20 * time.Second)
	for i := range recvs {
		r := &recvs[i]
		from := r.From
		if r.Direct {
			from -= 1000
		}
		k := [3]int{from, c.rank, r.Tag}
		for len(n.queue[k]) == 0 {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("rank %d: receive from %d tag %d never came", c.rank, r.From, r.Tag)
			}
			n.cond.Wait()
		}
		m := n.queue[k][0]
		n.queue[k] = n.queue[k][1:]
		if len(m) > len(r.Buf) {
			return fmt.Errorf("rank %d: message of %d bytes into %d", c.rank, len(m), len(r.Buf))
		}
		r.N = copy(r.Buf, m)
	}
	return nil
}

// Post and Take make memConn a Poster: posts wait in a box per address.
func (c *memConn) Post(_ context.Context, to int32, data []byte) error {
	n := c.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.posts == nil {
		n.posts = map[int32][][]byte{}
	}
	n.posts[to] = append(n.posts[to], slices.Clone(data))
	n.cond.Broadcast()
	return nil
}

func (c *memConn) Take(ctx context.Context, buf []byte) (int, error) {
	n := c.net
	n.mu.Lock()
	defer n.mu.Unlock()
	me := int32(1000 + c.rank)
	deadline := time.Now().Add(20 * time.Second)
	for len(n.posts[me]) == 0 {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("rank %d: no post came", c.rank)
		}
		n.cond.Wait()
	}
	m := n.posts[me][0]
	n.posts[me] = n.posts[me][1:]
	return copy(buf, m), nil
}

// runRanks runs run on n ranks of a memNet, each in a goroutine, and
// returns each rank's result; the distributed tables among the results
// ask their owners through each other's parts.
func runRanks(n int, run func(c *memConn) (*Result, error)) ([]*Result, error) {
	net, stop := tickingNet()
	defer stop()
	res := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { res[r], errs[r] = run(&memConn{net: net, rank: r, size: n}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	parts := map[int32]*Distributed{}
	for r, rs := range res {
		if d, ok := rs.Group.(*Distributed); ok {
			parts[int32(1000+r)] = d
		}
	}
	for _, d := range parts {
		d.Attach(memAsker(parts))
	}
	return res, nil
}

// runSplit runs a split of the given entries' colors and keys on len(colors)
// ranks and returns each rank's result.
func runSplit(t testing.TB, colors, keys []int64, o Options) []*Result {
	t.Helper()
	res, err := runRanks(len(colors), func(c *memConn) (*Result, error) {
		e := Entry{Color: colors[c.rank], Key: keys[c.rank], Rank: int32(c.rank), Addr: int32(1000 + c.rank)}
		return Run(context.Background(), c, e, o)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// memAsker answers lookups by calling the owners' Answer directly.
type memAsker map[int32]*Distributed

func (m memAsker) Ask(_ context.Context, to []int32, reqs, replies [][]byte) error {
	for i, a := range to {
		d, ok := m[a]
		if !ok {
			return fmt.Errorf("no part at address %d", a)
		}
		replies[i] = d.Answer(reqs[i])
	}
	return nil
}

// reference returns each rank's members (as addresses) in new-rank order.
func reference(colors, keys []int64) [][]int32 {
	n := len(colors)
	out := make([][]int32, n)
	for r := range n {
		if colors[r] < 0 {
			continue
		}
		var mem []int
		for q := range n {
			if colors[q] == colors[r] {
				mem = append(mem, q)
			}
		}
		slices.SortStableFunc(mem, func(a, b int) int {
			if c := cmp.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, q := range mem {
			out[r] = append(out[r], int32(1000+q))
		}
	}
	return out
}

// checkGroups compares every rank's group with want, each rank's members'
// addresses in new-rank order (nil: no group): its rank and size, a
// chain's neighbours and rank 0, a table's members, and a distributed
// table's reverse lookups.
func checkGroups(t testing.TB, res []*Result, want [][]int32) {
	t.Helper()
	for r, rs := range res {
		if want[r] == nil {
			if rs.Group != nil {
				t.Fatalf("rank %d: undefined color got a group", r)
			}
			continue
		}
		g := rs.Group
		if g == nil {
			t.Fatalf("rank %d: no group, want %v", r, want[r])
		}
		if g.Size() != len(want[r]) || want[r][g.Rank()] != int32(1000+r) {
			t.Fatalf("rank %d: rank %d of %d, want a member of %v", r, g.Rank(), g.Size(), want[r])
		}
		if ch, ok := g.(*Chain); ok {
			if w := chainOf(g.Rank(), want[r]); ch.Links != w {
				t.Fatalf("rank %d: links %+v, want %+v", r, ch.Links, w)
			}
			continue
		}
		got := make([]int32, g.Size())
		idx := make([]int, g.Size())
		for i := range idx {
			idx[i] = i
		}
		if err := g.Resolve(context.Background(), idx, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[r]) {
			t.Fatalf("rank %d: members %v, want %v", r, got, want[r])
		}
		if d, ok := g.(*Distributed); ok {
			// Reverse lookups: every member, and addresses of no member.
			probe := append(slices.Clone(want[r]), -5, 999999)
			ranks, err := d.Find(context.Background(), probe)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want[r] {
				if ranks[i] != i {
					t.Fatalf("rank %d: Find(%d) = %d, want %d", r, probe[i], ranks[i], i)
				}
			}
			if ranks[len(ranks)-1] != -1 || ranks[len(ranks)-2] != -1 {
				t.Fatalf("rank %d: Find of non-members: %v", r, ranks[len(ranks)-2:])
			}
		}
	}
}

func patterns(n int, rng *rand.Rand) map[string][2][]int64 {
	mk := func(f func(r int) int64) []int64 {
		s := make([]int64, n)
		for r := range s {
			s[r] = f(r)
		}
		return s
	}
	return map[string][2][]int64{
		"random":    {mk(func(int) int64 { return rng.Int64N(5) - 1 }), mk(func(int) int64 { return rng.Int64N(7) })},
		"one":       {mk(func(int) int64 { return 3 }), mk(func(r int) int64 { return int64(-r) })},
		"same-keys": {mk(func(r int) int64 { return int64(r % 4) }), mk(func(int) int64 { return 9 })},
		"unique":    {mk(func(r int) int64 { return int64(r) }), mk(func(r int) int64 { return rng.Int64() })},
		"undefined": {mk(func(int) int64 { return Undefined }), mk(func(r int) int64 { return int64(r) })},
		"extremes":  {mk(func(r int) int64 { return []int64{0, 1<<63 - 1}[r%2] }), mk(func(r int) int64 { return []int64{-1 << 63, 1<<63 - 1, 0}[r%3] })},
	}
}

// TestAlgorithms checks every algorithm against the naive reference on
// many sizes and color/key patterns, cheng with several sorter counts.
func TestAlgorithms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := sweep.More([]int{1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 64}, 100, 257)
	for _, in := range List() {
		sorters := []int{0}
		if in.Name == "cheng" {
			sorters = []int{1, 2, 3, 5, 8, 16}
		}
		for _, n := range sizes {
			for name, pat := range patterns(n, rng) {
				for _, p := range sorters {
					gss := []int{1, 2, 3, 16}
					if in.Run == nil {
						// Generalized algorithms on integers: their own
						// test covers the rest.
						gss = []int{1}
						if n == 257 {
							continue
						}
					}
					for _, gs := range gss {
						if p > n {
							continue
						}
						o := Options{Algorithm: in.Name, Sorters: p, GroupSize: gs}
						res := runSplit(t, pat[0], pat[1], o)
						t.Run(fmt.Sprintf("%s/n=%d/%s/p=%d/P'=%d", in.Name, n, name, p, gs), func(t *testing.T) {
							checkGroups(t, res, reference(pat[0], pat[1]))
							for r, rs := range res {
								_, dist := rs.Group.(*Distributed)
								if rs.Group != nil && dist != (gs > 1) {
									t.Fatalf("rank %d: group %s with P'=%d", r, rs.Group.Kind(), gs)
								}
							}
						})
					}
				}
			}
		}
	}
}
