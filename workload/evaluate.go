package workload

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// Evaluate evaluates every registered algorithm of coll that can run on size
// ranks with a commutative operator (algorithms.List, Info.Check) for a
// per-rank size of bytes bytes — the buffer of bcast, reduce, allreduce, scan
// and exscan, each rank's block of gather, scatter, allgather and
// reducescatter, the block per pair of alltoall; ignored for barrier — and
// returns one model.Row per algorithm, sorted by name. The root is rank 0.
// Elements are 4 bytes (float32) when bytes is a multiple of 4, else 1 byte;
// pipelined algorithms use their default segment length, and defaults
// that depend on the machine (the optimal bcast's packet count) p's α, β, γ.
//
// Each algorithm's schedules are counted (as by model.Count) and evaluated
// along their dependencies (as by model.CriticalPath) in one pass
// (model.EvaluateGenerator); the row adds the algorithm's registered closed
// form (Cost) and its Hoefler–Moor form (model.HoeflerMoor). Algorithms are
// evaluated concurrently, up to GOMAXPROCS at a time. The time is linear in
// the schedules' total size, Θ(size²) for ring and linear algorithms: well
// under a second for every algorithm at 1024 ranks, tens of seconds for a
// ring at 4096. Vector collectives are not evaluated (model their regular
// form). Bad arguments are errors wrapping model.ErrArgument.
func Evaluate(coll schedule.Collective, size, bytes int, p model.Params) ([]model.Row, error) {
	return EvaluateArrivals(coll, size, bytes, p, nil)
}

// EvaluateArrivals is Evaluate with the ranks arriving at the collective at
// the given times in seconds (one per rank, none negative; nil: together):
// each row's Arrival is the critical-path time from the earliest arrival
// to the last rank's end (model.CriticalPathArrivals), and the clairvoyant
// reduce is scheduled for these arrivals with its round time under p.
func EvaluateArrivals(coll schedule.Collective, size, bytes int, p model.Params, arrivals []float64) ([]model.Row, error) {
	if arrivals != nil && len(arrivals) != size {
		return nil, fmt.Errorf("%w: %d arrival times for %d ranks", model.ErrArgument, len(arrivals), size)
	}
	first := 0.0
	if len(arrivals) > 0 {
		first = slices.Min(arrivals)
		arrivals = slices.Clone(arrivals)
		for r := range arrivals {
			arrivals[r] -= first
		}
	}
	if coll >= schedule.NumCollectives {
		return nil, fmt.Errorf("%w: unknown collective %d", model.ErrArgument, coll)
	}
	if coll.Vector() {
		return nil, fmt.Errorf("%w: %s needs per-rank counts; evaluate its regular form", model.ErrArgument, coll)
	}
	if size < 1 {
		return nil, fmt.Errorf("%w: size %d", model.ErrArgument, size)
	}
	if bytes < 0 {
		return nil, fmt.Errorf("%w: negative message size %d", model.ErrArgument, bytes)
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
	ap := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: n}, Commutative: true, ElemSize: es,
		Machine: algorithms.Machine{Alpha: p.Alpha, Beta: p.Beta, Gamma: p.Gamma}}
	if err := ap.Spec.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", model.ErrArgument, err)
	}
	var infos []*algorithms.Info
	for _, in := range algorithms.List(coll) {
		if in.Check(&ap) == nil {
			infos = append(infos, in)
		}
	}
	rows := make([]model.Row, len(infos))
	errs := make([]error, len(infos))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, in := range infos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i], errs[i] = evaluate(in, &ap, p, arrivals)
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

// evaluate computes the row of one algorithm. With arrival times the
// clairvoyant reduce is scheduled for them (its segment count as
// registered, its round time under p).
func evaluate(in *algorithms.Info, ap *algorithms.Params, p model.Params, arrivals []float64) (model.Row, error) {
	r, err := model.EvaluateGenerator(in.Name, ap.Size, ap.ElemSize, Generator(in, *ap), p)
	if err != nil {
		return model.Row{}, err
	}
	if arrivals != nil {
		q := *ap
		if in.Name == algorithms.Clairvoyant {
			// Segmented as registered, rounds as long as p says.
			m := algorithms.Machine{Alpha: p.Alpha, Beta: p.Beta, Gamma: p.Gamma}
			q.SetArrivals(m, algorithms.ClairvoyantSegments(&q, algorithms.InProcess), arrivals, 0)
		}
		c, err := model.CriticalPathArrivals(q.Size, q.ElemSize, Generator(in, q), p, arrivals)
		if err != nil {
			return model.Row{}, err
		}
		r.Arrival = c.AlphaBetaGamma
	}
	r.Cost = in.Cost(ap).Time(p.Alpha, p.Beta, p.Gamma)
	if form, e, ok := model.HoeflerMoor(in.Name, Call(ap), p); ok {
		r.Form, r.FormTime = form, e.Time
	}
	return r, nil
}

// Call is the model's description of the call ap.
func Call(ap *algorithms.Params) model.Call {
	return model.Call{Coll: ap.Coll, Size: ap.Size, Count: ap.Count, ElemSize: ap.ElemSize, Segment: ap.Segment}
}

// Generator returns in's generator for ap as the executor and the verifier
// build schedules: the buffer bounds declared (an out-of-range region is an
// error) and, for barriers, empty messages kept.
func Generator(in *algorithms.Info, ap algorithms.Params) schedule.Generator {
	gen := in.Generator(ap)
	return func(b *schedule.Builder) {
		b.SetBounds(ap.BufLens(b.Rank()))
		if ap.Coll == schedule.Barrier {
			b.KeepEmpty()
		}
		gen(b)
	}
}
