package model

// Row is the evaluation of one algorithm for one call. Times are in
// seconds, energy in joules, memory in bytes.
type Row struct {
	Algorithm string
	// Cost is the algorithm's registered α-β-γ closed form
	// (Info.Cost(...).Time(α, β, γ)).
	Cost float64
	// Counted and LogGP are the round-synchronous α-β-γ and LogGP times of
	// its schedules (AlphaBetaGamma and LogGP of Counts).
	Counted, LogGP float64
	// Critical and CriticalLogGP are the dependency-driven times of its
	// schedules (CriticalPath), which also charge pipelines and sparse
	// schedules correctly. They are 0 when the ranks' rounds would hold
	// more than MaxCriticalOps operations at once, to bound memory; such
	// algorithms (linear allgather, direct alltoall, allgather-reduce on
	// thousands of ranks) do all their work in one round, which the
	// round-synchronous times charge exactly.
	Critical, CriticalLogGP float64
	// Arrival is the α-β-γ critical-path time from the earliest arrival
	// to the last rank's end when the ranks arrive at given times
	// (CriticalPathArrivals); with balanced arrivals it is Critical.
	Arrival float64
	// Form names the Hoefler–Moor form that models the algorithm ("" when
	// none does) and FormTime is that form's LogGP time (0 when Form is "").
	Form     string
	FormTime float64
	// Energy is Energy(Counts, p, t): the dynamic energy of the counted
	// messages plus static power over t, the critical-path time (Critical,
	// or Counted when Critical is not computed).
	Energy float64
	// Memory is Memory(Counts, p).
	Memory float64
	// Counts are the counts the evaluation is built on.
	Counts Counts
}

// MaxCriticalOps bounds the operations of the ranks' rounds that
// EvaluateGenerator (and package workload's Evaluate) lets a critical-path
// evaluation hold at once (about 150 bytes of memory
// each); beyond it the row has no critical path.
const MaxCriticalOps = 1 << 21
