package schedule

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// fzOp is one decoded operation of a fuzzed schedule.
type fzOp struct {
	rank, kind, peer int
	dst, src         Region
}

// fzDecode turns fuzz bytes into a small collective call and a list of
// operations. Every byte string decodes to something; out-of-range peers,
// regions and kinds are kept on purpose (the builder or the verifier must
// reject them, not panic).
func fzDecode(data []byte) (Spec, Options, bool, []fzOp) {
	at := func(i int) int {
		if i < len(data) {
			return int(data[i])
		}
		return 0
	}
	p := 1 + at(0)%5
	spec := Spec{
		Coll:    Collective(at(1) % int(NumCollectives)),
		Size:    p,
		Root:    at(2) % p,
		Count:   at(3) % 4,
		InPlace: at(4)&1 != 0,
	}
	opt := Options{Ordered: at(4)&2 != 0, MatchOnly: at(4)&4 != 0}
	raw := at(4)&8 != 0
	if spec.Coll.Vector() && spec.Coll != Alltoallv {
		spec.Counts = make([]int, p)
		for i := range spec.Counts {
			spec.Counts[i] = (spec.Count + i) % 3
		}
		if at(4)&16 != 0 && spec.Coll != ReduceScatter {
			spec.Displs = Packed(spec.Counts)
			for i := range spec.Displs {
				spec.Displs[i] += i // gaps
			}
		}
	}
	if spec.Coll == Alltoallv {
		spec.Matrix = make([][]int, p)
		for i := range spec.Matrix {
			spec.Matrix[i] = make([]int, p)
			for j := range spec.Matrix[i] {
				spec.Matrix[i][j] = (spec.Count + i + j) % 3
			}
		}
	}
	region := func(x, n int) Region {
		// Valid spaces only: an invalid one panics Verify on raw schedules
		// (see TestVerifyRawSchedulesKnownBugs).
		return Region{Space: Space(x % 3), Off: (x/3)%7 - 1, Len: n}
	}
	var ops []fzOp
	for i := 5; i+4 <= len(data); i += 4 {
		n := int(data[i+3]>>5) - 1 // -1..6
		ops = append(ops, fzOp{
			rank: int(data[i]&15) % p,
			kind: int(data[i] >> 4 % 6), // 4: end round, 5: invalid kind
			peer: int(data[i+1])%(p+1) - (int(data[i+1])>>7)*2,
			dst:  region(int(data[i+2]), n),
			src:  region(int(data[i+3]&31), n+int(data[i+1]>>6&1)),
		})
	}
	return spec, opt, raw, ops
}

// fzGenerator replays the ops of each rank through the Builder API.
func fzGenerator(ops []fzOp) Generator {
	return func(b *Builder) {
		b.Alloc(6)
		for _, o := range ops {
			if o.rank != b.Rank() {
				continue
			}
			switch o.kind {
			case 0:
				b.Send(o.peer, o.src)
			case 1:
				b.Recv(o.peer, o.dst)
			case 2:
				b.ReduceOrdered(o.dst, o.src, o.peer%2 == 0)
			case 3:
				b.Copy(o.dst, o.src)
			default:
				b.EndRound()
			}
		}
	}
}

// fzSchedules builds raw schedules that bypass the Builder's checks.
func fzSchedules(p int, ops []fzOp) []*Schedule {
	ss := make([]*Schedule, p)
	for r := range ss {
		ss[r] = &Schedule{Rank: r, Size: p, Scratch: 6, Rounds: []Round{nil}}
	}
	for _, o := range ops {
		s := ss[o.rank]
		if o.kind == 4 {
			s.Rounds = append(s.Rounds, nil)
			continue
		}
		op := Op{Kind: Kind(o.kind), Peer: o.peer, Dst: o.dst, Src: o.src, SrcLeft: o.peer%2 == 0}
		switch op.Kind {
		case OpSend:
			op.Dst = Region{}
		case OpRecv:
			op.Src = Region{}
		}
		last := len(s.Rounds) - 1
		s.Rounds[last] = append(s.Rounds[last], op)
	}
	return ss
}

// Seeds that decode to correct schedules, so that fuzzing starts near
// schedules that verify (TestFuzzSeeds checks they do).
var (
	// 2-rank ordered allreduce of 3 elements: copy input; swap; combine.
	fzSeedAllreduce = []byte{1, 2, 0, 3, 2,
		0x30, 0, 4, 0x83, 0x40, 0, 0, 0, 0x00, 1, 0, 0x83, 0x10, 1, 5, 0x83, 0x20, 1, 4, 0x85,
		0x31, 0, 4, 0x83, 0x41, 0, 0, 0, 0x01, 0, 0, 0x83, 0x11, 0, 5, 0x83, 0x21, 0, 4, 0x85}
	// 3-rank dissemination barrier with empty messages.
	fzSeedBarrier = []byte{2, 15, 0, 0, 0,
		0x00, 1, 4, 0x24, 0x10, 2, 4, 0x24, 0x40, 0, 0, 0, 0x00, 2, 4, 0x24, 0x10, 1, 4, 0x24,
		0x01, 2, 4, 0x24, 0x11, 0, 4, 0x24, 0x41, 0, 0, 0, 0x01, 0, 4, 0x24, 0x11, 2, 4, 0x24,
		0x02, 0, 4, 0x24, 0x12, 1, 4, 0x24, 0x42, 0, 0, 0, 0x02, 1, 4, 0x24, 0x12, 0, 4, 0x24}
)

