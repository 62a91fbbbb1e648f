// Package mixed joins two transports into one endpoint: messages to the
// ranks of this host go through a shared-memory endpoint (transport/shm),
// the others through a network endpoint (transport/tcp), which also
// carries what is not about moving data: call checks, aborts and the
// request-reply service.
package mixed

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/scoll/scoll/internal/errs"

	"github.com/scoll/scoll/transport"
)

// Net is what the network endpoint must offer: every rank of the job is
// reachable through it.
type Net interface {
	transport.Transport
	transport.CallAborter
	transport.Checker
	transport.Responder
	transport.Modeler
}

// Local is what the host's endpoint must offer: it speaks the job's ranks
// and reaches those for which Local is true.
type Local interface {
	transport.Transport
	transport.CallAborter
	transport.Poller
	transport.SpinHinter
	Local(rank int) bool
}

// Transport routes each message by its peer and key (see route). It
// implements the optional interfaces of transport that Net does, and
// aborts calls on both.
type Transport struct {
	net     Net
	local   Local
	exch    transport.Exchanger // local's exchanges, when it reaches every rank
	settler transport.Settler   // net's, if it has eager sends
	// localSettler is local's, if it has exchanges that need settling.
	localSettler transport.Settler
	// remote: some ranks are reached through net, whose readers run on
	// their own goroutines.
	remote bool
	nodes  []int // the node of every rank (nil: not known)
}

// SetNodes tells the endpoint the node of every rank (transport.Noder):
// nodes[r] is rank r's node. The Transport keeps the slice.
func (t *Transport) SetNodes(nodes []int) { t.nodes = nodes }

// SharesMemory reports whether the endpoint reaches some ranks through the
// host's endpoint (New's local is not nil).
func (t *Transport) SharesMemory() bool { return t.local != nil }

// Nodes returns the node of every rank, or nil when not told.
func (t *Transport) Nodes() []int { return t.nodes }

// New returns the endpoint that sends to the ranks local reaches through
// local and to the others through net. Both must be this rank's endpoints
// of the same job; the Transport owns them. When local reaches every rank
// and offers exchanges (transport.Exchanger), so does the Transport, with
// net's call records for their checks. local may be nil (no other rank on
// this host, or the host's ranks could not share memory): everything then
// goes through net, and the Transport still reports the nodes it is told,
// which every rank of the job must know alike.
func New(net Net, local Local) *Transport {
	t := &Transport{net: net, local: local}
	t.settler, _ = net.(transport.Settler)
	if local != nil {
		t.localSettler, _ = local.(transport.Settler)
	}
	if local == nil {
		return t
	}
	// A rank the network finds failed (dead, silent, gone) fails on the
	// host's path too: a silent process still looks alive there.
	if n, ok := net.(interface {
		OnPeerDown(func(rank int, err error))
	}); ok {
		if l, ok := local.(interface{ FailRank(rank int, err error) }); ok {
			n.OnPeerDown(l.FailRank)
		}
	}
	for r := range net.Size() {
		t.remote = t.remote || !local.Local(r)
	}
	x := transport.CapsOf(local).Exchanger
	ok := x != nil && !t.remote
	if ok {
		t.exch = x
		if s, ok := local.(interface{ SetChecker(transport.Checker) }); ok {
			s.SetChecker(net)
		}
	}
	return t
}

// ExchangeLimit returns the host's endpoint's limit when it reaches every
// rank, else -1 (transport.Exchanger).
func (t *Transport) ExchangeLimit() int {
	if t.exch == nil {
		return -1
	}
	return t.exch.ExchangeLimit()
}

// Exchange runs an exchange on the host's endpoint.
func (t *Transport) Exchange(ctx context.Context, x *transport.Exchange) error {
	if t.exch == nil {
		return fmt.Errorf("%w: exchanges need every rank on this host", errs.Unsupported)
	}
	return t.exch.Exchange(ctx, x)
}

