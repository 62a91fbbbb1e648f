package record_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/record"
	"github.com/scoll/scoll/transport/transporttest"
)

// TestConformance runs the transport conformance suite through recording
// endpoints.
func TestConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, size int) []transport.Transport {
		w := inproc.NewWorld(size)
		rec := record.New()
		eps := make([]transport.Transport, size)
		for r := range eps {
			eps[r] = record.Wrap(w.Endpoint(r), rec)
		}
		return eps
	})
}

// TestInterfaces checks which optional interfaces a recording endpoint
// offers: the ones the executor needs, never the shared-memory ones, also
// on communicator views.
func TestInterfaces(t *testing.T) {
	w := inproc.NewWorld(2)
	defer w.Close()
	var inner transport.Transport = w.Endpoint(0)
	ep := record.Wrap(inner, record.New())
	for name, ok := range map[string]bool{
		"Poller":      offers(ep, "Poller"),
		"Combiner":    offers(ep, "Combiner"),
		"Checker":     offers(ep, "Checker"),
		"CallAborter": offers(ep, "CallAborter"),
		"SpinHinter":  offers(ep, "SpinHinter"),
		"Grouper":     offers(ep, "Grouper"),
		"RoundMarker": offers(ep, "RoundMarker"),
	} {
		if !ok {
			t.Errorf("recording endpoint is not a %s", name)
		}
	}
	if !offers(inner, "Meeter") || !offers(inner, "Exchanger") {
		t.Fatal("inproc endpoint lost its shared-memory paths; the test checks nothing")
	}
	if offers(ep, "Meeter") || offers(ep, "Exchanger") {
		t.Error("recording endpoint offers a shared-memory path")
	}
	if offers(ep, "Modeler") != offers(inner, "Modeler") {
		t.Error("recording endpoint changes whether the transport is a Modeler")
	}
	v := transport.CapsOf(ep).Grouper.Join(transport.Group{Comm: 5 << 32, Rank: 0, Size: 2, Members: []int32{0, 1}})
	defer v.Leave()
	if !offers(v, "Checker") {
		t.Error("communicator view is not a Checker")
	}
	if offers(v, "Meeter") || offers(v, "Exchanger") {
		t.Error("communicator view offers a shared-memory path")
	}
	// A transport without the optional interfaces gets none of those
	// whose presence alone changes what callers do.
	bare := record.Wrap(bareTransport{inner}, record.New())
	if offers(bare, "Combiner") || offers(bare, "Modeler") || offers(bare, "Grouper") {
		t.Error("recording endpoint of a bare transport offers Combiner, Modeler or Grouper")
	}
	if record.Wrap(inner, nil) != inner {
		t.Error("Wrap with a nil recorder did not return the transport")
	}
}

// offers reports whether v offers the optional interface name
// (transport.CapsOf).
func offers(v any, name string) bool {
	return !reflect.ValueOf(transport.CapsOf(v)).FieldByName(name).IsNil()
}

// bareTransport hides every optional interface of a transport.
type bareTransport struct{ t transport.Transport }

func (b bareTransport) Rank() int                    { return b.t.Rank() }
func (b bareTransport) Size() int                    { return b.t.Size() }
func (b bareTransport) Isend(m *transport.Msg) error { return b.t.Isend(m) }
func (b bareTransport) Irecv(m *transport.Msg) error { return b.t.Irecv(m) }
func (b bareTransport) Cancel(m *transport.Msg) bool { return b.t.Cancel(m) }
func (b bareTransport) Close() error                 { return b.t.Close() }

// rank posts rounds on a recording endpoint the way the executor does:
// one waiter, EndRound after each wait.
type rank struct {
	t  *testing.T
	tr transport.Transport
	w  *transport.Waiter
	ms []*transport.Msg
}

func newRank(t *testing.T, tr transport.Transport) *rank {
	return &rank{t: t, tr: tr, w: transport.NewWaiter(0)}
}

