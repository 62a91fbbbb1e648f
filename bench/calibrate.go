package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/kernels"
)

// Calibration holds the α-β-γ parameters measured on the in-process
// transport, and the points they were fitted to.
type Calibration struct {
	// Alpha is the start-up time of a message (s), Beta the time per byte
	// moved (s/B), Gamma the time per byte combined by a float32 sum (s/B).
	Alpha, Beta, Gamma float64
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
	return cal, nil
}

// fit sets Alpha and Beta from the points.
func (cal *Calibration) fit() {
	var sx, sy, sxx, sxy, n float64
	for _, p := range cal.Points {
		if p.Bytes >= 32<<10 {
			x, y := float64(p.Bytes), p.OneWayS
			sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
		}
	}
	if d := n*sxx - sx*sx; n >= 2 && d > 0 {
		cal.Beta = max(0, (n*sxy-sx*sy)/d)
	}
	var a, m float64
	for _, p := range cal.Points {
		if p.Bytes <= 512 {
			a += p.OneWayS - cal.Beta*float64(p.Bytes)
			m++
		}
	}
	if m > 0 {
		cal.Alpha = max(0, a/m)
	}
}

// String summarises the calibration.
func (cal *Calibration) String() string {
	return fmt.Sprintf("α = %.3g s, β = %.3g s/B (%.3g GB/s), γ = %.3g s/B (%.3g GB/s)",
		cal.Alpha, cal.Beta, 1e-9/max(cal.Beta, 1e-30), cal.Gamma, 1e-9/max(cal.Gamma, 1e-30))
}
