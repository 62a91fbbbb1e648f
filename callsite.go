package scoll

import (
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/plan"
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
