// Package sim charges time to the messages of schedules on a network
// topology: the stage (congestion) model of Sack's thesis (sec. 3.1) and a
// discrete-event flow model with max-min fair link sharing.
//
// Both models stream each rank's schedule round by round, so a simulation
// holds one round of every rank at a time, never a whole O(P²) schedule.
//
// # Switching
//
// Config.Switching says how a message of s bytes crosses the D links of
// its route (Heath and Solomonik's notes, sec. 4.2.2); t_h is
// Config.HopLatency. Alone on the network a message costs
//
//	cut-through (default)  α + βs + t_h·D
//	store-and-forward      (α + βs)·D
//	packet, b-byte packets α + (D + k − 1)(t_h + βb), k = ⌈s/b⌉
//
// and both models give exactly these times for a single message. Under
// load they differ in how the terms meet congestion:
//
//   - Stage model: under store-and-forward a message's charge becomes D
//     start-ups and (c_1 + ... + c_D)·s δ bytes: each link is a transfer
//     of its own, and the messages of a stage cross their j-th links
//     together, so c_j is the largest load of the message's j-th link
//     among the stage's j-th links (a sub-stage), not of its whole route.
//     Under packet switching the charge is c·k·b δ bytes (the padded
//     packets, over the whole route at once). Its per-hop time, t_h·D under
//     cut-through and (D+k−1)·t_h + (D−1)·c·b·δ under packet switching
//     (the pipeline's fill), happens in the network while the node's port
//     serves its next message, so a stage adds the largest per-hop time
//     of its messages (StageStat.Latency) rather than their sum.
//   - Flow model: cut-through is one flow over the whole route started
//     α + t_h·D after it is posted. Store-and-forward is one flow per
//     link, in route order, each started α after the previous one ends, so
//     a message holds one link at a time (a split route's hops are cut
//     into groups of one link's worth). Packet switching is one flow of
//     the k·b padded bytes over the whole route, started after
//     α + (D + k − 1)·t_h + (D − 1)·b·δ: the packets pipeline, and the fill
//     moves at full link speed.
//
// A message within a node (D = 0) costs α + βs in every mode.
package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"text/tabwriter"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// ErrConfig reports an unusable simulation configuration.
var ErrConfig = errors.New("sim: invalid configuration")

// Ports is a node model.
type Ports int

const (
	// SinglePort nodes send one message and receive one message at a time:
	// a node's messages of one stage are serialised.
	SinglePort Ports = iota
	// MultiPort nodes use all their links at once: a node's messages of one
	// stage proceed together, slowed only by link congestion.
	MultiPort
)

// String returns "1" or "all", as the CLI spells them.
func (p Ports) String() string {
	if p == MultiPort {
		return "all"
	}
	return "1"
}

// Config describes the network a schedule runs on.
type Config struct {
	Topology topology.Topology
	// Mapping places ranks on nodes; nil places rank r on node r.
	Mapping topology.Mapping
	// Alpha is the start-up time of a message in seconds.
	Alpha float64
	// Delta is the time in seconds to move one byte over a link of capacity
	// 1 (the inverse link bandwidth).
	Delta float64
	// Ports is the node model.
	Ports Ports
	// Stages keeps the per-stage breakdown in the result.
	Stages bool
	// BusyPorts and BusyEfficiency derate busy multi-port nodes in the stage
	// model: a message whose source sends, or whose destination receives, at
	// least BusyPorts messages in its stage moves at BusyEfficiency of the
	// link bandwidth (its δ is divided by BusyEfficiency). Sack's Blue
	// Gene/P measurements give 0.93 with six ports busy (sec. 3.5.1). Zero
	// values turn it off.
	BusyPorts      int
	BusyEfficiency float64
	// HopLatency is t_h, the time per link crossed by a message's head
	// (weighted by the fraction crossing it for split routes), which
	// cut-through and packet switching charge (see Switching).
	HopLatency float64
	// Switching is how a message crosses the links of its route; the zero
	// value, cut-through, is what both models charged before there was a
	// choice. See the package documentation for how each mode enters each
	// model.
	Switching Switching
}

