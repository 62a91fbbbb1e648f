package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// FlowConfig adds the flow model's parameters to a Config. (Its hop
// latency, Config.HopLatency, is added to a cut-through message's
// start-up time per link crossed.)
type FlowConfig struct {
	Config
	// Arrival, when set, is every rank's arrival time at the collective in
	// seconds: rank r posts its first round at Arrival[r] instead of 0
	// (finite, not negative, one per rank). Result.Time is then the end of
	// the last rank on the same clock.
	Arrival []float64
}

// FlowModel runs a discrete-event simulation in which every message is a
// flow. A rank posts the sends and receives of a round together and starts
// its next round when they have all completed (rounds are local, not global
// stages). A message becomes a flow α (plus any per-hop latency) after it is
// posted and then moves its bytes at the rate the max-min fair share of the
// links on its route allows; a receive completes when its message has
// arrived (messages between two ranks match receives in order). Single-port
// nodes add a send port and a receive port of capacity 1 per node, which all
// of a node's flows share. A flow moves no faster than one link of capacity
// 1, even over a split route. The result is deterministic; AlphaCount and
// DeltaBytes are left zero, NumStages is the most rounds of any rank, and
// MaxCongestion is the largest load (flows crossing it, weighted by their
// route fractions, over its capacity) any link carried at any moment.
func FlowModel(cfg FlowConfig, size, elemSize int, gen schedule.Generator) (Result, error) {
	if err := cfg.check(size); err != nil {
		return Result{}, err
	}
	if elemSize < 1 {
		return Result{}, fmt.Errorf("%w: element size %d", ErrConfig, elemSize)
	}
	if cfg.Arrival != nil {
		if len(cfg.Arrival) != size {
			return Result{}, fmt.Errorf("%w: %d arrival times for %d ranks", ErrConfig, len(cfg.Arrival), size)
		}
		for r, a := range cfg.Arrival {
			if !(a >= 0) || math.IsInf(a, 1) {
				return Result{}, fmt.Errorf("%w: rank %d arrives at %g", ErrConfig, r, a)
			}
		}
	}
	f := newFlowSim(&cfg, size, elemSize, gen)
	defer f.rp.Close()
	return f.run()
}

// flow is one message.
type flow struct {
	src, dst   int // ranks
	start      float64
	bytes      float64 // remaining
	rate       float64 // bytes per second
	hops       []topology.Hop
	active     bool
	lat        float64
	frozen     bool
	finishedAt float64
	// Store-and-forward: the message's size and the links it has still to
	// cross, one step after another.
	size  float64
	steps [][]topology.Hop
}

// flowSim is the flow model's hooks on the schedule replay, which is
// eager: a send completes when its flow has moved its bytes, and its
// message then meets the receive (schedule.Replay.Arrive).
type flowSim struct {
	cfg      *FlowConfig
	size     int
	elemSize int
	rp       *schedule.Replay
	order    []int // ranks by arrival time (nil: all at 0)
	begun    int   // ranks of order started
	now      float64
	pendingF []*flow // posted, not yet started (waiting for start-up)
	active   []*flow
	links    int // topology links; single-port ports follow
	res      Result
	route    []topology.Hop
	solver   solver
	dirty    bool
}

func newFlowSim(cfg *FlowConfig, size, elemSize int, gen schedule.Generator) *flowSim {
	f := &flowSim{cfg: cfg, size: size, elemSize: elemSize}
	f.rp = schedule.NewReplay(size, gen, f, schedule.ReplayOptions{Eager: true, Arrival: cfg.Arrival, Setup: fastBuild})
	if cfg.Arrival != nil {
		f.order = make([]int, size)
		for r := range f.order {
			f.order[r] = r
		}
		slices.SortStableFunc(f.order, func(a, b int) int { return cmp.Compare(cfg.Arrival[a], cfg.Arrival[b]) })
	}
	f.links = cfg.Topology.Links()
	n := f.links
	if cfg.Ports == SinglePort {
		n += 2 * cfg.Topology.Nodes()
	}
	f.solver.init(n)
	return f
}

func (f *flowSim) capacity(l topology.Link) float64 {
	if int(l) >= f.links {
		return 1
	}
	return f.cfg.Topology.Capacity(l)
}

// arrive starts, in rank order, the ranks that have arrived by now.
func (f *flowSim) arrive() error {
	for ; f.begun < f.size; f.begun++ {
		r := f.begun
		if f.order != nil {
			r = f.order[f.begun]
			if f.cfg.Arrival[r] > f.now {
				return nil
			}
		}
		if err := f.rp.Begin(r); err != nil {
			return err
		}
		if err := f.rp.Drain(); err != nil {
			return err
		}
	}
	return nil
}

