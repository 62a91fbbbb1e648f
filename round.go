package scoll

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/transport"
)

// ParamsEnv names the environment variable that points at a machine
// parameters file (the JSON scoll calibrate writes: "alpha", "beta" and
// "gamma" in seconds and seconds per byte). The clairvoyant reduce takes
// its round time from it when the call gives none (WithRoundTime).
const ParamsEnv = "SCOLL_PARAMS"

// measuredGamma is this machine's γ, measured once when first needed.
var measuredGamma = sync.OnceValue(func() float64 { return kernels.MeasureGamma(4 * time.Millisecond) })

// calibrated reads the parameters file of ParamsEnv, once; ok is false
// without one or when it cannot be read.
var calibrated = sync.OnceValues(func() (algorithms.Machine, bool) {
	path := os.Getenv(ParamsEnv)
	if path == "" {
		return algorithms.Machine{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return algorithms.Machine{}, false
	}
	var m struct{ Alpha, Beta, Gamma float64 }
	if json.Unmarshal(b, &m) != nil || m.Alpha <= 0 || m.Beta < 0 || m.Gamma < 0 {
		return algorithms.Machine{}, false
	}
	return algorithms.Machine{Alpha: m.Alpha, Beta: m.Beta, Gamma: m.Gamma}, true
})

// roundModel returns the machine model of the clairvoyant reduce's round
// time: the model every rank of c agreed on (agreeRounds) once it has.
func (c *Comm) roundModel() algorithms.Machine {
	if c.rounds != nil {
		return *c.rounds
	}
	return c.localRounds()
}

// localRounds returns this process's round model: the calibrated
// parameters (ParamsEnv), else the transport's α and β with this machine's
// measured γ.
func (c *Comm) localRounds() algorithms.Machine {
	if c.roundsHook != nil {
		return c.roundsHook(c.rank)
	}
	if m, ok := calibrated(); ok {
		return m
	}
	m := c.machine
	m.Gamma = measuredGamma()
	return m
}

// agreeRounds makes rank 0's round model every rank's before the first
// call on c that needs it (need) plans: the model sets the clairvoyant
// reduce's segment count and the round time that turns arrivals into
// rounds, so ranks whose measured γ or parameters file differ would
// otherwise build different schedules. Every rank reaches it at the same
// call (options are equal on every rank), so it costs one 24-byte bcast
// per communicator; none where the ranks share a process (and with it the
// measured γ and the parameters file).
func (c *Comm) agreeRounds(ctx context.Context, need bool) error {
	if c.rounds != nil || !need {
		return nil
	}
	if cs, ok := c.t.(transport.ClockSharer); ok && cs.SharesClock() && c.roundsHook == nil {
		m := c.localRounds()
		c.rounds = &m
		return nil
	}
	m := c.localRounds()
	v := []float64{m.Alpha, m.Beta, m.Gamma}
	if err := Bcast(ctx, c, v, 0, agreeAlgBcast); err != nil {
		return fmt.Errorf("agreeing on the round model: %w", err)
	}
	m.Alpha, m.Beta, m.Gamma = v[0], v[1], v[2]
	c.rounds = &m
	return nil
}

// agreeAlgBcast is the round-model agreement's bcast: a binomial tree,
// named to spare the default choice's evaluation.
var agreeAlgBcast = WithAlgorithm("binomial")
