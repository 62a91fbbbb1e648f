package plan

import (
	"sync"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// key returns the key of an allreduce of count elements with o.
func key(count int, o Options) Key {
	c := Call{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: count}, ElemSize: 8, Commutative: true, OpID: 1}
	return KeyOf(&c, &o)
}

func TestCacheHitMiss(t *testing.T) {
	var c Cache
	k := key(10, Options{})
	if e := c.Get(k); e != nil {
		t.Fatalf("empty cache: got %v", e)
	}
	e := &Entry{Sig: 1}
	c.Put(k, e)
	if got := c.Get(k); got != e {
		t.Fatalf("hit: got %v, want %v", got, e)
	}
	if got := c.last.Load(); got != e {
		t.Fatalf("last after a hit: %v, want %v", got, e)
	}
	// Every part of the key tells plans apart.
	others := []Key{
		key(11, Options{}),
		key(10, Options{Alg: "ring"}),
		key(10, Options{Knobs: knobs(algorithms.RadixKnob, 4)}),
		key(10, Options{RadixVector: []int{2, 2}}),
		key(10, Options{RadixVector: []int{4}}),
		key(10, Options{Knobs: knobs(algorithms.SegmentKnob, 64)}),
		key(10, Options{Grid: []int{2, 2}}),
	}
	for _, o := range others {
		if o == k {
			t.Fatalf("key %+v equals %+v", o, k)
		}
		if got := c.Get(o); got != nil {
			t.Errorf("key %+v: got %v, want a miss", o, got)
		}
	}
	// The same options make the same key, so grids compare by value.
	if key(10, Options{Grid: []int{2, 2}}) != key(10, Options{Grid: []int{2, 2}}) {
		t.Error("equal grids make different keys")
	}
	// A second plan is found in the map, then becomes the last.
	e2 := &Entry{Sig: 2}
	k2 := others[0]
	c.Put(k2, e2)
	if got := c.Get(k2); got != e2 || c.last.Load() != e2 {
		t.Errorf("second plan: got %v, last %v", got, c.last.Load())
	}
	if got := c.Get(k); got != e {
		t.Errorf("first plan after the second: got %v", got)
	}
}

func TestCacheKeyInPlace(t *testing.T) {
	// A rooted call is in place at its root only.
	c := Call{Spec: schedule.Spec{Coll: schedule.Reduce, Size: 4, Count: 3, Root: 2, InPlace: true}, ElemSize: 4}
	var o Options
	c.Rank = 2
	atRoot := KeyOf(&c, &o)
	c.Rank = 1
	elsewhere := KeyOf(&c, &o)
	c.Spec.InPlace = false
	if atRoot == elsewhere || elsewhere != KeyOf(&c, &o) {
		t.Error("in-place-ness at the root only")
	}
}

func TestCacheEviction(t *testing.T) {
	var c Cache
	first := key(0, Options{})
	c.Put(first, &Entry{})
	for n := 1; n <= MaxPlans; n++ {
		c.Put(key(n, Options{}), &Entry{})
	}
	if len(c.plans) != MaxPlans+1 {
		t.Fatalf("%d plans, want %d", len(c.plans), MaxPlans+1)
	}
	c.last.Store(nil)
	if c.Get(first) == nil {
		t.Fatal("first plan gone before the cache was full")
	}
	// One more empties the cache, then keeps the new plan.
	c.last.Store(nil)
	k := key(MaxPlans+1, Options{})
	e := &Entry{}
	c.Put(k, e)
	if len(c.plans) != 1 || c.Get(k) != e {
		t.Fatalf("after eviction: %d plans", len(c.plans))
	}
	c.last.Store(nil)
	if c.Get(first) != nil {
		t.Error("first plan kept after eviction")
	}
}

