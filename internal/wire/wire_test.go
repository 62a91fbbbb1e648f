package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/postbox"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
)

// perm places rank r of the test communicator at transport address
// perm[r], so that a rank sent to its own number would be misdelivered.
var perm = []int32{2, 0, 3, 1}

// endpoints returns the test communicator on an in-process world: with a
// table membership (table), a chain one (chain) or none (ranks are
// addresses).
func endpoints(kind string) []*Endpoint {
	n := len(perm)
	w := inproc.NewWorld(n)
	es := make([]*Endpoint, n)
	for r := range es {
		e := &Endpoint{T: w.Endpoint(r), ID: 5 << 32, Rank: r, Size: n}
		switch kind {
		case "table":
			e.T = w.Endpoint(int(perm[r]))
			e.Group = split.NewTable(r, perm)
		case "chain":
			e.T = w.Endpoint(int(perm[r]))
			e.Group = split.NewChain(chainLinks(r))
		}
		es[r] = e
	}
	return es
}

func chainLinks(r int) split.Links {
	l := split.Links{Rank: r, Size: len(perm), Self: perm[r], First: perm[0], Left: split.None, Right: split.None}
	if r > 0 {
		l.Left = perm[r-1]
	}
	if r+1 < len(perm) {
		l.Right = perm[r+1]
	}
	return l
}

// onAll runs f on every rank at once and returns the ranks' errors.
func onAll(es []*Endpoint, f func(ctx context.Context, e *Endpoint) error) []error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := make([]error, len(es))
	var wg sync.WaitGroup
	for r, e := range es {
		wg.Go(func() { out[r] = f(ctx, e) })
	}
	wg.Wait()
	return out
}