func (r *rank) post(send bool, peer int, tag int64, n int) {
	m := &transport.Msg{Peer: peer, Key: transport.Key{Comm: 9, Tag: tag}, Buf: make([]byte, n), W: r.w, Eager: true}
	if err := transport.Post(r.tr, m, send); err != nil {
		r.t.Fatal(err)
	}
	r.ms = append(r.ms, m)
}

func (r *rank) wait() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.w.Wait(ctx); err != nil {
		r.t.Fatal(err)
	}
	for _, m := range r.ms {
		if m.Err != nil {
			r.t.Fatal(m.Err)
		}
	}
	r.ms = r.ms[:0]
	transport.EndRound(r.tr, r.w)
}

// world returns n recording endpoints of one in-process world.
func world(t *testing.T, n int) ([]*rank, *record.Recorder) {
	w := inproc.NewWorld(n)
	t.Cleanup(w.Close)
	rec := record.New()
	rs := make([]*rank, n)
	for r := range rs {
		rs[r] = newRank(t, record.Wrap(w.Endpoint(r), rec))
	}
	return rs, rec
}

func trace(t *testing.T, rec *record.Recorder) *record.Trace {
	t.Helper()
	tr, err := rec.Trace()
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// wantRanks fails the test unless rec's trace has the rounds want.
func wantRanks(t *testing.T, rec *record.Recorder, want [][]record.Round) {
	t.Helper()
	if got := trace(t, rec); !reflect.DeepEqual(got.Ranks, want) {
		t.Fatalf("got %v, want %v", got.Ranks, want)
	}
}

func rd(ops ...record.Op) record.Round { return ops }
func s(peer int, n int64) record.Op    { return record.Op{Peer: peer, Bytes: n} }
func r(peer int, n int64) record.Op    { return record.Op{Recv: true, Peer: peer, Bytes: n} }

// TestRounds records an exchange, a zero-byte message and a cancelled
// receive, and checks the rounds.
func TestRounds(t *testing.T) {
	rs, rec := world(t, 3)
	// Round 0: ranks 0 and 1 exchange; rank 2 waits for nothing yet.
	// (Shaped like TestKeyOrder's "within a round" script, with other
	// keys and directions: test data, not shared logic.)
	rs[0].post(true, 1, 0, 16)
	rs[0].post(false, 1, 0, 16)
	rs[1].post(false, 0, 0, 16)
	rs[1].post(true, 0, 0, 16)
	rs[0].wait()
	rs[1].wait()
	// Round 1: an empty message from 1 to 2; rank 2 also posts a receive
	// from 0 that it cancels.
	rs[1].post(true, 2, 1, 0)
	rs[2].post(false, 1, 1, 0)
	m := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 9, Tag: 7}, Buf: make([]byte, 4), W: rs[2].w}
	rs[2].w.Add(1)
	if err := rs[2].tr.Irecv(m); err != nil {
		t.Fatal(err)
	}
	if !rs[2].tr.Cancel(m) {
		t.Fatal("cancel failed")
	}
	rs[2].w.Done()
	rs[1].wait()
	rs[2].wait()
	// Messages to self are not in the trace.
	rs[0].post(true, 0, 3, 8)
	rs[0].post(false, 0, 3, 8)
	rs[0].wait()

	got := trace(t, rec)
	want := &record.Trace{Size: 3, Ranks: [][]record.Round{
		{rd(s(1, 16), r(1, 16))},
		{rd(r(0, 16), s(0, 16)), rd(s(2, 0))},
		{rd(r(1, 0))},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got.Ranks, want.Ranks)
	}
	if got.Messages() != 3 || got.Bytes() != 32 || got.Rounds() != 2 {
		t.Fatalf("messages %d bytes %d rounds %d", got.Messages(), got.Bytes(), got.Rounds())
	}
}