func TestFuzzSeeds(t *testing.T) {
	for i, seed := range [][]byte{fzSeedAllreduce, fzSeedBarrier} {
		for _, raw := range []bool{false, true} {
			data := append([]byte(nil), seed...)
			if raw {
				data[4] |= 8
			}
			spec, opt, _, ops := fzDecode(data)
			gen := fzGenerator(ops)
			if raw {
				gen = FromSchedules(fzSchedules(spec.Size, ops))
			}
			if err := Verify(&spec, gen, opt); err != nil {
				t.Errorf("seed %d (raw %v): %v", i, raw, err)
			}
		}
	}
	// A one-byte change must be able to break them.
	for i, flip := range []struct {
		seed []byte
		at   int
		val  byte
	}{
		{fzSeedAllreduce, 5 + 4*9 + 1, 1}, // rank 1 combines in the wrong order
		{fzSeedAllreduce, 5 + 4*3 + 2, 3}, // rank 0 receives into its send buffer
		{fzSeedBarrier, 5 + 4*4, 0x40},    // rank 0 ends a round instead of receiving
	} {
		data := append([]byte(nil), flip.seed...)
		data[flip.at] = flip.val
		spec, opt, _, ops := fzDecode(data)
		if err := Verify(&spec, fzGenerator(ops), opt); err == nil {
			t.Errorf("mutation %d accepted", i)
		}
	}
}

// FuzzVerify checks that Verify and Validate never panic on arbitrary small
// schedules, that every error they return wraps ErrVerify or ErrSpec, that
// a schedule Verify accepts also passes Validate, and that fingerprint
// tracking agrees with exact tracking (fpAgrees).
func FuzzVerify(f *testing.F) {
	for _, seed := range [][]byte{fzSeedAllreduce, fzSeedBarrier} {
		f.Add(seed)
	}
	f.Add([]byte{0, 9, 0, 2, 8, 0x50, 0, 4, 0x44, 0x30, 0, 1, 0x44})                       // raw, invalid kind
	f.Add([]byte{4, 13, 1, 3, 3, 0x21, 0, 5, 0x82, 0x31, 0, 2, 0x63, 0x40, 0, 0, 0})       // scan, in place
	f.Add([]byte{2, 10, 0, 3, 9, 0x02, 0x81, 4, 0x83, 0x12, 0x41, 5, 0x83, 0x40, 0, 0, 0}) // raw alltoallv
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4+4*64 {
			return // keep runs small
		}
		spec, opt, raw, ops := fzDecode(data)
		gen := fzGenerator(ops)
		if raw {
			gen = FromSchedules(fzSchedules(spec.Size, ops))
		}
		err := Verify(&spec, gen, opt)
		if err != nil && !errors.Is(err, ErrVerify) && !errors.Is(err, ErrSpec) {
			t.Fatalf("Verify: %v wraps neither ErrVerify nor ErrSpec", err)
		}
		verr := Validate(&spec, gen)
		if verr != nil && !errors.Is(verr, ErrVerify) && !errors.Is(verr, ErrSpec) {
			t.Fatalf("Validate: %v wraps neither ErrVerify nor ErrSpec", verr)
		}
		if err == nil && verr != nil {
			t.Fatalf("Verify accepts what Validate rejects: %v", verr)
		}
		fpAgrees(t, data)
	})
}

// fpAgrees checks the contract between exact and fingerprint tracking on
// one decoded schedule: fingerprints accept whatever exact tracking accepts,
// and reject whatever it rejects except a duplicate that exact tracking
// reports where it happens (it may never reach a result).
func fpAgrees(t *testing.T, data []byte) (accepted bool) {
	t.Helper()
	spec, opt, raw, ops := fzDecode(data)
	gen := fzGenerator(ops)
	if raw {
		gen = FromSchedules(fzSchedules(spec.Size, ops))
	}
	exact := Verify(&spec, gen, opt)
	opt.Fingerprint, opt.Seed = true, uint64(len(data))
	fp := Verify(&spec, gen, opt)
	switch {
	case exact == nil && fp != nil:
		t.Fatalf("%x: exact accepts, fingerprint rejects: %v", data, fp)
	case exact != nil && fp == nil && !strings.Contains(exact.Error(), "twice"):
		t.Fatalf("%x: fingerprint accepts, exact rejects: %v", data, exact)
	}
	return exact == nil
}

// TestFingerprintAgreesWithExact runs fpAgrees on random mutations of the
// allreduce seed.
func TestFingerprintAgreesWithExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 5000
	accepted := 0
	for range n {
		data := append([]byte(nil), fzSeedAllreduce...)
		for range 1 + rng.IntN(3) {
			data[rng.IntN(len(data))] = byte(rng.Uint32())
		}
		if fpAgrees(t, data) {
			accepted++
		}
	}
	if accepted < n/20 || accepted > n*19/20 {
		t.Fatalf("%d of %d mutants verify: the comparison says little", accepted, n)
	}
}