func noErrors(t *testing.T, es []error) {
	t.Helper()
	for r, err := range es {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// TestRound sends every rank's message around a ring, in both
// directions, over each membership, and checks what arrives and its
// length.
func TestRound(t *testing.T) {
	for _, kind := range []string{"none", "table"} {
		t.Run(kind, func(t *testing.T) {
			es := endpoints(kind)
			n := len(es)
			hooked := make([]int, n)
			for r, e := range es {
				e.Hook = func(round int) { hooked[r] = round + 1 }
			}
			noErrors(t, onAll(es, func(ctx context.Context, e *Endpoint) error {
				c := NewConn(e, 9, 77)
				for round := range 2 {
					r := e.Rank
					msg := []byte(fmt.Sprintf("from %d round %d", r, round))
					sends := []split.Send{{To: (r + 1) % n, Tag: 1, Data: msg}, {To: (r + n - 1) % n, Tag: 2, Data: msg[:4]}}
					recvs := []split.Recv{{From: (r + n - 1) % n, Tag: 1, Buf: make([]byte, 64)}, {From: (r + 1) % n, Tag: 2, Buf: make([]byte, 64)}}
					if err := c.Round(ctx, sends, recvs); err != nil {
						return err
					}
					want := fmt.Sprintf("from %d round %d", (r+n-1)%n, round)
					if got := string(recvs[0].Buf[:recvs[0].N]); got != want {
						return fmt.Errorf("got %q, want %q", got, want)
					}
					if got := string(recvs[1].Buf[:recvs[1].N]); got != "from" {
						return fmt.Errorf("got %q from the right", got)
					}
				}
				return nil
			}))
			for r, h := range hooked {
				if h != 2 {
					t.Fatalf("rank %d: hook saw %d rounds, want 2", r, h)
				}
			}
		})
	}
}

// TestRoundDirect sends to transport addresses (Direct), which a table
// membership must not translate.
func TestRoundDirect(t *testing.T) {
	es := endpoints("table")
	noErrors(t, onAll(es, func(ctx context.Context, e *Endpoint) error {
		me, n := int(perm[e.Rank]), len(es)
		to, from := (me+1)%n, (me+n-1)%n
		recvs := []split.Recv{{From: from, Buf: make([]byte, 4), Direct: true}}
		err := NewConn(e, 1, 0).Round(ctx, []split.Send{{To: to, Data: []byte{byte(me)}, Direct: true}}, recvs)
		if err == nil && (recvs[0].N != 1 || int(recvs[0].Buf[0]) != from) {
			err = fmt.Errorf("got %v from address %d", recvs[0].Buf[:recvs[0].N], from)
		}
		return err
	}))
}

func TestRoundErrors(t *testing.T) {
	es := endpoints("table")
	ctx := context.Background()
	for _, to := range []int{-1, len(es)} {
		err := NewConn(es[0], 1, 0).Round(ctx, []split.Send{{To: to, Data: []byte{1}}}, nil)
		if !errors.Is(err, errs.InvalidArgument) {
			t.Fatalf("send to rank %d: %v, want ErrInvalidArgument", to, err)
		}
	}
	err := NewConn(es[0], 1, 0).Round(ctx, []split.Send{{To: 9, Data: []byte{1}, Direct: true}}, nil)
	if !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("send to address 9 of 4: %v, want ErrInvalidArgument", err)
	}
	es[1].Closed = func() bool { return true }
	if err := NewConn(es[1], 1, 0).Round(ctx, nil, nil); !errors.Is(err, errs.Closed) {
		t.Fatalf("closed: %v, want ErrClosed", err)
	}
	// A receive nobody sends to ends with the context, withdrawn.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = NewConn(es[2], 1, 0).Round(short, nil, []split.Recv{{From: 0, Buf: make([]byte, 1)}})
	if err == nil {
		t.Fatal("a receive without a sender completed")
	}
}

func TestLinks(t *testing.T) {
	for _, kind := range []string{"none", "table", "chain"} {
		t.Run(kind, func(t *testing.T) {
			for r, e := range endpoints(kind) {
				l, err := e.Links(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				want := chainLinks(r)
				if kind == "none" {
					want = split.Links{Rank: r, Size: len(perm), Self: int32(r), First: 0, Left: int32(r - 1), Right: int32(r + 1)}
					if r+1 == len(perm) {
						want.Right = split.None
					}
				}
				if l != want {
					t.Fatalf("rank %d: %+v, want %+v", r, l, want)
				}
				if a, err := e.Addr(context.Background(), r); err != nil || int32(a) != want.Self {
					t.Fatalf("rank %d: Addr %d, %v; want %d", r, a, err, want.Self)
				}
			}
		})
	}
}

// TestAsk serves an echo on every rank and asks every other rank at once.
func TestAsk(t *testing.T) {
	es := endpoints("none")
	const svc = 5<<32 | 1<<61
	for _, e := range es {
		rank := e.Rank
		e.T.(transport.Responder).Serve(svc, func(src int, req []byte) []byte {
			return append([]byte{byte(rank), byte(src)}, req...)
		})
	}
	noErrors(t, onAll(es, func(ctx context.Context, e *Endpoint) error {
		a := &Asker{E: e, Service: svc}
		var to []int32
		var reqs, reps [][]byte
		for r := range es {
			if r != e.Rank {
				to = append(to, int32(r))
				reqs = append(reqs, []byte{0xa0 + byte(r)})
				reps = append(reps, make([]byte, 16))
			}
		}
		if err := a.Ask(ctx, to, reqs, reps); err != nil {
			return err
		}
		for i, r := range to {
			if want := []byte{byte(r), byte(e.Rank), 0xa0 + byte(r)}; !bytes.Equal(reps[i], want) {
				return fmt.Errorf("reply of %d: %v, want %v", r, reps[i], want)
			}
		}
		return nil
	}))
	a := &Asker{E: es[0], Service: svc}
	err := a.Ask(context.Background(), []int32{1}, [][]byte{make([]byte, transport.MaxRequest+1)}, [][]byte{nil})
	if !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("oversized lookup: %v, want ErrInvalidArgument", err)
	}
	es[0].Closed = func() bool { return true }
	if err := a.Ask(context.Background(), []int32{1}, [][]byte{{1}}, [][]byte{nil}); !errors.Is(err, errs.Closed) {
		t.Fatalf("closed: %v, want ErrClosed", err)
	}
}

// TestPost posts a reply from each rank to the next (and rank 0 to
// itself too, which goes to its own box), then takes them.
func TestPost(t *testing.T) {
	es := endpoints("table")
	boxes := make([]*postbox.Box, len(es))
	for r, e := range es {
		boxes[r] = &postbox.Box{}
		defer ServePosts(e, e.T.(transport.Responder), boxes[r])()
	}
	const seq = 3
	n := len(es)
	noErrors(t, onAll(es, func(ctx context.Context, e *Endpoint) error {
		p := PostConn{Conn: NewConn(e, seq, 1), Box: boxes[e.Rank]}
		next := perm[(e.Rank+1)%n]
		if err := p.Post(ctx, next, []byte{byte(e.Rank), 42}); err != nil {
			return err
		}
		buf := make([]byte, 8)
		k, err := p.Take(ctx, buf)
		if err != nil {
			return err
		}
		if want := []byte{byte((e.Rank + n - 1) % n), 42}; !bytes.Equal(buf[:k], want) {
			return fmt.Errorf("took %v, want %v", buf[:k], want)
		}
		return nil
	}))
	ctx := context.Background()
	p := PostConn{Conn: NewConn(es[0], seq+1, 1), Box: boxes[0]}
	if err := p.Post(ctx, perm[0], []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := p.Post(ctx, perm[0], []byte{2}); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("second post to one rank: %v, want ErrMismatch", err)
	}
	q := PostConn{Conn: NewConn(es[1], seq+1, 1), Box: boxes[1]}
	if err := q.Post(ctx, perm[0], []byte{3}); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("second post from another rank: %v, want ErrMismatch (refused)", err)
	}
	if k, err := p.Take(ctx, make([]byte, 1)); err != nil || k != 1 {
		t.Fatalf("take of the own post: %d, %v", k, err)
	}
	p = PostConn{Conn: NewConn(es[0], seq+2, 1), Box: boxes[0]}
	if err := p.Post(ctx, perm[0], []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Take(ctx, make([]byte, 2)); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("reply longer than the buffer: %v, want ErrMismatch", err)
	}
}

