//go:build linux

package shm

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
)

// twoMappings returns a segment and a second, independent mapping of it
// (through a duplicate descriptor), as a second process would have.
func twoMappings(t *testing.T, size int) (*Segment, *Segment) {
	t.Helper()
	a, err := CreateSegment("test", size)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(a.FD())
	if err != nil {
		t.Fatal(err)
	}
	b, err := AttachSegment(fd, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestRingStream sends records of random sizes, zero and the largest
// included, from a producer on one mapping to a consumer on another and
// checks every byte and the order; the ring is small so that it wraps and
// fills many times.
func TestRingStream(t *testing.T) {
	const capacity = 1024
	a, b := twoMappings(t, RingSize(capacity))
	prod, err := NewRing(a.Bytes(), capacity)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := NewRing(b.Bytes(), capacity)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int, n)
	for i := range sizes {
		switch i % 50 {
		case 0:
			sizes[i] = 0
		case 1:
			sizes[i] = prod.MaxRecord()
		default:
			sizes[i] = rng.IntN(200)
		}
	}
	payload := func(i int) []byte {
		p := make([]byte, sizes[i])
		for j := range p {
			p[j] = byte(i*7 + j)
		}
		return p
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		bell := prod.Bell()
		for i := range n {
			p := payload(i)
			half := len(p) / 2
			for {
				ok, err := prod.Write(p[:half], p[half:])
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					break
				}
				time.Sleep(time.Microsecond)
			}
			bell.Ring()
		}
	})
	bell := cons.Bell()
	for i := 0; i < n; {
		seq := bell.Arm()
		got, err := cons.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			bell.Sleep(seq, 10*time.Millisecond)
			continue
		}
		bell.Disarm()
		if !bytes.Equal(got, payload(i)) {
			t.Fatalf("record %d: %d bytes, want %d", i, len(got), sizes[i])
		}
		cons.Release()
		i++
	}
	wg.Wait()
	if !cons.Empty() {
		t.Error("ring not empty after every record")
	}
}

// TestRingFull checks that a full ring refuses a record without writing it
// and that records too large for the ring are an error.
func TestRingFull(t *testing.T) {
	mem := make([]byte, RingSize(256))
	r, err := NewRing(mem, 256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write(make([]byte, r.MaxRecord()+1)); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("oversized record: %v", err)
	}
	writes := 0
	for {
		ok, err := r.Write(make([]byte, 40))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		writes++
	}
	if writes != 256/48 {
		t.Errorf("%d records of 48 bytes fit in 256, want %d", writes, 256/48)
	}
	for range writes {
		if p, err := r.Peek(); err != nil || len(p) != 40 {
			t.Fatalf("peek: %d bytes, %v", len(p), err)
		}
		r.Release()
	}
	if p, err := r.Peek(); p != nil || err != nil {
		t.Errorf("empty ring: %v, %v", p, err)
	}
	for _, capacity := range []int{0, 32, 100} {
		if _, err := NewRing(make([]byte, RingSize(128)), capacity); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("capacity %d: %v", capacity, err)
		}
	}
}

// TestRingCorrupt damages published records in every way a broken peer
// could and checks that the consumer reports ErrCorrupt rather than
// reading out of bounds.
func TestRingCorrupt(t *testing.T) {
	for name, damage := range map[string]func(mem []byte){
		"length":     func(mem []byte) { mem[ringHeader] = 0xff; mem[ringHeader+1] = 0xff },
		"check":      func(mem []byte) { mem[ringHeader+4] ^= 1 },
		"huge tail":  func(mem []byte) { u64(mem, 0).Store(1 << 40) },
		"short tail": func(mem []byte) { u64(mem, 0).Store(4) },
		"beyond tail": func(mem []byte) {
			// a valid header claiming more than was published
			putHeader(mem[ringHeader:], 64)
		},
	} {
		mem := make([]byte, RingSize(256))
		p, _ := NewRing(mem, 256)
		if ok, err := p.Write([]byte("hello")); !ok || err != nil {
			t.Fatal(ok, err)
		}
		damage(mem)
		c, _ := NewRing(mem, 256)
		if _, err := c.Peek(); !errors.Is(err, ErrCorrupt) || !errors.Is(err, errs.PeerFailed) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestBellWakes checks that a sleeper wakes when rung, that a ring before
// the wait is not lost, and that the timeout bounds the sleep.
func TestBellWakes(t *testing.T) {
	a, b := twoMappings(t, 64)
	ba, bb := &Bell{mem: a.Bytes()[:8]}, &Bell{mem: b.Bytes()[:8]}
	if ba.Ring(); bb.Seq() != 0 {
		t.Fatal("a ring without sleepers advanced the sequence number")
	}
	seq := bb.Arm()
	ba.Ring() // between Arm and Sleep: Sleep must return at once
	start := time.Now()
	bb.Sleep(seq, 10*time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a ring before the wait was lost (slept %v)", d)
	}
	seq = bb.Arm()
	done := make(chan struct{})
	go func() {
		bb.Sleep(seq, 10*time.Second)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	ba.Ring()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the sleeper did not wake")
	}
	start = time.Now()
	bb.Sleep(bb.Arm(), 20*time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout ignored: slept %v", d)
	}
}

// TestSegmentAttach checks the sizes attach accepts and that Close frees
// the mapping.
func TestSegmentAttach(t *testing.T) {
	if _, err := CreateSegment("x", 0); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("empty segment: %v", err)
	}
	a, err := CreateSegment("x", 100)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Bytes()) < 100 {
		t.Fatalf("segment of %d bytes", len(a.Bytes()))
	}
	fd, _ := unix.Dup(a.FD())
	if _, err := AttachSegment(fd, 1<<30); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("segment too small: %v", err)
	}
	a.Bytes()[10] = 42
	fd, _ = unix.Dup(a.FD())
	b, err := AttachSegment(fd, 100)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bytes()[10] != 42 {
		t.Error("the second mapping does not share the first's memory")
	}
	if err := b.Close(); err != nil || b.Close() != nil {
		t.Errorf("close: %v", err)
	}
}
