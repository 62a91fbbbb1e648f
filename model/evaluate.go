package model

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

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

// Evaluate evaluates every registered algorithm of coll that can run on size
// ranks with a commutative operator (algorithms.List, Info.Check) for a
// per-rank size of bytes bytes — the buffer of bcast, reduce, allreduce, scan
// and exscan, each rank's block of gather, scatter, allgather and
// reducescatter, the block per pair of alltoall; ignored for barrier — and
// returns one Row per algorithm, sorted by name. The root is rank 0.
// Elements are 4 bytes (float32) when bytes is a multiple of 4, else 1 byte;
// pipelined algorithms use their default segment length.
//
// Each algorithm's schedules are counted (as by Count) and evaluated along
// their dependencies (as by CriticalPath) in one pass; algorithms are
// evaluated concurrently, up to GOMAXPROCS at a time. The time is linear in
// the schedules' total size, Θ(size²) for ring and linear algorithms: well
// under a second for every algorithm at 1024 ranks, tens of seconds for a
// ring at 4096. Vector collectives are not evaluated (model their regular
// form).
func Evaluate(coll schedule.Collective, size, bytes int, p Params) ([]Row, error) {
	if coll >= schedule.NumCollectives {
		return nil, fmt.Errorf("%w: unknown collective %d", ErrArgument, coll)
	}
	if coll.Vector() {
		return nil, fmt.Errorf("%w: %s needs per-rank counts; evaluate its regular form", ErrArgument, coll)
	}
	if size < 1 {
		return nil, fmt.Errorf("%w: size %d", ErrArgument, size)
	}
	if bytes < 0 {
		return nil, fmt.Errorf("%w: negative message size %d", ErrArgument, bytes)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	es := 4
	if bytes%es != 0 {
		es = 1
	}
	n := bytes / es
	if coll == schedule.Barrier {
		n = 0
	}
	ap := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: n}, Commutative: true, ElemSize: es}
	if err := ap.Spec.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArgument, err)
	}
	var infos []*algorithms.Info
	for _, in := range algorithms.List(coll) {
		if in.Check(&ap) == nil {
			infos = append(infos, in)
		}
	}
	rows := make([]Row, len(infos))
	errs := make([]error, len(infos))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, in := range infos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i], errs[i] = evaluate(in, &ap, es, p, MaxCriticalOps)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("model: %s/%s: %w", coll, infos[i].Name, err)
		}
	}
	return rows, nil
}

// MaxCriticalOps bounds the operations of the ranks' rounds that Evaluate
// lets a critical-path evaluation hold at once (about 150 bytes of memory
// each); beyond it the row has no critical path.
const MaxCriticalOps = 1 << 21

// evaluate computes the row of one algorithm, with a critical path if the
// ranks' rounds never hold more than limit operations at once.
func evaluate(in *algorithms.Info, ap *algorithms.Params, es int, p Params, limit int64) (Row, error) {
	gen := generator(in, *ap)
	c, cp, ok, err := run(ap.Size, es, gen, p, limit, nil)
	if err != nil {
		return Row{}, err
	}
	if !ok {
		if c, err = Count(ap.Size, es, gen); err != nil {
			return Row{}, err
		}
	}
	r := Row{
		Algorithm:     in.Name,
		Cost:          in.Cost(ap).Time(p.Alpha, p.Beta, p.Gamma),
		Counted:       AlphaBetaGamma(c, p),
		LogGP:         LogGP(c, p),
		Critical:      cp.AlphaBetaGamma,
		CriticalLogGP: cp.LogGP,
		Memory:        Memory(c, p),
		Counts:        c,
	}
	t := r.Counted
	if ok {
		t = cp.AlphaBetaGamma
	}
	r.Energy = Energy(c, p, t)
	if form, e, ok := HoeflerMoor(in.Name, ap, p); ok {
		r.Form, r.FormTime = form, e.Time
	}
	return r, nil
}

// generator returns in's generator for ap with the buffer bounds declared
// (so that an out-of-range region is an error) and, for barriers, empty
// messages kept, as the executor and the verifier build schedules.
func generator(in *algorithms.Info, ap algorithms.Params) schedule.Generator {
	gen := in.Generator(ap)
	return func(b *schedule.Builder) {
		b.SetBounds(ap.BufLens(b.Rank()))
		if ap.Coll == schedule.Barrier {
			b.KeepEmpty()
		}
		gen(b)
	}
}
