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