// TestKeyOrder: messages between two ranks are matched by key as the
// transport matched them, and each round's messages reordered so that
// posting order agrees.
func TestKeyOrder(t *testing.T) {
	// Rank 0 sends tag 1 (10 bytes), then tag 2 (20 bytes) in a round of
	// its own.
	sendTwoRounds := func(r *rank) {
		r.post(true, 1, 1, 10)
		r.wait()
		r.post(true, 1, 2, 20)
		r.wait()
	}
	for _, c := range []struct {
		name string
		run  func(rs []*rank)
		want [][]record.Round
	}{{
		name: "within a round",
		run: func(rs []*rank) {
			rs[0].post(true, 1, 1, 10)
			rs[0].post(true, 1, 2, 20)
			rs[1].post(false, 0, 2, 20)
			rs[1].post(false, 0, 1, 10)
			rs[0].wait()
			rs[1].wait()
		},
		want: [][]record.Round{{rd(s(1, 10), s(1, 20))}, {rd(r(0, 10), r(0, 20))}},
	}, {
		// One round of rank 1 takes messages of two rounds of rank 0.
		name: "sender rounds",
		run: func(rs []*rank) {
			sendTwoRounds(rs[0])
			rs[1].post(false, 0, 2, 20)
			rs[1].post(false, 0, 1, 10)
			rs[1].wait()
		},
		want: [][]record.Round{{rd(s(1, 10)), rd(s(1, 20))}, {rd(r(0, 10), r(0, 20))}},
	}, {
		// Eager sends taken in the other order, in two rounds: no
		// schedule says that; the receives take the sends' sizes in
		// order.
		name: "crossing rounds",
		run: func(rs []*rank) {
			sendTwoRounds(rs[0])
			rs[1].post(false, 0, 2, 20)
			rs[1].wait()
			rs[1].post(false, 0, 1, 10)
			rs[1].wait()
		},
		want: [][]record.Round{{rd(s(1, 10)), rd(s(1, 20))}, {rd(r(0, 10)), rd(r(0, 20))}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			rs, rec := world(t, 2)
			c.run(rs)
			wantRanks(t, rec, c.want)
		})
	}
}

// TestConcurrentRounds: rounds posted with different waiters stay whole,
// in the order of their first operation.
func TestConcurrentRounds(t *testing.T) {
	rs, rec := world(t, 2)
	other := newRank(t, rs[0].tr) // a second "call" on rank 0
	rs[0].post(true, 1, 1, 1)
	other.post(true, 1, 2, 2)
	rs[0].post(true, 1, 3, 3)
	rs[1].post(false, 0, 1, 1)
	rs[1].post(false, 0, 3, 3)
	rs[1].wait()
	rs[1].post(false, 0, 2, 2)
	rs[1].wait()
	rs[0].wait()
	other.wait()
	wantRanks(t, rec, [][]record.Round{{rd(s(1, 1), s(1, 3)), rd(s(1, 2))}, {rd(r(0, 1), r(0, 3)), rd(r(0, 2))}})
}

// TestRecorderErrors: what cannot become a trace.
func TestRecorderErrors(t *testing.T) {
	if _, err := record.New().Trace(); !errors.Is(err, record.ErrInconsistent) {
		t.Errorf("empty recorder: %v", err)
	}
	// A send nobody receives.
	rs, rec := world(t, 2)
	rs[0].post(true, 1, 0, 4)
	rs[0].wait()
	if _, err := rec.Trace(); !errors.Is(err, record.ErrInconsistent) {
		t.Errorf("unreceived send: %v", err)
	}
	// Endpoints of groups of different sizes.
	rec = record.New()
	w2, w3 := inproc.NewWorld(2), inproc.NewWorld(3)
	defer w2.Close()
	defer w3.Close()
	record.Wrap(w2.Endpoint(0), rec)
	record.Wrap(w3.Endpoint(0), rec)
	if _, err := rec.Trace(); !errors.Is(err, record.ErrInconsistent) {
		t.Errorf("mixed groups: %v", err)
	}
}