func (f *flowSim) run() (Result, error) {
	for {
		if err := f.arrive(); err != nil {
			return Result{}, err
		}
		if f.dirty {
			load := f.solver.solve(f.active, f.capacity, f.cfg.Delta)
			f.res.MaxCongestion = max(f.res.MaxCongestion, load)
			f.dirty = false
		}
		// Next event: a rank arrives, a flow starts or a flow ends.
		next := math.Inf(1)
		if f.begun < f.size {
			next = f.cfg.Arrival[f.order[f.begun]]
		}
		for _, fl := range f.pendingF {
			next = min(next, fl.start)
		}
		for _, fl := range f.active {
			if fl.rate > 0 {
				next = min(next, f.now+fl.bytes/fl.rate)
			}
		}
		if math.IsInf(next, 1) {
			break
		}
		dt := next - f.now
		f.now = next
		tol := 1e-9 * max(next, 1e-12)
		var ended []*flow
		keep := f.active[:0]
		for _, fl := range f.active {
			if math.IsInf(fl.rate, 1) {
				fl.bytes = 0
			} else {
				fl.bytes -= fl.rate * dt
			}
			if fl.bytes <= fl.rate*tol || fl.bytes <= 1e-9 {
				ended = append(ended, fl)
				continue
			}
			keep = append(keep, fl)
		}
		f.active = keep
		var started []*flow
		keepP := f.pendingF[:0]
		for _, fl := range f.pendingF {
			if fl.start <= next+tol {
				started = append(started, fl)
				continue
			}
			keepP = append(keepP, fl)
		}
		f.pendingF = keepP
		for _, fl := range started {
			if fl.bytes <= 0 {
				ended = append(ended, fl)
				continue
			}
			fl.active = true
			f.active = append(f.active, fl)
		}
		if len(ended) > 0 || len(started) > 0 {
			f.dirty = true
		}
		for _, fl := range ended {
			if err := f.deliver(fl); err != nil {
				return Result{}, err
			}
		}
	}
	for r := range f.size {
		if !f.rp.Done(r) {
			_, i, _ := f.rp.Round(r)
			return Result{}, fmt.Errorf("%w: rank %d is stuck in round %d (unmatched receive)", ErrConfig, r, i+1)
		}
	}
	f.res.Time = f.now
	return f.res, nil
}

// Start posts the flows of rank r's round.
func (f *flowSim) Start(r, index int, rd schedule.Round, _ int) error {
	f.res.NumStages = max(f.res.NumStages, index+1)
	for _, op := range rd {
		if op.Kind != schedule.OpSend {
			continue
		}
		if op.Peer < 0 || op.Peer >= f.size {
			return fmt.Errorf("%w: rank %d sends to rank %d of %d", ErrConfig, r, op.Peer, f.size)
		}
		f.post(r, op.Peer, int64(op.Src.Len)*int64(f.elemSize))
	}
	return nil
}

// Match completes a receive whose message has arrived.
func (f *flowSim) Match(_, recv schedule.Ref) error {
	f.rp.Complete(int(recv.Rank))
	return nil
}

// Finish has nothing to do: rounds have no time of their own.
func (f *flowSim) Finish(int) error { return nil }

// post creates the flow of a message: under cut-through one flow over
// the whole route after α + t_h·D; under packet switching the same with
// the packets' hop latencies and the pipeline's fill added to the start-up
// time, α + (D+k−1)·t_h + (D−1)·b·δ, and the message padded to its k
// packets; under store-and-forward one flow per step of the route, each
// started α after the previous one ends.
func (f *flowSim) post(src, dst int, bytes int64) {
	cfg := &f.cfg.Config
	sn, dn := cfg.node(src), cfg.node(dst)
	f.route = cfg.Topology.Route(sn, dn, f.route[:0])
	hops := make([]topology.Hop, len(f.route), len(f.route)+2)
	copy(hops, f.route)
	lat := cfg.Alpha
	fl := &flow{src: src, dst: dst, bytes: float64(bytes)}
	switch sw := cfg.Switching; {
	case sw.Mode == CutThrough || len(hops) == 0:
		for _, h := range hops {
			lat += h.Frac * cfg.HopLatency
		}
	case sw.Mode == Packet:
		d, k := routeLength(hops), sw.packets(bytes)
		lat += (d+float64(k)-1)*cfg.HopLatency + (d-1)*float64(sw.PacketSize)*cfg.Delta
		fl.bytes = float64(k * sw.PacketSize)
	default:
		fl.steps = hopSteps(hops)
		hops, fl.steps, fl.size = fl.steps[0], fl.steps[1:], fl.bytes
	}
	if cfg.Ports == SinglePort && sn != dn {
		// The sender's port on the first step, the receiver's on the last.
		send, recv := topology.Hop{Link: topology.Link(f.links + 2*sn), Frac: 1}, topology.Hop{Link: topology.Link(f.links + 2*dn + 1), Frac: 1}
		if len(fl.steps) == 0 {
			hops = append(hops, send, recv)
		} else {
			hops = append(slices.Clip(hops), send)
			last := len(fl.steps) - 1
			fl.steps[last] = append(slices.Clip(fl.steps[last]), recv)
		}
	}
	fl.start, fl.hops = f.now+lat, hops
	f.res.Messages++
	f.res.Bytes += bytes
	f.pendingF = append(f.pendingF, fl)
}