func TestCacheVectorNotKept(t *testing.T) {
	var c Cache
	for _, coll := range []schedule.Collective{schedule.Gatherv, schedule.Scatterv, schedule.Allgatherv, schedule.Alltoallv, schedule.ReduceScatter} {
		call := Call{Spec: schedule.Spec{Coll: coll, Size: 2, Counts: []int{1, 1}}, ElemSize: 4}
		k := KeyOf(&call, &Options{})
		c.Put(k, &Entry{})
		if e := c.Get(k); e != nil {
			t.Errorf("%s: plan kept", coll)
		}
	}
	if len(c.plans) != 0 {
		t.Errorf("%d plans kept", len(c.plans))
	}
}

func TestCacheClear(t *testing.T) {
	var c Cache
	k := key(1, Options{})
	c.Put(k, &Entry{})
	c.Get(k)
	c.Clear()
	if c.Get(k) != nil {
		t.Error("plan kept after Clear")
	}
}

// TestCacheConcurrent runs Get and Put from several goroutines (for -race).
func TestCacheConcurrent(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := key((g*200+i)%300, Options{})
				if c.Get(k) == nil {
					c.Put(k, &Entry{})
				}
			}
		}()
	}
	wg.Wait()
}

// knobs returns knob k set to v.
func knobs(k *algorithms.Knob, v int) (kv algorithms.KnobValues) {
	kv[k.Index()] = v
	return kv
}

// TestCacheLast: the plan of a call without options is found by its Fast
// key alone while it is the latest such call; every argument that decides
// a plan tells Fast keys apart; Remember brings back a plan PutFast made;
// Clear and plans put without a Fast key leave Last empty.
func TestCacheLast(t *testing.T) {
	call := func(mod func(*Call)) Call {
		c := Call{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: 10}, Rank: 1, ElemSize: 8, Commutative: true, OpID: 1}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	var c Cache
	base := call(nil)
	f := FastOf(&base, &Options{Simple: true})
	if c.Last(f) != nil {
		t.Fatal("empty cache: Last found a plan")
	}
	e := &Entry{Sig: 1}
	c.PutFast(KeyOf(&base, &Options{Simple: true}), f, e)
	if got := c.Last(f); got != e {
		t.Fatalf("Last after PutFast: %v, want %v", got, e)
	}
	for name, mod := range map[string]func(*Call){
		"count":       func(c *Call) { c.Spec.Count = 11 },
		"root":        func(c *Call) { c.Spec.Root = 2 },
		"collective":  func(c *Call) { c.Spec.Coll = schedule.Reduce },
		"element":     func(c *Call) { c.ElemSize = 4 },
		"operator":    func(c *Call) { c.OpID = 2 },
		"commutative": func(c *Call) { c.Commutative = false },
		"in place":    func(c *Call) { c.Spec.InPlace = true },
		"caps":        func(c *Call) { c.Caps.Has |= algorithms.CapBlocking },
	} {
		o := call(mod)
		if FastOf(&o, &Options{Simple: true}) == f {
			t.Errorf("%s: same Fast key", name)
		}
		if c.Last(FastOf(&o, &Options{Simple: true})) != nil {
			t.Errorf("%s: Last found the other call's plan", name)
		}
	}
	named := Options{Simple: true, Alg: "ring"}
	if FastOf(&base, &named) == f {
		t.Error("an algorithm's name does not change the Fast key")
	}
	// Another call's plan becomes the last; Remember brings e back.
	other := call(func(c *Call) { c.Spec.Count = 12 })
	e2 := &Entry{Sig: 2}
	c.PutFast(KeyOf(&other, &Options{Simple: true}), FastOf(&other, &Options{Simple: true}), e2)
	if c.Last(f) != nil {
		t.Error("Last still finds the first plan after another call's")
	}
	c.Remember(f, e)
	if c.Last(f) != e {
		t.Error("Remember did not bring the first plan back")
	}
	c.Remember(f, e2) // e2's Fast key is not f: no effect
	if c.Last(f) != e {
		t.Error("Remember took a plan of another Fast key")
	}
	c.Clear()
	if c.Last(f) != nil {
		t.Error("Last after Clear")
	}
	e3 := &Entry{Sig: 3}
	c.Put(KeyOf(&base, &Options{}), e3)
	c.Remember(f, e3)
	if c.Last(f) != nil {
		t.Error("Remember took a plan put without a Fast key")
	}
}
