package scoll

import "github.com/scoll/scoll/internal/comm"

// ParamsEnv names the environment variable that points at a machine
// parameters file (the JSON scoll calibrate writes: "alpha", "beta" and
// "gamma" in seconds and seconds per byte, "latency", "overhead" and "gap"
// in seconds). The clairvoyant reduce takes its round time from α, β and γ
// when the call gives none (WithRoundTime); the fibonacci bcast and reduce
// take their LogP model from L, o and g when the call names them without
// WithLogP.
const ParamsEnv = comm.ParamsEnv