// deliver completes a message at both ends: the send now, the receive
// when it is (or has been) posted.
func (f *flowSim) deliver(fl *flow) error {
	if len(fl.steps) > 0 {
		// Store-and-forward: the next link, α after this one.
		fl.hops, fl.steps = fl.steps[0], fl.steps[1:]
		fl.start, fl.bytes, fl.active = f.now+f.cfg.Alpha, fl.size, false
		f.pendingF = append(f.pendingF, fl)
		return nil
	}
	fl.finishedAt = f.now
	f.rp.Complete(fl.src)
	if err := f.rp.Drain(); err != nil {
		return err
	}
	if err := f.rp.Arrive(fl.src, fl.dst, schedule.Ref{Rank: int32(fl.src)}); err != nil {
		return err
	}
	return f.rp.Drain()
}

// solver computes max-min fair rates by progressive filling: all flows not
// yet limited grow at the same rate until a link saturates; the flows on it
// are frozen and the rest grow on. Links are visited in order of the level
// at which they saturate (a heap), so a solve costs O(H log H) for H hops.
type solver struct {
	resid   []float64 // capacity left by frozen flows
	weight  []float64 // fractions of unfrozen flows
	ver     []int32
	users   [][]int // flows on each link (indices into the active list)
	touched []topology.Link
	h       linkHeap
}

func (s *solver) init(links int) {
	s.resid = make([]float64, links)
	s.weight = make([]float64, links)
	s.ver = make([]int32, links)
	s.users = make([][]int, links)
}

// solve sets the rate of every flow and returns the largest link load:
// the summed fractions of the flows on a link over its capacity.
func (s *solver) solve(flows []*flow, capacity func(topology.Link) float64, delta float64) (maxLoad float64) {
	for _, l := range s.touched {
		s.resid[l], s.weight[l] = 0, 0
		s.users[l] = s.users[l][:0]
	}
	s.touched = s.touched[:0]
	for i, fl := range flows {
		fl.frozen = false
		fl.rate = 0
		for _, h := range fl.hops {
			if len(s.users[h.Link]) == 0 && s.weight[h.Link] == 0 {
				s.touched = append(s.touched, h.Link)
				s.resid[h.Link] = capacity(h.Link)
			}
			s.weight[h.Link] += h.Frac
			s.users[h.Link] = append(s.users[h.Link], i)
		}
	}
	s.h = s.h[:0]
	for _, l := range s.touched {
		if s.resid[l] > 0 {
			maxLoad = max(maxLoad, s.weight[l]/s.resid[l])
		}
		s.ver[l]++
		if s.weight[l] > 0 {
			s.h = append(s.h, linkLevel{l: l, level: s.resid[l] / s.weight[l], ver: s.ver[l]})
		}
	}
	heap.Init(&s.h)
	frozen := 0
	for s.h.Len() > 0 && frozen < len(flows) {
		top := heap.Pop(&s.h).(linkLevel)
		if top.ver != s.ver[top.l] {
			continue
		}
		level := top.level
		if level >= 1 {
			// No flow moves faster than one link of capacity 1, even when
			// its route is split over several paths.
			break
		}
		for _, i := range s.users[top.l] {
			fl := flows[i]
			if fl.frozen {
				continue
			}
			fl.frozen = true
			frozen++
			fl.rate = level / delta // capacity units → bytes per second (+Inf when δ = 0)
			for _, h := range fl.hops {
				s.resid[h.Link] -= h.Frac * level
				s.weight[h.Link] -= h.Frac
				s.ver[h.Link]++
				if h.Link != top.l && s.weight[h.Link] > 1e-12 {
					heap.Push(&s.h, linkLevel{l: h.Link, level: max(level, s.resid[h.Link]/s.weight[h.Link]), ver: s.ver[h.Link]})
				}
			}
		}
	}
	// The rest are limited by the per-flow cap of one link.
	for _, fl := range flows {
		if !fl.frozen {
			fl.rate = 1 / delta // +Inf when δ = 0
		}
	}
	return maxLoad
}

type linkLevel struct {
	l     topology.Link
	level float64
	ver   int32
}

// linkHeap orders links by saturation level, then link number, so that
// solves are deterministic.
type linkHeap []linkLevel

func (h linkHeap) Len() int { return len(h) }
func (h linkHeap) Less(i, j int) bool {
	if h[i].level != h[j].level {
		return h[i].level < h[j].level
	}
	return h[i].l < h[j].l
}
func (h linkHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *linkHeap) Push(x any)   { *h = append(*h, x.(linkLevel)) }
func (h *linkHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
