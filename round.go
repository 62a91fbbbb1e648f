package scoll

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/kernels"
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
// time: the calibrated parameters (ParamsEnv), else the transport's α and β
// with this machine's measured γ.
func (c *Comm) roundModel() algorithms.Machine {
	if m, ok := calibrated(); ok {
		return m
	}
	m := c.machine
	m.Gamma = measuredGamma()
	return m
}