// route returns m's path: the host's for collective messages to its ranks,
// the network's for the others and for every message with sequence number
// 0 (point-to-point messages, and the requests and replies of the
// network's Responder, whose handlers live there).
func (t *Transport) route(m *transport.Msg) transport.Transport {
	if m.Key.Seq != 0 && t.local != nil && t.local.Local(m.Peer) {
		return t.local
	}
	return t.net
}

// Rank returns this endpoint's rank.
func (t *Transport) Rank() int { return t.net.Rank() }

// Size returns the number of ranks.
func (t *Transport) Size() int { return t.net.Size() }

// Isend posts a send on the peer's path.
func (t *Transport) Isend(m *transport.Msg) error { return t.route(m).Isend(m) }

// Irecv posts a receive on the peer's path.
func (t *Transport) Irecv(m *transport.Msg) error { return t.route(m).Irecv(m) }

// Cancel withdraws a receive on the peer's path.
func (t *Transport) Cancel(m *transport.Msg) bool { return t.route(m).Cancel(m) }

// AbortCall fails the call on both paths; each tells its ranks.
func (t *Transport) AbortCall(comm, seq uint64, err error) {
	if t.local != nil {
		t.local.AbortCall(comm, seq, err)
	}
	t.net.AbortCall(comm, seq, err)
}

// RecordCall records a call for the network's mismatch checks.
func (t *Transport) RecordCall(comm, seq, sig uint64) { t.net.RecordCall(comm, seq, sig) }

// CheckCall checks a call through the network.
func (t *Transport) CheckCall(comm, seq, sig uint64, full bool) error {
	return t.net.CheckCall(comm, seq, sig, full)
}

// Serve serves requests over the network.
func (t *Transport) Serve(service uint64, h func(src int, req []byte) []byte) {
	t.net.Serve(service, h)
}

// Unserve stops serving a service.
func (t *Transport) Unserve(service uint64) { t.net.Unserve(service) }

// Settle settles the network's eager sends and the host's exchanges that
// did not wait for every rank (transport.Settler).
func (t *Transport) Settle(ctx context.Context, comm, seq uint64) error {
	var errNet, errLocal error
	if t.settler != nil {
		errNet = t.settler.Settle(ctx, comm, seq)
	}
	if t.localSettler != nil {
		errLocal = t.localSettler.Settle(ctx, comm, seq)
	}
	if errNet == nil {
		return errLocal
	}
	return errNet
}

// Model returns the network's costs, which bound the host's.
func (t *Transport) Model() (alpha, beta float64) { return t.net.Model() }

// Poll polls the host's endpoint, whose receives progress fastest when
// their waiter polls, and, when some ranks are on other hosts, lets the
// network's readers run: they progress on their own goroutines, which a
// waiter spinning on the host's rings would otherwise keep off the
// runtime's processor (GOMAXPROCS=1) until it parks.
func (t *Transport) Poll() {
	if t.local != nil {
		t.local.Poll()
		if t.remote {
			runtime.Gosched()
		}
	}
}

// Park tells the host's endpoint that w stopped polling.
func (t *Transport) Park(w *transport.Waiter) {
	if t.local != nil {
		t.local.Park(w)
	}
}

// Unpark undoes Park.
func (t *Transport) Unpark(w *transport.Waiter) {
	if t.local != nil {
		t.local.Unpark(w)
	}
}

// SpinHint returns the host's endpoint's hint.
func (t *Transport) SpinHint() int {
	if t.local == nil {
		return 0 // the network's receives progress on their own
	}
	return t.local.SpinHint()
}

// Close closes both endpoints.
func (t *Transport) Close() error {
	if t.local == nil {
		return t.net.Close()
	}
	return errors.Join(t.local.Close(), t.net.Close())
}

var (
	_ transport.Exchanger  = (*Transport)(nil)
	_ transport.Noder      = (*Transport)(nil)
	_ transport.Poller     = (*Transport)(nil)
	_ transport.SpinHinter = (*Transport)(nil)
	_ transport.Settler    = (*Transport)(nil)
)
