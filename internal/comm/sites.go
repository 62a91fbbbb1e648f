package comm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"sync"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/split"
)

// sites are a communicator's call sites: their records, and the offset
// of this rank's clock to rank 0's, estimated at the first site's first
// call.
type sites struct {
	mu       sync.Mutex
	sites    map[string]*arrival.Site
	clockOff time.Duration
	synced   bool
}

// epoch is this process's clock origin.
var epoch = time.Now()

// clockSamples is the number of ping-pongs per rank of the clock
// synchronisation.
const clockSamples = 8

// now returns the time on c's common clock: this process's clock, shifted
// by its offset to rank 0's.
func (c *Comm) now() time.Duration { return time.Since(epoch) + c.sites.clockOff }

// site returns the call site of o.CallSite, made at its first call (when
// the clock is synchronised, collectively, if it was not).
func (c *Comm) site(ctx context.Context, o *plan.Options) (*arrival.Site, error) {
	c.sites.mu.Lock()
	s := c.sites.sites[o.CallSite]
	c.sites.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if err := c.syncClock(ctx); err != nil {
		return nil, fmt.Errorf("clock synchronisation: %w", err)
	}
	p := arrival.Predictor(arrival.NewSMA(5))
	if o.NewPredictor != nil {
		p = o.NewPredictor()
	}
	s = arrival.NewSite(max(o.ShareEvery, 1), p)
	c.sites.mu.Lock()
	if c.sites.sites == nil {
		c.sites.sites = map[string]*arrival.Site{}
	}
	c.sites.sites[o.CallSite] = s
	c.sites.mu.Unlock()
	return s, nil
}

// syncClock estimates, once, the offset of c's clock to rank 0's (none on
// transports whose ranks share a clock): every rank ping-pongs with rank 0
// clockSamples times and keeps the offset of the fastest round trip.
func (c *Comm) syncClock(ctx context.Context) error {
	if c.sites.synced || c.size == 1 {
		return nil
	}
	if cs := c.rs.tc.ClockSharer; cs != nil && cs.SharesClock() {
		c.sites.synced = true
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
		c.sites.clockOff, _ = arrival.Offset(sent[:], remote[:], got[:])
	}
	c.sites.synced = true
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
		d := plan.RoundTime(pc, o, &plan.Defaults{Machine: c.layout.machine, Rounds: c.roundModel, LogP: c.logPModel})
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
	if err := c.Int64s(ctx, plan.Args{Coll: schedule.Allgather}, send, all, 0, ""); err != nil {
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

// Prediction returns the arrival times call site id of c predicts for its
// next call (nil: none).
func (c *Comm) Prediction(id string) []time.Duration {
	c.sites.mu.Lock()
	defer c.sites.mu.Unlock()
	if s := c.sites.sites[id]; s != nil {
		return s.Prediction()
	}
	return nil
}

// ClockOffset returns c's estimated clock offset to rank 0 and whether it
// was estimated.
func (c *Comm) ClockOffset() (time.Duration, bool) { return c.sites.clockOff, c.sites.synced }