func (c *Config) check(size int) error {
	if c.Topology == nil {
		return fmt.Errorf("%w: no topology", ErrConfig)
	}
	if c.Alpha < 0 || c.Delta < 0 {
		return fmt.Errorf("%w: negative alpha %g or delta %g", ErrConfig, c.Alpha, c.Delta)
	}
	if c.HopLatency < 0 {
		return fmt.Errorf("%w: negative hop latency %g", ErrConfig, c.HopLatency)
	}
	if err := c.Switching.check(); err != nil {
		return err
	}
	if c.BusyPorts < 0 || c.BusyEfficiency < 0 || c.BusyEfficiency > 1 || (c.BusyPorts > 0) != (c.BusyEfficiency > 0) {
		return fmt.Errorf("%w: busy ports %d with efficiency %g (want both set, efficiency in (0, 1])", ErrConfig, c.BusyPorts, c.BusyEfficiency)
	}
	if c.Mapping == nil && size > c.Topology.Nodes() {
		return fmt.Errorf("%w: %d ranks on %s, which has %d nodes", ErrConfig, size, c.Topology, c.Topology.Nodes())
	}
	return nil
}

func (c *Config) node(r int) int {
	if c.Mapping == nil {
		return r
	}
	return c.Mapping.Node(r)
}

// StageStat is the cost of one stage of the stage model, with the shape
// of its communication as Sack tabulates it (sec. 3.4.1: S[s], distance,
// hops, congestion, size).
type StageStat struct {
	Stage    int   `json:"stage"`
	Messages int   `json:"messages"` // messages sent in the stage
	Bytes    int64 `json:"bytes"`    // bytes sent in the stage
	// Bit is the rank bit every message of the stage flips (destination =
	// source XOR 2^Bit, Sack's S[s]), or -1 when the messages do not all
	// flip the same single bit (or there are none).
	Bit int `json:"bit"`
	// MaxDistance is the largest rank distance |dst − src| of a message.
	MaxDistance int `json:"max_distance"`
	// MaxHops is the longest route of a message in links. A route split
	// over equal-cost paths counts the length of those paths (the sum of
	// its hop fractions).
	MaxHops float64 `json:"max_hops"`
	// MaxBytes is the largest message and MinBytes the smallest nonzero
	// one (0 when every message is empty).
	MaxBytes int64 `json:"max_bytes"`
	MinBytes int64 `json:"min_bytes"`
	// MaxCongestion is the largest congestion factor c of any message: the
	// largest link load on its route (messages, fractional for split
	// routes, divided by the link's capacity), at least 1.
	MaxCongestion float64 `json:"max_congestion"`
	// AlphaCount is the number of message start-ups charged: the most
	// messages any node sends or receives in the stage (store-and-forward:
	// the most link crossings, a message counting one per link).
	AlphaCount float64 `json:"alpha_count"`
	// DeltaBytes is the congestion-weighted bytes charged: c·m of the
	// slowest message (multi-port) or the largest sum of c·m over a node's
	// sends or receives (single-port). Store-and-forward charges
	// (c_1 + ... + c_D)·m for a message over D links, c_j being the load
	// of its j-th link among the stage's j-th links; packet switching
	// charges c·k·b for its k packets of b bytes.
	DeltaBytes float64 `json:"delta_bytes"`
	// Latency is the per-hop time in seconds of the stage's slowest
	// message, which overlaps its node's other messages: t_h·D
	// (cut-through), (D+k−1)·t_h + (D−1)·c·b·δ (packet switching: the
	// per-packet hop latencies and the pipeline's fill) or 0
	// (store-and-forward).
	Latency float64 `json:"latency_s"`
	// Time is AlphaCount·α + DeltaBytes·δ + Latency.
	Time float64 `json:"time_s"`
}

