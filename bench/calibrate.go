package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/kernels"
	"gonum.org/v1/gonum/stat"
)

// Calibration holds the α-β-γ parameters measured on the in-process
// transport, and the points they were fitted to.
type Calibration struct {
	// Alpha is the start-up time of a message (s), Beta the time per byte
	// moved (s/B), Gamma the time per byte combined by a float32 sum (s/B).
	Alpha, Beta, Gamma float64
	// L, O and G are the LogP latency, overhead and gap (s) of 8-byte
	// point-to-point messages (MeasureLogP).
	L, O, G float64
	// Points are the one-way times of the ping-pong, per message size.
	Points []CalPoint
}

// CalPoint is one measured message size.
type CalPoint struct {
	Bytes   int     `json:"bytes"`
	OneWayS float64 `json:"one_way_s"`
}

// calSizes are the ping-pong message sizes.
var calSizes = []int{8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20}

// Calibrate measures α and β of collective messages between two in-process
// ranks, and γ of the reduction kernel. The messages are those of a
// schedule (a two-rank linear broadcast whose root alternates, so each call
// waits for the previous one's message: a ping-pong through the same path
// every algorithm's messages take), not the shared-memory fast paths. β is
// the least-squares slope of the one-way time over the sizes from 32 KiB;
// α is the mean over the sizes up to 512 B of the time less β per byte.
// budget bounds the time spent per size.
func Calibrate(ctx context.Context, budget time.Duration) (*Calibration, error) {
	if budget <= 0 {
		return nil, errors.New("bench: calibration budget must be positive")
	}
	cal := &Calibration{}
	err := scoll.Run(ctx, 2, func(ctx context.Context, c *scoll.Comm) error {
		opt := scoll.WithAlgorithm("linear")
		for _, n := range calSizes {
			buf := make([]byte, n)
			// calls runs k back-to-back calls; the root alternates, so each
			// call waits for the previous call's message.
			calls := func(k int) (time.Duration, error) {
				start := time.Now()
				for i := range k {
					if err := scoll.Bcast(ctx, c, buf, i%2, opt); err != nil {
						return 0, err
					}
				}
				return time.Since(start), nil
			}
			probe := 10
			d, err := calls(probe)
			if err != nil {
				return err
			}
			// Rank 0 sizes the timed run from the probe and tells rank 1.
			k := []int64{0}
			if c.Rank() == 0 {
				per := max(d/time.Duration(probe), time.Nanosecond)
				k[0] = int64(min(max(int(budget/per), 20), 1<<22)) &^ 1
			}
			if err := scoll.Bcast(ctx, c, k, 0); err != nil {
				return err
			}
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			d, err = calls(int(k[0]))
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				cal.Points = append(cal.Points, CalPoint{Bytes: n, OneWayS: d.Seconds() / float64(k[0])})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cal.fit()
	cal.Gamma = kernels.MeasureGamma(budget)
	if cal.L, cal.O, cal.G, err = MeasureLogP(ctx, budget); err != nil {
		return nil, err
	}
	return cal, nil
}

// MeasureLogP measures the LogP parameters of 8-byte point-to-point
// messages (Comm.Send, Comm.Recv) between two in-process ranks, after
// Culler et al.'s recipe: the overhead o is the mean of the sender's time
// per send in a burst and the receiver's time per receive of messages that
// have all arrived; the latency L is the one-way time of a ping-pong less
// 2o; the gap g is the time per message of a burst the receiver drains as
// it arrives, less the ping-pong's round trip that starts and ends it.
// budget bounds the time of each measurement.
func MeasureLogP(ctx context.Context, budget time.Duration) (L, o, g float64, err error) {
	var res [3]float64
	err = scoll.Run(ctx, 2, func(ctx context.Context, c *scoll.Comm) error {
		m := logPMeter{c: c, buf: make([]byte, 8)}
		k, err := m.size(ctx, budget)
		if err != nil {
			return err
		}
		rtt, err := m.pingPong(ctx, k)
		if err != nil {
			return err
		}
		oSend, oRecv, err := m.overheads(ctx, k)
		if err != nil {
			return err
		}
		burst, err := m.burst(ctx, k)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			o := (oSend + oRecv) / 2
			res = [3]float64{max(rtt/2-2*o, 0), o, max((burst-rtt)/float64(k-1), 0)}
		}
		return nil
	})
	return res[0], res[1], res[2], err
}

// logPMeter runs MeasureLogP's exchanges on a two-rank communicator.
type logPMeter struct {
	c   *scoll.Comm
	buf []byte
}

// size returns the message count of each measurement: what a probe of
// 100 round trips says fits in budget, at least 100 and at most 1<<16,
// equal on both ranks.
func (m *logPMeter) size(ctx context.Context, budget time.Duration) (int, error) {
	rtt, err := m.pingPong(ctx, 100)
	if err != nil {
		return 0, err
	}
	k := []int64{int64(min(max(budget.Seconds()/max(rtt, 1e-9), 100), 1<<16))}
	return int(k[0]), scoll.Bcast(ctx, m.c, k, 0)
}

// pingPong returns rank 0's mean round-trip time over k round trips.
func (m *logPMeter) pingPong(ctx context.Context, k int) (float64, error) {
	d, err := m.timed(ctx, func() error {
		for range k {
			if err := m.stream(ctx, 0, 1); err != nil {
				return err
			}
			if err := m.stream(ctx, 1, 1); err != nil {
				return err
			}
		}
		return nil
	})
	return d / float64(k), err
}

// timed runs fn on both ranks after a barrier and returns its time in
// seconds.
func (m *logPMeter) timed(ctx context.Context, fn func() error) (float64, error) {
	if err := m.c.Barrier(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	err := fn()
	return time.Since(start).Seconds(), err
}

// stream sends k 8-byte messages from rank from to the other, which
// receives them.
func (m *logPMeter) stream(ctx context.Context, from, k int) error {
	for range k {
		var err error
		if m.c.Rank() == from {
			err = m.c.Send(ctx, 1-from, 0, m.buf)
		} else {
			_, err = m.c.Recv(ctx, from, 0, m.buf)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// overheads returns rank 0's time per send of a burst of k and rank 1's
// time per receive of k messages that all arrived before it began (known
// on rank 0 only).
func (m *logPMeter) overheads(ctx context.Context, k int) (send, recv float64, err error) {
	// Eager sends complete at once: rank 0's time is its sends' alone.
	send, err = m.timed(ctx, func() error {
		if m.c.Rank() == 0 {
			return m.stream(ctx, 0, k)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	// The messages now wait at rank 1.
	t := []float64{0}
	t[0], err = m.timed(ctx, func() error {
		if m.c.Rank() == 1 {
			return m.stream(ctx, 0, k)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if err := scoll.Bcast(ctx, m.c, t, 1); err != nil {
		return 0, 0, err
	}
	return send / float64(k), t[0] / float64(k), nil
}

// burst returns rank 0's time from the start of a burst of k messages,
// which rank 1 receives as they come, to the arrival of rank 1's reply
// after the last.
func (m *logPMeter) burst(ctx context.Context, k int) (float64, error) {
	return m.timed(ctx, func() error {
		if err := m.stream(ctx, 0, k); err != nil {
			return err
		}
		return m.stream(ctx, 1, 1)
	})
}

// fit sets Alpha and Beta from the points: β is the least-squares slope
// (gonum's stat.LinearRegression) of the one-way time over the sizes from
// 32 KiB, α the mean (stat.Mean) over the sizes up to 512 B of the time
// less β per byte; neither is negative.
func (cal *Calibration) fit() {
	var xs, ys, small []float64
	for _, p := range cal.Points {
		if p.Bytes >= 32<<10 {
			xs, ys = append(xs, float64(p.Bytes)), append(ys, p.OneWayS)
		}
	}
	if len(xs) >= 2 && slices.Min(xs) < slices.Max(xs) {
		_, beta := stat.LinearRegression(xs, ys, nil, false)
		cal.Beta = max(0, beta)
	}
	for _, p := range cal.Points {
		if p.Bytes <= 512 {
			small = append(small, p.OneWayS-cal.Beta*float64(p.Bytes))
		}
	}
	if len(small) > 0 {
		cal.Alpha = max(0, stat.Mean(small, nil))
	}
}

// String summarises the calibration.
func (cal *Calibration) String() string {
	return fmt.Sprintf("α = %.3g s, β = %.3g s/B (%.3g GB/s), γ = %.3g s/B (%.3g GB/s); LogP L = %.3g s, o = %.3g s, g = %.3g s",
		cal.Alpha, cal.Beta, 1e-9/max(cal.Beta, 1e-30), cal.Gamma, 1e-9/max(cal.Gamma, 1e-30), cal.L, cal.O, cal.G)
}
