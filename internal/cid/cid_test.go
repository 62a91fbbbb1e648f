package cid

import (
	"sync"
	"testing"
)

func TestPool(t *testing.T) {
	var p Pool
	if got := p.ReserveFrom(0); got != 1 {
		t.Fatalf("first id %d, want 1", got)
	}
	if got := p.ReserveFrom(1); got != 2 {
		t.Fatalf("next id %d, want 2", got)
	}
	if p.Reserve(2) || p.Reserve(0) || p.Reserve(Max+1) {
		t.Fatal("reserved a taken, zero or too large id")
	}
	if !p.Reserve(7) {
		t.Fatal("could not reserve a free id")
	}
	p.Release(2)
	if got := p.ReserveFrom(2); got != 2 {
		t.Fatalf("a released id is free again below the floor: got %d, want 2", got)
	}
	p.Taken(10) // an agreement gave 10 to a communicator
	if p.Reserve(9) {
		t.Fatal("reserved an id below the floor")
	}
	if got := p.ReserveFrom(3); got != 11 {
		t.Fatalf("after the floor rose to 11: %d", got)
	}
	p.Release(0) // ignored
}

func TestPoolExhausted(t *testing.T) {
	var p Pool
	p.Taken(Max)
	if got := p.ReserveFrom(1); got != 0 {
		t.Fatalf("no id left, got %d", got)
	}
}

func TestPoolConcurrent(t *testing.T) {
	var p Pool
	var wg sync.WaitGroup
	got := make([]uint32, 64)
	for i := range got {
		wg.Go(func() { got[i] = p.ReserveFrom(1) })
	}
	wg.Wait()
	seen := map[uint32]bool{}
	for _, id := range got {
		if id == 0 || seen[id] {
			t.Fatalf("ids %v: a duplicate or none", got)
		}
		seen[id] = true
	}
}