// Result is the cost of a whole schedule.
type Result struct {
	Time       float64 // seconds
	AlphaCount float64 // α terms
	DeltaBytes float64 // δ terms, in bytes
	Latency    float64 // per-hop terms in seconds (stage model)
	// MaxCongestion is the largest link load of any stage.
	MaxCongestion float64
	Messages      int64
	Bytes         int64
	NumStages     int
	Stages        []StageStat // with Config.Stages
	// Misaligned (stage model) is the number of stages in which a message
	// is sent and its receive is posted in different stages: round i of
	// one rank meets round j ≠ i of another. The stage model then charges
	// messages in stages where they are not in flight, and its time is not
	// valid (see StageModel); 0 for the flow model.
	Misaligned int
}

// StageModel runs the stage model of Sack's thesis (sec. 3.1): stage s is
// round s of every rank, all of whose messages start together. A message of
// m bytes costs c·m·δ, where c is the largest load on any link of its route
// in that stage (a link's load is the number of messages crossing it,
// fractional for routes split over equal-cost paths, divided by its
// capacity), and at least 1: a message split over several paths moves no
// faster than over one link. A stage costs α times the most messages any node sends or
// receives, plus δ times the slowest node's bytes (single-port: the sum of
// c·m over its sends, or over its receives; multi-port: its slowest
// message). elemSize converts the schedule's element counts to bytes.
//
// The model is valid for schedules whose every message is sent and
// received in the same round index, as in Sack's algorithms (rings,
// butterflies, buckets: every rank communicates in every round). The
// builder drops a rank's rounds without operations, so in trees and
// pipelines a rank's round i meets its partner's round j ≠ i: a chain of
// P ranks passing a segment on costs P−1 message times but is charged as
// one stage, and messages that happen one after the other are charged as
// congesting each other. Result.Misaligned counts such stages; when it is
// not 0 the time can be far too low (250× for a pipelined bcast on 512
// ranks) and FlowModel, which follows the dependencies, is the one to use.
func StageModel(cfg Config, size, elemSize int, gen schedule.Generator) (Result, error) {
	if err := cfg.check(size); err != nil {
		return Result{}, err
	}
	if elemSize < 1 {
		return Result{}, fmt.Errorf("%w: element size %d", ErrConfig, elemSize)
	}
	rs := schedule.NewStreams(size, gen, fastBuild)
	defer rs.Close()
	st := newStager(&cfg, size, elemSize, rs)
	var res Result
	for s := 0; ; s++ {
		live, err := st.collect()
		if err != nil {
			return Result{}, err
		}
		if !live {
			break
		}
		ss := st.cost()
		ss.Stage = s
		if st.misaligned() {
			res.Misaligned++
		}
		res.NumStages++
		res.Time += ss.Time
		res.AlphaCount += ss.AlphaCount
		res.DeltaBytes += ss.DeltaBytes
		res.Latency += ss.Latency
		res.MaxCongestion = max(res.MaxCongestion, ss.MaxCongestion)
		res.Messages += int64(ss.Messages)
		res.Bytes += ss.Bytes
		if cfg.Stages {
			res.Stages = append(res.Stages, ss)
		}
	}
	return res, nil
}

// stager gathers and charges the messages of one stage. The ranks are split
// among workers, one per CPU, that advance their ranks' schedules and route
// their messages in parallel; link loads are then summed and each worker
// charges its own messages.
type stager struct {
	cfg      *Config
	rs       *schedule.Streams
	elemSize int64
	load     []float64 // per link, the sum over workers
	used     []topology.Link
	workers  []*stageWorker
	sent     []nodeLoad // per node
	nodes    []int      // nodes touched
}

// stageWorker holds the messages of a range of ranks in one stage.
type stageWorker struct {
	lo, hi int // ranks
	load   []float64
	used   []topology.Link
	hops   []topology.Hop // routes of the stage's messages, concatenated
	route  []topology.Hop // scratch
	msgs   []stageMsg
	live   bool
	err    error
	shape  stageShape
	// match is Σ h(src, dst) over the stage's sends minus the same over
	// its receives: 0 (but for hash collisions) when every message's two
	// ends are in the stage.
	match uint64
}

