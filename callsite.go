package scoll

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// Predictor predicts the ranks' arrival times at a call site's next call
// from those of the calls before, relative to each call's earliest rank.
// Every rank feeds its own predictor the same history, so implementations
// must be deterministic. See WithCallSite and NewSMA.
type Predictor = arrival.Predictor

// NewSMA returns the predictor that averages each rank's arrival times
// over the last n calls (the simple moving average; Marendic et al. use n
// = 5, scoll's default).
func NewSMA(n int) Predictor { return arrival.NewSMA(n) }

// WithCallSite names the call site a collective call belongs to (any id,
// the same on every rank; a loop's reduction, say). scoll then measures
// every rank's arrival at each call of the site on a common clock (clock
// offsets between processes are estimated at the site's first call), the
// ranks share their measurements every few calls (WithShareEvery; one
// small allgather after the call), and a Predictor (WithPredictor; by
// default NewSMA(5)) predicts the next call's arrivals. The clairvoyant
// reduce uses the prediction when the call gives no WithArrivals; its
// schedule is made again only when the prediction, in whole rounds,
// changes. Every rank must use a site for the same sequence of calls.
// Blocking and persistent calls: a persistent request at a site (its Init
// given WithCallSite) measures each Start and shares at its Wait, and each
// Start takes the plan of the latest prediction; non-blocking calls are
// not measured. A call that fails ends the site's predictions on that
// rank.
func WithCallSite(id string) CallOption { return func(o *plan.Options) { o.CallSite = id } }

// WithShareEvery makes a call site (WithCallSite) share its measurements
// every k calls (default 1; k < 1 fails with ErrInvalidArgument). Larger
// k spends fewer allgathers and predicts from older data.
func WithShareEvery(k int) CallOption {
	return func(o *plan.Options) {
		o.ShareEvery = k
		if k == 0 {
			o.ShareEvery = -1 // explicit 0: refused by the checks
		}
	}
}

// WithPredictor sets the predictor a call site (WithCallSite) makes at its
// first call: newPredictor is called once per site and rank.
func WithPredictor(newPredictor func() Predictor) CallOption {
	return func(o *plan.Options) { o.NewPredictor = newPredictor }
}

// epoch is this process's clock origin.
var epoch = time.Now()

// clockSamples is the number of ping-pongs per rank of the clock
// synchronisation.
const clockSamples = 8

// now returns the time on c's common clock: this process's clock, shifted
// by its offset to rank 0's.
func (c *Comm) now() time.Duration { return time.Since(epoch) + c.clockOff }

// site returns the call site of o.CallSite, made at its first call (when
// the clock is synchronised, collectively, if it was not).
func (c *Comm) site(ctx context.Context, o *plan.Options) (*arrival.Site, error) {
	c.sitesMu.Lock()
	s := c.sites[o.CallSite]
	c.sitesMu.Unlock()
	if s != nil {
		return s, nil
	}
	if err := c.syncClock(ctx); err != nil {
		return nil, fmt.Errorf("clock synchronisation: %w", err)
	}
	p := Predictor(arrival.NewSMA(5))
	if o.NewPredictor != nil {
		p = o.NewPredictor()
	}
	s = arrival.NewSite(max(o.ShareEvery, 1), p)
	c.sitesMu.Lock()
	if c.sites == nil {
		c.sites = map[string]*arrival.Site{}
	}
	c.sites[o.CallSite] = s
	c.sitesMu.Unlock()
	return s, nil
}

// syncClock estimates, once, the offset of c's clock to rank 0's (none on
// transports whose ranks share a clock): every rank ping-pongs with rank 0
// clockSamples times and keeps the offset of the fastest round trip.
func (c *Comm) syncClock(ctx context.Context) error {
	if c.clockSynced || c.size == 1 {
		return nil
	}
	if cs, ok := c.t.(transport.ClockSharer); ok && cs.SharesClock() {
		c.clockSynced = true
		return nil
	}
	// The ping-pongs run in a message space of their own: a call's
	// (every rank claims its sequence number here).
	conn := c.conn(sigClock)
	var buf [8]byte
	one := func(peer int, send bool) error {
		if send {
			return conn.Round(ctx, []split.Send{{To: peer, Data: buf[:]}}, nil)
		}
		return conn.Round(ctx, nil, []split.Recv{{From: peer, Buf: buf[:]}})
	}
	if c.rank == 0 {
		for r := 1; r < c.size; r++ {
			for range clockSamples {
				if err := one(r, false); err != nil {
					return err
				}
				binary.LittleEndian.PutUint64(buf[:], uint64(time.Since(epoch)))
				if err := one(r, true); err != nil {
					return err
				}
			}
		}
	} else {
		var sent, remote, got [clockSamples]time.Duration
		for i := range clockSamples {
			sent[i] = time.Since(epoch)
			if err := one(0, true); err != nil {
				return err
			}
			if err := one(0, false); err != nil {
				return err
			}
			got[i] = time.Since(epoch)
			remote[i] = time.Duration(binary.LittleEndian.Uint64(buf[:]))
		}
		c.clockOff, _ = arrival.Offset(sent[:], remote[:], got[:])
	}
	c.clockSynced = true
	return nil
}

// sigClock is the signature of the clock synchronisation's messages.
const sigClock = 0x636c6f636b // "clock"

// atSite prepares call pc with options o at its call site (o.CallSite set):
// it records the arrival and, for the clairvoyant reduce without arrival
// times, gives it the site's prediction in whole rounds. It returns the
// site and the arrival for arrived.
func (c *Comm) atSite(ctx context.Context, pc *plan.Call, o *plan.Options) (*arrival.Site, time.Duration, error) {
	s, err := c.site(ctx, o)
	if err != nil {
		return nil, 0, err
	}
	at := c.now()
	if pred := s.Prediction(); pred != nil && o.Arrivals == nil && o.Alg == algorithms.Clairvoyant && len(pred) == c.size {
		if err := c.agreeModel(ctx, !o.RoundTimeSet); err != nil {
			return nil, 0, err
		}
		d := plan.RoundTime(pc, o, &plan.Defaults{Machine: c.machine, Rounds: c.roundModel, LogP: c.logPModel})
		o.Arrivals = inRounds(pred, d)
	}
	return s, at, nil
}

// inRounds rounds arrival times up to whole rounds of d, as the schedule
// sees them, so that predictions that differ within a round share a plan.
func inRounds(a []time.Duration, d time.Duration) []time.Duration {
	out := make([]time.Duration, len(a))
	for r, x := range a {
		if d > 0 {
			out[r] = time.Duration(math.Ceil(float64(x)/float64(d)-1e-9)) * d
		}
	}
	return out
}

// arrived records the arrival at a site after its call ran (err: how it
// ended) and shares the measurements when they are due: one allgather of
// every rank's unshared arrival times.
func (c *Comm) arrived(ctx context.Context, s *arrival.Site, at time.Duration, err error) error {
	if err != nil {
		s.Failed()
		return err
	}
	if !s.Arrived(at) {
		return nil
	}
	mine := s.Pending()
	k := len(mine)
	all := make([]int64, k*c.size)
	send := make([]int64, k)
	for i, a := range mine {
		send[i] = int64(a)
	}
	if err := Allgather(ctx, c, send, all); err != nil {
		s.Failed()
		return fmt.Errorf("sharing arrival times: %w", err)
	}
	rows := make([][]time.Duration, c.size)
	for r := range rows {
		rows[r] = make([]time.Duration, k)
		for i := range k {
			rows[r][i] = time.Duration(all[r*k+i])
		}
	}
	s.Shared(rows)
	return nil
}
