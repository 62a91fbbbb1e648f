package comm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
)

// ParamsEnv names the environment variable that points at a machine
// parameters file (package scoll exports it and documents the file).
const ParamsEnv = "SCOLL_PARAMS"

// measuredGamma is this machine's γ, measured once when first needed.
var measuredGamma = sync.OnceValue(func() float64 { return kernels.MeasureGamma(4 * time.Millisecond) })

// localModel is a process's machine model: α, β, γ and, when known, the
// LogP parameters.
type localModel struct {
	m  algorithms.Machine
	lp *algorithms.LogP
}

// calibrated reads the parameters file of ParamsEnv, once; ok is false
// without one or when it cannot be read or lacks α, β and γ. Its LogP part
// is nil unless L, o and g build a tree (algorithms.CheckLogP).
var calibrated = sync.OnceValues(func() (localModel, bool) {
	path := os.Getenv(ParamsEnv)
	if path == "" {
		return localModel{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return localModel{}, false
	}
	return parseParams(b)
})

// parseParams reads a parameters file's machine model (see calibrated).
func parseParams(b []byte) (localModel, bool) {
	var f struct {
		Alpha, Beta, Gamma float64
		L                  float64 `json:"latency"`
		O                  float64 `json:"overhead"`
		G                  float64 `json:"gap"`
	}
	if json.Unmarshal(b, &f) != nil || f.Alpha <= 0 || f.Beta < 0 || f.Gamma < 0 {
		return localModel{}, false
	}
	lm := localModel{m: algorithms.Machine{Alpha: f.Alpha, Beta: f.Beta, Gamma: f.Gamma}}
	if lp := (algorithms.LogP{L: f.L, O: f.O, G: f.G}); algorithms.CheckLogP(lp) == nil {
		lm.lp = &lp
	}
	return lm, true
}

// roundModel returns the machine model of the clairvoyant reduce's round
// time: the model every rank of c agreed on (agreeModel) once it has.
func (c *Comm) roundModel() algorithms.Machine { return c.model().m }

// logPModel returns the LogP model of the fibonacci trees named without
// WithLogP: the one every rank of c agreed on (nil: algorithms.DefaultLogP).
func (c *Comm) logPModel() *algorithms.LogP { return c.model().lp }

// model returns the machine model every rank of c agreed on, or this
// process's before they have.
func (c *Comm) model() localModel {
	if c.agreed != nil {
		return *c.agreed
	}
	return c.localModel()
}

// localModel returns this process's machine model: the calibrated
// parameters (ParamsEnv), else the transport's α and β with this machine's
// measured γ and no LogP parameters.
func (c *Comm) localModel() localModel {
	if h := c.rs.hooks.Model; h != nil {
		m, lp := h(c.rank)
		return localModel{m, lp}
	}
	if lm, ok := calibrated(); ok {
		return lm
	}
	m := c.layout.machine
	m.Gamma = measuredGamma()
	return localModel{m: m}
}

// agreeModel makes rank 0's machine model every rank's before the first
// call on c that needs it (need) plans: the model sets the clairvoyant
// reduce's segment count and the round time that turns arrivals into
// rounds, and the fibonacci trees' shape, so ranks whose measured γ or
// parameters file differ would otherwise build different schedules. Every
// rank reaches it at the same call (options are equal on every rank), so
// it costs one 48-byte bcast per communicator; none where the ranks share
// a process (and with it the measured γ and the parameters file).
func (c *Comm) agreeModel(ctx context.Context, need bool) error {
	if c.agreed != nil || !need {
		return nil
	}
	lm := c.localModel()
	if cs := c.rs.tc.ClockSharer; cs != nil && cs.SharesClock() && c.rs.hooks.Model == nil {
		c.agreed = &lm
		return nil
	}
	v := []float64{lm.m.Alpha, lm.m.Beta, lm.m.Gamma, -1, 0, 0}
	if lm.lp != nil {
		v[3], v[4], v[5] = lm.lp.L, lm.lp.O, lm.lp.G
	}
	// A binomial tree, named to spare the default choice's evaluation.
	if err := c.Float64s(ctx, plan.Args{Coll: schedule.Bcast}, nil, v, 0, algorithms.Binomial); err != nil {
		return fmt.Errorf("agreeing on the machine model: %w", err)
	}
	lm = localModel{m: algorithms.Machine{Alpha: v[0], Beta: v[1], Gamma: v[2]}}
	if v[3] >= 0 {
		lm.lp = &algorithms.LogP{L: v[3], O: v[4], G: v[5]}
	}
	c.agreed = &lm
	return nil
}