func TestChain(t *testing.T) {
	es := endpoints("chain")
	var seq sync.Map
	next := func(r int) func() uint64 {
		return func() uint64 { v, _ := seq.LoadOrStore(r, 0); seq.Store(r, v.(int)+1); return uint64(100 + v.(int)) }
	}
	noErrors(t, onAll(es, func(ctx context.Context, e *Endpoint) error {
		v := []int64{int64(e.Rank), -int64(e.Rank), 7}
		if err := ChainAllreduceInts(ctx, e, 1, v, false); err != nil {
			return err
		}
		if want := []int64{3, 0, 7}; !slices.Equal(v, want) {
			return fmt.Errorf("max %v, want %v", v, want)
		}
		v = []int64{int64(e.Rank), -int64(e.Rank)}
		if err := ChainAllreduceInts(ctx, e, 2, v, true); err != nil {
			return err
		}
		if want := []int64{0, -3}; !slices.Equal(v, want) {
			return fmt.Errorf("min %v, want %v", v, want)
		}
		for range 2 { // the second call has nothing to learn
			if err := LearnMembers(ctx, e, next(e.Rank)); err != nil {
				return err
			}
		}
		if m := e.Group.Members(); !slices.Equal(m, perm) {
			return fmt.Errorf("members %v, want %v", m, perm)
		}
		return nil
	}))
	for r := range es {
		if v, _ := seq.Load(r); v != 1 {
			t.Fatalf("rank %d claimed %v sequence numbers, want 1", r, v)
		}
	}
	table := endpoints("table")[0]
	if err := LearnMembers(context.Background(), table, func() uint64 { t.Fatal("a table claimed a number"); return 0 }); err != nil {
		t.Fatal(err)
	}
	if err := ChainAllreduceInts(context.Background(), table, 1, nil, false); !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("allreduce along a table: %v, want ErrInvalidArgument", err)
	}
}

// TestRunItemsComparatorPanic runs a split whose key comparator panics on
// every rank: each gets ErrInvalidArgument, not a panic.
func TestRunItemsComparatorPanic(t *testing.T) {
	es := endpoints("none")[:2]
	for _, e := range es {
		e.Size = len(es)
	}
	o := split.Options{Algorithm: "bitonic", KeyCompare: func(a, b []byte) int { panic("user bug") }}
	boxes := []*postbox.Box{{}, {}}
	for r, e := range es {
		defer ServePosts(e, e.T.(transport.Responder), boxes[r])()
	}
	for r, err := range onAll(es, func(ctx context.Context, e *Endpoint) error {
		l, err := e.Links(ctx)
		if err != nil {
			return err
		}
		it := split.Item{Color: []byte{1}, Key: []byte{byte(e.Rank)}, Rank: int32(e.Rank), Addr: int32(e.Rank)}
		_, err = RunItems(ctx, PostConn{Conn: NewConn(e, 1, 0), Box: boxes[e.Rank]}, it, l, split.Shape{ColorLen: 1, KeyLen: 1}, o)
		return err
	}) {
		if !errors.Is(err, errs.InvalidArgument) {
			t.Fatalf("rank %d: %v, want ErrInvalidArgument", r, err)
		}
	}
}
