// Package sim charges time to the messages of schedules on a network
// topology: the stage (congestion) model of Sack's thesis (sec. 3.1) and a
// discrete-event flow model with max-min fair link sharing.
//
// Both models stream each rank's schedule round by round, so a simulation
// holds one round of every rank at a time, never a whole O(P²) schedule.
package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
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
}

func (c *Config) check(size int) error {
	if c.Topology == nil {
		return fmt.Errorf("%w: no topology", ErrConfig)
	}
	if c.Alpha < 0 || c.Delta < 0 {
		return fmt.Errorf("%w: negative alpha %g or delta %g", ErrConfig, c.Alpha, c.Delta)
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
	Stage    int
	Messages int   // messages sent in the stage
	Bytes    int64 // bytes sent in the stage
	// Bit is the rank bit every message of the stage flips (destination =
	// source XOR 2^Bit, Sack's S[s]), or -1 when the messages do not all
	// flip the same single bit (or there are none).
	Bit int
	// MaxDistance is the largest rank distance |dst − src| of a message.
	MaxDistance int
	// MaxHops is the longest route of a message in links. A route split
	// over equal-cost paths counts the length of those paths (the sum of
	// its hop fractions).
	MaxHops float64
	// MaxBytes is the largest message and MinBytes the smallest nonzero
	// one (0 when every message is empty).
	MaxBytes, MinBytes int64
	// MaxCongestion is the largest congestion factor c of any message: the
	// largest link load on its route (messages, fractional for split
	// routes, divided by the link's capacity), at least 1.
	MaxCongestion float64
	// AlphaCount is the number of message start-ups charged: the most
	// messages any node sends or receives in the stage.
	AlphaCount float64
	// DeltaBytes is the congestion-weighted bytes charged: c·m of the
	// slowest message (multi-port) or the largest sum of c·m over a node's
	// sends or receives (single-port).
	DeltaBytes float64
	// Time is AlphaCount·α + DeltaBytes·δ.
	Time float64
}

// Result is the cost of a whole schedule.
type Result struct {
	Time       float64 // seconds
	AlphaCount float64 // α terms
	DeltaBytes float64 // δ terms, in bytes
	// MaxCongestion is the largest link load of any stage.
	MaxCongestion float64
	Messages      int64
	Bytes         int64
	NumStages     int
	Stages        []StageStat // with Config.Stages
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
		res.NumStages++
		res.Time += ss.Time
		res.AlphaCount += ss.AlphaCount
		res.DeltaBytes += ss.DeltaBytes
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
	start, end int // hops[start:end]
	c          float64
}

type nodeLoad struct {
	sends, recvs   int
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
				if op.Kind != schedule.OpSend {
					continue
				}
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
	length := 0.0
	for _, h := range w.route {
		if w.load[h.Link] == 0 {
			w.used = append(w.used, h.Link)
		}
		w.load[h.Link] += h.Frac
		length += h.Frac
	}
	// Equal-cost paths have equal lengths; rounding drops the float
	// error of summing fractions.
	length = math.Round(length*1e6) / 1e6
	bit := -1
	if x := uint(from ^ to); x != 0 && x&(x-1) == 0 {
		bit = bits.TrailingZeros(x)
	}
	w.shape.merge(stageShape{bit: bit, dist: max(to-from, from-to), hops: length, minBytes: bytes})
	w.msgs = append(w.msgs, stageMsg{src: src, dst: dst, bytes: bytes, start: start, end: len(w.hops)})
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
	st.parallel(func(w *stageWorker) {
		for i := range w.msgs {
			m := &w.msgs[i]
			c := 1.0 // a message moves no faster than one link (a split route does not add up)
			for _, h := range w.hops[m.start:m.end] {
				c = max(c, st.load[h.Link]/topo.Capacity(h.Link))
			}
			m.c = c
		}
	})
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
			db := m.c * float64(m.bytes)
			s, r := &st.sent[m.src], &st.sent[m.dst]
			if derate && (s.sends >= st.cfg.BusyPorts || r.recvs >= st.cfg.BusyPorts) {
				db /= st.cfg.BusyEfficiency
			}
			ss.Messages++
			ss.Bytes += m.bytes
			ss.MaxBytes = max(ss.MaxBytes, m.bytes)
			s.sendDB += db
			r.recvDB += db
			if st.cfg.Ports == MultiPort {
				ss.DeltaBytes = max(ss.DeltaBytes, db)
			}
		}
	}
	for _, n := range st.nodes {
		nl := &st.sent[n]
		ss.AlphaCount = max(ss.AlphaCount, float64(max(nl.sends, nl.recvs)))
		if st.cfg.Ports == SinglePort {
			ss.DeltaBytes = max(ss.DeltaBytes, nl.sendDB, nl.recvDB)
		}
	}
	ss.Time = ss.AlphaCount*st.cfg.Alpha + ss.DeltaBytes*st.cfg.Delta
	return ss
}

// WriteStageTable writes the per-stage breakdown of a stage-model result as
// an aligned text table with the columns of Sack's stage tables (sec.
// 3.4.1): S (the flipped rank bit, "-" when there is none), the largest
// rank distance, route length in links and congestion, and the largest
// message in bytes and as a multiple of the smallest nonzero message of all
// the stages ("size×n"); then the message and byte counts and the stage's
// α count, δ bytes and time.
func WriteStageTable(w io.Writer, stages []StageStat) error {
	var unit int64 // the smallest nonzero message of the run
	for _, s := range stages {
		if s.MinBytes > 0 && (unit == 0 || s.MinBytes < unit) {
			unit = s.MinBytes
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tS\tdistance\thops\tmax_congestion\tmax_msg\tsize×n\tmessages\tbytes\talpha\tdelta_bytes\ttime_s\t")
	for _, s := range stages {
		bit, size := "-", "-"
		if s.Bit >= 0 {
			bit = fmt.Sprint(s.Bit)
		}
		if unit > 0 {
			size = fmt.Sprintf("%.4g", float64(s.MaxBytes)/float64(unit))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.4g\t%.4g\t%d\t%s\t%d\t%d\t%g\t%.6g\t%.6g\t\n", s.Stage, bit, s.MaxDistance, s.MaxHops, s.MaxCongestion,
			s.MaxBytes, size, s.Messages, s.Bytes, s.AlphaCount, s.DeltaBytes, s.Time)
	}
	return tw.Flush()
}