// servingWorld gives in-process endpoints a transport.Responder: a request
// is answered on the requester's goroutine by the handler its destination
// serves, and the destination's endpoint sends the reply.
type servingWorld struct {
	mu  sync.Mutex
	eps []transport.Transport
	hs  map[[2]uint64]func(int, []byte) []byte // by (rank, service)
}

type servingEP struct {
	transport.Transport
	w    *servingWorld
	rank int
}

func (e *servingEP) Serve(svc uint64, h func(int, []byte) []byte) {
	e.w.mu.Lock()
	e.w.hs[[2]uint64{uint64(e.rank), svc}] = h
	e.w.mu.Unlock()
}

func (e *servingEP) Unserve(svc uint64) {
	e.w.mu.Lock()
	delete(e.w.hs, [2]uint64{uint64(e.rank), svc})
	e.w.mu.Unlock()
}

func (e *servingEP) Isend(m *transport.Msg) error {
	e.w.mu.Lock()
	h := e.w.hs[[2]uint64{uint64(m.Peer), m.Key.Comm}]
	e.w.mu.Unlock()
	if h == nil || !transport.IsRequest(m.Key) {
		return e.Transport.Isend(m)
	}
	rm := &transport.Msg{Peer: e.rank, Key: transport.ReplyKey(m.Key), Buf: h(e.rank, m.Buf), Eager: true, W: transport.NewWaiter(0)}
	rm.W.Add(1)
	if err := e.w.eps[m.Peer].Isend(rm); err != nil {
		return err
	}
	m.W.Done()
	return nil
}

func (e *servingEP) Poll()                      { e.Transport.(transport.Poller).Poll() }
func (e *servingEP) Park(w *transport.Waiter)   { e.Transport.(transport.Poller).Park(w) }
func (e *servingEP) Unpark(w *transport.Waiter) { e.Transport.(transport.Poller).Unpark(w) }

// TestResponder: a request answered by the peer's handler while the peer
// waits is recorded at both ends, the owner's part in the round it waited
// in.
func TestResponder(t *testing.T) {
	w := inproc.NewWorld(2)
	defer w.Close()
	sw := &servingWorld{eps: []transport.Transport{w.Endpoint(0), w.Endpoint(1)}, hs: map[[2]uint64]func(int, []byte) []byte{}}
	rec := record.New()
	var rs []*rank
	for i := range 2 {
		ep := record.Wrap(&servingEP{Transport: w.Endpoint(i), w: sw, rank: i}, rec)
		if !offers(ep, "Responder") {
			t.Fatal("recording endpoint of a Responder is not one")
		}
		rs = append(rs, newRank(t, ep))
	}
	const svc = 1 << 61
	rs[1].tr.(transport.Responder).Serve(svc, func(src int, req []byte) []byte { return make([]byte, 3*len(req)) })
	posted, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		rs[1].post(false, 0, 5, 8)
		close(posted)
		rs[1].wait()
	}()
	<-posted
	// Rank 0 asks (the reply's receive first, as the root's asker posts)
	// and then sends what rank 1 waits for.
	req := &transport.Msg{Peer: 1, Key: transport.Key{Comm: svc, Tag: 42}, Buf: make([]byte, 4), W: rs[0].w, Eager: true}
	rep := &transport.Msg{Peer: 1, Key: transport.ReplyKey(req.Key), Buf: make([]byte, 12), W: rs[0].w}
	rs[0].w.Add(2)
	if err := rs[0].tr.Irecv(rep); err != nil {
		t.Fatal(err)
	}
	if err := rs[0].tr.Isend(req); err != nil {
		t.Fatal(err)
	}
	rs[0].wait()
	if rep.N != 12 {
		t.Fatalf("reply of %d bytes", rep.N)
	}
	rs[0].post(true, 1, 5, 8)
	rs[0].wait()
	<-done
	// Rank 1's receives from rank 0 in the order rank 0 sent: the
	// request, then the data.
	wantRanks(t, rec, [][]record.Round{{rd(r(1, 12), s(1, 4)), rd(s(1, 8))}, {rd(r(0, 4), r(0, 8), s(0, 12))}})
}