// pairHash is a mixing hash of the ordered pair of ranks (src, dst).
func pairHash(src, dst int) uint64 {
	x := uint64(src)<<32 ^ uint64(uint32(dst)) ^ 0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// misaligned reports whether some message of the stage just collected has
// only one of its ends in it.
func (st *stager) misaligned() bool {
	var m uint64
	for _, w := range st.workers {
		m += w.match
	}
	return m != 0
}

// stageShape is the communication shape of (part of) a stage.
type stageShape struct {
	bit      int // -2: no message yet; -1: not one common flipped bit
	dist     int
	hops     float64
	minBytes int64
}

func (a *stageShape) merge(b stageShape) {
	switch {
	case a.bit == -2:
		a.bit = b.bit
	case b.bit != -2 && b.bit != a.bit:
		a.bit = -1
	}
	a.dist, a.hops = max(a.dist, b.dist), max(a.hops, b.hops)
	if b.minBytes > 0 && (a.minBytes == 0 || b.minBytes < a.minBytes) {
		a.minBytes = b.minBytes
	}
}

type stageMsg struct {
	src, dst   int // nodes
	bytes      int64
	length     float64 // route length D in links
	start, end int     // hops[start:end]
	c          float64
	// csum is the sum of the congestions of the message's links crossed
	// one after another: c under cut-through and packet switching, which
	// hold the whole route at once, and the sum over the D steps of
	// store-and-forward.
	csum float64
}

// stepKey is a link at one step of the store-and-forward messages of a
// stage.
type stepKey struct {
	step int
	link topology.Link
}

// stepCongestion sets the congestion of every store-and-forward message:
// the messages of a stage cross their routes' links one step after
// another, all in step, so the j-th links of the messages share the
// network (a sub-stage), and a message's step j moves at the load of its
// j-th link in that sub-stage. m.c is the largest step congestion and
// m.csum their sum.
func (st *stager) stepCongestion() {
	topo := st.cfg.Topology
	load := map[stepKey]float64{}
	for _, w := range st.workers {
		for _, m := range w.msgs {
			for j, step := range hopSteps(w.hops[m.start:m.end]) {
				for _, h := range step {
					load[stepKey{j, h.Link}] += h.Frac
				}
			}
		}
	}
	for _, w := range st.workers {
		for i := range w.msgs {
			m := &w.msgs[i]
			m.c, m.csum = 0, 0
			for j, step := range hopSteps(w.hops[m.start:m.end]) {
				c := 1.0
				for _, h := range step {
					c = max(c, load[stepKey{j, h.Link}]/topo.Capacity(h.Link))
				}
				m.c, m.csum = max(m.c, c), m.csum+c
			}
			m.c = max(m.c, 1)
		}
	}
}

type nodeLoad struct {
	sends, recvs   int
	sendA, recvA   float64 // start-ups charged
	sendDB, recvDB float64
	touched        bool
}

// minRanksPerWorker keeps small simulations on one goroutine.
const minRanksPerWorker = 256

func newStager(cfg *Config, size, elemSize int, rs *schedule.Streams) *stager {
	st := &stager{cfg: cfg, rs: rs, elemSize: int64(elemSize), load: make([]float64, cfg.Topology.Links()), sent: make([]nodeLoad, cfg.Topology.Nodes())}
	nw := max(1, min(runtime.GOMAXPROCS(0), size/minRanksPerWorker))
	for w := range nw {
		sw := &stageWorker{lo: w * size / nw, hi: (w + 1) * size / nw}
		if w == 0 {
			sw.load = st.load // worker 0 sums into the shared array
		} else {
			sw.load = make([]float64, len(st.load))
		}
		st.workers = append(st.workers, sw)
	}
	return st
}

// parallel runs fn on every worker, concurrently when there are several.
func (st *stager) parallel(fn func(*stageWorker)) {
	if len(st.workers) == 1 {
		fn(st.workers[0])
		return
	}
	var wg sync.WaitGroup
	for _, w := range st.workers[1:] {
		wg.Go(func() { fn(w) })
	}
	fn(st.workers[0])
	wg.Wait()
}

// collect reads the next round of every rank and routes its sends; it
// reports whether any rank had a round left.
func (st *stager) collect() (bool, error) {
	for _, l := range st.used {
		st.load[l] = 0
	}
	st.used = st.used[:0]
	for _, n := range st.nodes {
		st.sent[n] = nodeLoad{}
	}
	st.nodes = st.nodes[:0]
	size := st.rs.Size()
	st.parallel(func(w *stageWorker) {
		if w != st.workers[0] {
			for _, l := range w.used {
				w.load[l] = 0
			}
		}
		w.used, w.hops, w.msgs, w.live, w.err = w.used[:0], w.hops[:0], w.msgs[:0], false, nil
		w.shape = stageShape{bit: -2}
		w.match = 0
		for r := w.lo; r < w.hi; r++ {
			rd, _, ok, err := st.rs.Next(r)
			if err != nil {
				w.err = fmt.Errorf("rank %d: %w", r, err)
				return
			}
			if !ok {
				continue
			}
			w.live = true
			for _, op := range rd {
				if op.Kind.IsRecv() {
					w.match -= pairHash(op.Peer, r)
				}
				if op.Kind != schedule.OpSend {
					continue
				}
				w.match += pairHash(r, op.Peer)
				if op.Peer < 0 || op.Peer >= size {
					w.err = fmt.Errorf("%w: rank %d sends to rank %d of %d", ErrConfig, r, op.Peer, size)
					return
				}
				w.add(st.cfg, r, op.Peer, int64(op.Src.Len)*st.elemSize)
			}
		}
	})
	live := false
	for _, w := range st.workers {
		if w.err != nil {
			return false, w.err
		}
		live = live || w.live
	}
	// Sum the loads into worker 0's array, which st.load is.
	st.used = append(st.used, st.workers[0].used...)
	for _, w := range st.workers[1:] {
		for _, l := range w.used {
			if st.load[l] == 0 {
				st.used = append(st.used, l)
			}
			st.load[l] += w.load[l]
		}
	}
	return live, nil
}

func (w *stageWorker) add(cfg *Config, from, to int, bytes int64) {
	src, dst := cfg.node(from), cfg.node(to)
	start := len(w.hops)
	w.route = cfg.Topology.Route(src, dst, w.route[:0])
	w.hops = append(w.hops, w.route...)
	for _, h := range w.route {
		if w.load[h.Link] == 0 {
			w.used = append(w.used, h.Link)
		}
		w.load[h.Link] += h.Frac
	}
	length := routeLength(w.route)
	bit := -1
	if x := uint(from ^ to); x != 0 && x&(x-1) == 0 {
		bit = bits.TrailingZeros(x)
	}
	w.shape.merge(stageShape{bit: bit, dist: max(to-from, from-to), hops: length, minBytes: bytes})
	w.msgs = append(w.msgs, stageMsg{src: src, dst: dst, bytes: bytes, length: length, start: start, end: len(w.hops)})
}

func (st *stager) touch(n int) *nodeLoad {
	nl := &st.sent[n]
	if !nl.touched {
		nl.touched = true
		st.nodes = append(st.nodes, n)
	}
	return nl
}

// cost charges the stage's messages.
func (st *stager) cost() StageStat {
	topo := st.cfg.Topology
	if st.cfg.Switching.Mode == StoreAndForward {
		st.stepCongestion()
	} else {
		st.parallel(func(w *stageWorker) {
			for i := range w.msgs {
				m := &w.msgs[i]
				c := 1.0 // a message moves no faster than one link (a split route does not add up)
				for _, h := range w.hops[m.start:m.end] {
					c = max(c, st.load[h.Link]/topo.Capacity(h.Link))
				}
				m.c, m.csum = c, c
			}
		})
	}
	var ss StageStat
	shape := stageShape{bit: -2}
	for _, w := range st.workers {
		shape.merge(w.shape)
		for _, m := range w.msgs {
			st.touch(m.src).sends++
			st.touch(m.dst).recvs++
		}
	}
	ss.Bit, ss.MaxDistance, ss.MaxHops, ss.MinBytes = max(shape.bit, -1), shape.dist, shape.hops, shape.minBytes
	derate := st.cfg.Ports == MultiPort && st.cfg.BusyPorts > 0
	for _, w := range st.workers {
		for _, m := range w.msgs {
			ss.MaxCongestion = max(ss.MaxCongestion, m.c)
			db, f := m.csum*float64(m.bytes), m.c
			s, r := &st.sent[m.src], &st.sent[m.dst]
			if derate && (s.sends >= st.cfg.BusyPorts || r.recvs >= st.cfg.BusyPorts) {
				db /= st.cfg.BusyEfficiency
				f /= st.cfg.BusyEfficiency
			}
			a, db, lat := st.cfg.stageCharge(m.length, m.bytes, db, f)
			ss.Latency = max(ss.Latency, lat)
			ss.Messages++
			ss.Bytes += m.bytes
			ss.MaxBytes = max(ss.MaxBytes, m.bytes)
			s.sendA += a
			r.recvA += a
			s.sendDB += db
			r.recvDB += db
			if st.cfg.Ports == MultiPort {
				ss.DeltaBytes = max(ss.DeltaBytes, db)
			}
		}
	}
	for _, n := range st.nodes {
		nl := &st.sent[n]
		ss.AlphaCount = max(ss.AlphaCount, nl.sendA, nl.recvA)
		if st.cfg.Ports == SinglePort {
			ss.DeltaBytes = max(ss.DeltaBytes, nl.sendDB, nl.recvDB)
		}
	}
	ss.Time = ss.AlphaCount*st.cfg.Alpha + ss.DeltaBytes*st.cfg.Delta + ss.Latency
	return ss
}

// WriteStageTable writes the per-stage breakdown of a stage-model result as
// an aligned text table with the columns of Sack's stage tables (sec.
// 3.4.1): S (the flipped rank bit, "-" when there is none), the largest
// rank distance, route length in links and congestion, and the largest
// message in bytes and as a multiple of the smallest nonzero message of all
// the stages ("size×n"); then the message and byte counts and the stage's
// α count, δ bytes and time (with its unit: ns, µs, ms or s).
func WriteStageTable(w io.Writer, stages []StageStat) error {
	var unit int64 // the smallest nonzero message of the run
	for _, s := range stages {
		if s.MinBytes > 0 && (unit == 0 || s.MinBytes < unit) {
			unit = s.MinBytes
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tS\tdistance\thops\tmax_congestion\tmax_msg\tsize×n\tmessages\tbytes\talpha\tdelta_bytes\ttime\t")
	for _, s := range stages {
		bit, size := "-", "-"
		if s.Bit >= 0 {
			bit = fmt.Sprint(s.Bit)
		}
		if unit > 0 {
			size = fmt.Sprintf("%.4g", float64(s.MaxBytes)/float64(unit))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.4g\t%.4g\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t\n", s.Stage, bit, s.MaxDistance, s.MaxHops, s.MaxCongestion,
			s.MaxBytes, size, s.Messages, s.Bytes, plainCount(s.AlphaCount), plainCount(s.DeltaBytes), tableTime(s.Time))
	}
	return tw.Flush()
}

// plainCount formats a count that may be fractional without an exponent:
// whole numbers as they are, others with two decimals.
func plainCount(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// tableTime formats seconds for a table in ns, µs, ms or s, to 4
// significant digits ("9.021 µs").
func tableTime(s float64) string {
	unit, scale := "s", 1.0
	switch a := math.Abs(s); {
	case a == 0:
		return "0 s"
	case a < 0.99995e-6:
		unit, scale = "ns", 1e-9
	case a < 0.99995e-3:
		unit, scale = "µs", 1e-6
	case a < 0.99995:
		unit, scale = "ms", 1e-3
	}
	m := s / scale
	prec := 0
	switch a := math.Abs(m); {
	case a < 9.9995:
		prec = 3
	case a < 99.995:
		prec = 2
	case a < 999.95:
		prec = 1
	}
	return strconv.FormatFloat(m, 'f', prec, 64) + " " + unit
}
