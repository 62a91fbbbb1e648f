package plan

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// Key identifies the plan of a call within one communicator: everything
// New reads besides the communicator's defaults, which are fixed for its
// life. Keys are comparable.
type Key struct {
	coll        schedule.Collective
	sigKind     uint8
	alg         string
	inner       string
	root, count int
	inPlace     bool
	commutative bool
	knobs       algorithms.KnobValues
	caps        algorithms.Caps
	radixVector string // the radix vector, rendered ("" without one)
	elemSize    int
	opID        uint64
	grid        string // the call's own grid, rendered ("" without one)
	place       string // the call's own placement, rendered
	exclude     string // the names the default choice skips, sorted
	segments    int    // the segment count (-1: none given)
	arrivals    string // the arrival times and round time, rendered ("" without)
	logp        algorithms.LogP
	hasLogP     bool
}

// KeyOf returns the key of call c with options o.
func KeyOf(c *Call, o *Options) Key {
	s := &c.Spec
	k := Key{coll: s.Coll, sigKind: o.SigKind, alg: o.Alg, inner: o.Inner, root: s.Root, count: s.Count, inPlace: s.InPlaceAt(c.Rank),
		commutative: c.Commutative, knobs: o.Knobs, caps: c.Caps, radixVector: gridKey(o.RadixVector), elemSize: c.ElemSize,
		opID: c.OpID, grid: gridKey(o.Grid), place: placeKey(o.Place), exclude: excludeKey(o.Exclude),
		segments: o.segmentCount(), arrivals: arrivalsKey(o)}
	if o.LogP != nil {
		k.logp, k.hasLogP = *o.LogP, true
	}
	return k
}

// segmentCount returns the segment count option (-1 when not given).
func (o *Options) segmentCount() int {
	if !o.SegmentsSet {
		return -1
	}
	return o.Segments
}

// arrivalsKey renders the arrival times and round time for a key ("" with
// neither).
func arrivalsKey(o *Options) string {
	if o.Arrivals == nil && !o.RoundTimeSet {
		return ""
	}
	return fmt.Sprint(o.Arrivals, o.RoundTime, o.RoundTimeSet)
}

// gridKey renders a process grid for a key ("" without one).
func gridKey(dims []int) string {
	if dims == nil {
		return ""
	}
	return fmt.Sprint(dims)
}

// placeKey renders a placement for a key ("" without one).
func placeKey(pl *algorithms.Placement) string {
	if pl == nil {
		return ""
	}
	return fmt.Sprint(pl.Machine, pl.Nodes)
}

// MaxPlans bounds a Cache: a Put into a cache holding more than MaxPlans
// plans empties it first.
const MaxPlans = 256

// Cache keeps the plans of one communicator's calls by Key, and the one
// used last, which a program that repeats one call finds without taking a
// lock. The plans of the v-collectives (Gatherv, Scatterv, Allgatherv,
// Alltoallv, ReduceScatter) depend on counts their keys leave out and are
// never kept. The zero Cache is empty and ready; a Cache is safe for
// concurrent use.
type Cache struct {
	mu       sync.Mutex
	plans    map[Key]*Entry
	last     atomic.Pointer[Entry]
	lastFast atomic.Pointer[Entry]
}

// Fast is what decides the plan of a call made without options but an
// algorithm's name (Options.Simple): a key much smaller than Key, compared
// at every such call.
type Fast struct {
	alg         string
	coll        schedule.Collective
	inPlace     bool
	commutative bool
	root, count int
	elemSize    int
	opID        uint64
	caps        algorithms.Caps
}

// FastOf returns the Fast key of call c with simple options o.
func FastOf(c *Call, o *Options) Fast {
	s := &c.Spec
	return Fast{alg: o.Alg, coll: s.Coll, inPlace: s.InPlaceAt(c.Rank), commutative: c.Commutative, root: s.Root, count: s.Count,
		elemSize: c.ElemSize, opID: c.OpID, caps: c.Caps}
}

// Last returns the plan of the latest call with simple options whose Fast
// key was k, if it is still that, or nil: a program that repeats one call
// finds its plan without building a Key.
func (c *Cache) Last(k Fast) *Entry {
	if e := c.lastFast.Load(); e != nil && e.hasFast && e.fast == k {
		return e
	}
	return nil
}

// PutFast is Put for the plan of a call with simple options whose Fast
// key is f, which Last then finds (e is not shared yet).
func (c *Cache) PutFast(k Key, f Fast, e *Entry) {
	e.fast, e.hasFast = f, !k.coll.Vector()
	c.Put(k, e)
	c.Remember(f, e)
}

// Remember makes e, a plan found by Get, the one Last finds, when it was
// put by PutFast with Fast key f.
func (c *Cache) Remember(f Fast, e *Entry) {
	if e.hasFast && e.fast == f {
		c.lastFast.Store(e)
	}
}

// Get returns the plan kept for k, or nil.
func (c *Cache) Get(k Key) *Entry {
	if k.coll.Vector() {
		return nil
	}
	e := c.last.Load()
	if e != nil && e.key == k {
		return e
	}
	c.mu.Lock()
	e = c.plans[k]
	c.mu.Unlock()
	if e != nil {
		c.last.Store(e)
	}
	return e
}

// Put keeps e as the plan of k (not for a v-collective's k).
func (c *Cache) Put(k Key, e *Entry) {
	if k.coll.Vector() {
		return
	}
	e.key = k
	c.mu.Lock()
	if c.plans == nil {
		c.plans = make(map[Key]*Entry)
	}
	if len(c.plans) > MaxPlans {
		clear(c.plans)
	}
	c.plans[k] = e
	c.mu.Unlock()
}

// Clear drops every plan.
func (c *Cache) Clear() {
	c.mu.Lock()
	clear(c.plans)
	c.mu.Unlock()
	c.last.Store(nil)
	c.lastFast.Store(nil)
}

// Len returns the number of plans kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.plans)
}
