package algorithms

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// checkClairvoyant replays a plan on sets of contributions, independently
// of the generator: every rank starts with its own contribution to every
// segment; a message carries what its sender holds of the segment at the
// start of the round and empties it there; the receiver adds it to what it
// holds. It fails when a rank acts before its arrival (given in units of
// d), does two sends or receives in a round, sends a segment it does not
// hold, receives a contribution twice, or when the root does not end with
// every contribution to every segment, exactly once.
func checkClairvoyant(pl *ClairvoyantPlan, arrivals []float64) error {
	P, N, w := pl.P, pl.N, (pl.P+63)/64
	first := math.Inf(1)
	for _, a := range arrivals {
		first = min(first, a)
	}
	hold := make([]uint64, P*N*w) // hold[(r*N+j)*w:]: contributions rank r holds of segment j
	set := func(r, j int) []uint64 { return hold[(r*N+j)*w : (r*N+j+1)*w] }
	for r := range P {
		for j := range N {
			set(r, j)[r/64] |= 1 << (r % 64)
		}
	}
	type msg struct {
		from, to, seg int
		data          []uint64
	}
	byRound := map[int][]msg{}
	for r := range pl.P {
		steps := pl.Steps(r)
		start := 0
		if arrivals != nil {
			start = int(math.Ceil(arrivals[r] - first - 1e-9))
		}
		if pl.Start[r] != start {
			return fmt.Errorf("rank %d: start %d, want %d", r, pl.Start[r], start)
		}
		last := -1
		for _, st := range steps {
			if st.Round <= last || st.Round >= pl.Rounds {
				return fmt.Errorf("rank %d: step of round %d after round %d (of %d)", r, st.Round, last, pl.Rounds)
			}
			last = st.Round
			if st.Round < start {
				return fmt.Errorf("rank %d arrives in round %d and acts in round %d", r, start, st.Round)
			}
			if st.Send.Peer < 0 && st.Recv.Peer < 0 {
				return fmt.Errorf("rank %d: empty step in round %d", r, st.Round)
			}
			if st.Send.Peer >= 0 && st.Send.Segment == st.Recv.Segment && st.Recv.Peer >= 0 {
				return fmt.Errorf("rank %d: sends and receives segment %d in round %d", r, st.Send.Segment, st.Round)
			}
			if m := st.Send; m.Peer >= 0 {
				byRound[st.Round] = append(byRound[st.Round], msg{from: r, to: m.Peer, seg: m.Segment})
			}
		}
	}
	// Every send has its receive on the peer in the same round.
	recvOf := map[[3]int]int{}
	for r := range pl.P {
		steps := pl.Steps(r)
		for _, st := range steps {
			if m := st.Recv; m.Peer >= 0 {
				recvOf[[3]int{st.Round, m.Peer, r}] = m.Segment + 1
			}
		}
	}
	nmsg := 0
	for k := 0; k < pl.Rounds; k++ {
		ms := byRound[k]
		for i := range ms {
			m := &ms[i]
			if recvOf[[3]int{k, m.from, m.to}] != m.seg+1 {
				return fmt.Errorf("round %d: %d sends segment %d to %d, which does not receive it", k, m.from, m.seg, m.to)
			}
			src := set(m.from, m.seg)
			if isEmpty(src) {
				return fmt.Errorf("round %d: %d sends segment %d, which it does not hold", k, m.from, m.seg)
			}
			m.data = append([]uint64(nil), src...)
			clear(src)
		}
		for _, m := range ms {
			dst := set(m.to, m.seg)
			for x := range dst {
				if dst[x]&m.data[x] != 0 {
					return fmt.Errorf("round %d: %d receives a contribution to segment %d twice", k, m.to, m.seg)
				}
				dst[x] |= m.data[x]
			}
		}
		nmsg += len(ms)
	}
	if nmsg != len(recvOf) {
		return fmt.Errorf("%d sends, %d receives", nmsg, len(recvOf))
	}
	for r := range P {
		for j := range N {
			n := 0
			for _, x := range set(r, j) {
				n += bits.OnesCount64(x)
			}
			if want := map[bool]int{true: P, false: 0}[r == pl.Root]; n != want {
				return fmt.Errorf("rank %d ends with %d contributions to segment %d, want %d", r, n, j, want)
			}
		}
	}
	return nil
}

func isEmpty(s []uint64) bool {
	for _, x := range s {
		if x != 0 {
			return false
		}
	}
	return true
}

func generate(t *testing.T, P, N, root int, arrivals []float64) *ClairvoyantPlan {
	t.Helper()
	pl, err := GenerateClairvoyant(P, N, root, arrivals)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkClairvoyant(pl, arrivals); err != nil {
		t.Fatalf("P=%d N=%d root=%d arrivals=%v: %v", P, N, root, arrivals, err)
	}
	return pl
}

// TestClairvoyantTable2 reproduces Marendic et al.'s Table 2 (P = N = 4,
// balanced): five rounds; the first two rounds as the paper traces them
// (with rank 1's second outbound entry (3,2), which the rest of the table
// implies, for the printed (2,2)), and the root's inbound queue.
func TestClairvoyantTable2(t *testing.T) {
	pl := generate(t, 4, 4, 0, nil)
	if pl.Rounds != 5 {
		t.Fatalf("R = %d, want 5", pl.Rounds)
	}
	m := func(p, s int) ClairvoyantMsg { return ClairvoyantMsg{p, s} }
	want := [4][2][2]ClairvoyantMsg{ // rank, round, {inbound, outbound}
		{{m(1, 0), m(1, 1)}, {m(2, 0), m(2, 2)}},
		{{m(0, 1), m(0, 0)}, {m(3, 1), m(3, 2)}},
		{{m(3, 0), m(3, 1)}, {m(0, 2), m(0, 0)}},
		{{m(2, 1), m(2, 0)}, {m(1, 2), m(1, 1)}},
	}
	for r := range 4 {
		for k := range 2 {
			st := pl.Steps(r)[k]
			if st.Round != k || st.Recv != want[r][k][0] || st.Send != want[r][k][1] {
				t.Errorf("rank %d round %d: %+v, want in %v out %v", r, k+1, st, want[r][k][0], want[r][k][1])
			}
		}
	}
	var in []ClairvoyantMsg
	for _, st := range pl.Steps(0) {
		in = append(in, st.Recv)
	}
	if fmt.Sprint(in) != fmt.Sprint([]ClairvoyantMsg{m(1, 0), m(2, 0), m(1, 1), m(2, 2), m(1, 3)}) {
		t.Errorf("root's inbound queue %v", in)
	}
}

// TestClairvoyantBalancedRounds: ⌈lg P⌉ + N − 1 rounds for balanced
// arrivals, P and N powers of two from 4 to 512 (what the paper checked).
func TestClairvoyantBalancedRounds(t *testing.T) {
	for P := 4; P <= 512; P *= 2 {
		for N := 4; N <= 512; N *= 2 {
			if testing.Short() && P*N > 1<<14 {
				continue
			}
			pl := generate(t, P, N, P/3, nil)
			if want := ceilLog2(P) + N - 1; pl.Rounds != want {
				t.Errorf("P=%d N=%d: R = %d, want %d", P, N, pl.Rounds, want)
			}
		}
	}
}

// TestClairvoyantFig8: P = N = 4, the last rank arriving when the three
// others have finished their reduction (5 rounds): 5 + 4 = 9 rounds.
func TestClairvoyantFig8(t *testing.T) {
	a := []float64{0, 0, 0, 5}
	pl := generate(t, 4, 4, 0, a)
	if pl.Rounds != 9 {
		t.Fatalf("R = %d, want 9", pl.Rounds)
	}
	for _, st := range pl.Steps(3) {
		if st.Round < 5 {
			t.Fatalf("rank 3 acts in round %d before it arrives", st.Round)
		}
	}
	// The first five rounds are the three-rank reduction alone.
	if got := generate(t, 3, 4, 0, nil).Rounds; got != 5 {
		t.Fatalf("3 ranks: R = %d, want 5", got)
	}
}

// TestClairvoyantErrata are the printed algorithm's errors as regression
// cases: arrivals off the d grid end (the printed grouping loops forever);
// a rank never acts before it arrives (it could, by up to d); and every
// contribution arrives once (line 33 and forwarding in the round of
// receipt lose some) — checkClairvoyant checks the last two.
func TestClairvoyantErrata(t *testing.T) {
	for _, a := range [][]float64{
		{0, 0.5, 1.25, 7.9},
		{0.3, 0.3, 0.3, 0.3},
		{2, 0.999999, 1.0000000001, 0},
		{100, 0, 0, 0},
	} {
		for root := range len(a) {
			generate(t, len(a), 3, root, a)
		}
	}
	// Off the grid by a hair: arrival 1+1e-12 is round 1, 1.001 round 2.
	pl := generate(t, 2, 1, 0, []float64{0, 1.001})
	if pl.Start[1] != 2 || pl.Rounds != 3 {
		t.Fatalf("start %v, R = %d; want rank 1 in round 2, R = 3", pl.Start, pl.Rounds)
	}
}

// TestClairvoyantRandomArrivals: hundreds of random imbalanced arrivals
// up to P = 512 and N = 64 give plans that deliver every contribution once,
// with no rank acting before it arrives; smaller ones also pass the
// symbolic verifier as built schedules.
func TestClairvoyantRandomArrivals(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	in := mustLookup(t, schedule.Reduce, Clairvoyant)
	cases := 300
	if testing.Short() {
		cases = 100
	}
	for c := range cases {
		P := 1 + rng.IntN(64)
		if c%10 == 0 {
			P = 1 + rng.IntN(512)
		}
		N := 1 + rng.IntN(64)
		a := make([]float64, P)
		for r := range a {
			switch c % 3 {
			case 0: // uniform
				a[r] = rng.Float64() * 20
			case 1: // a few late ranks
				if rng.IntN(8) == 0 {
					a[r] = 5 + rng.Float64()*30
				}
			case 2: // on the grid, with ties
				a[r] = float64(rng.IntN(6))
			}
		}
		root := rng.IntN(P)
		pl := generate(t, P, N, root, a)
		if P <= 33 && c%4 == 0 {
			count := N + rng.IntN(3*N) // some segments longer than others
			prm := Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: P, Root: root, Count: count, InPlace: c%8 == 0},
				Commutative: true, ElemSize: 4, Segments: N, Arrivals: a}
			if err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{}); err != nil {
				t.Fatalf("P=%d N=%d root=%d arrivals=%v: %v", P, N, root, a, err)
			}
		}
		_ = pl
	}
}

func TestClairvoyantBadInput(t *testing.T) {
	for _, c := range []struct {
		P, N, root int
		a          []float64
	}{
		{0, 1, 0, nil}, {4, 0, 0, nil}, {4, 2, 4, nil}, {4, 2, -1, nil},
		{4, 2, 0, []float64{0, 0, 0}},
		{4, 2, 0, []float64{0, -1, 0, 0}},
		{4, 2, 0, []float64{0, math.NaN(), 0, 0}},
		{4, 2, 0, []float64{0, math.Inf(1), 0, 0}},
	} {
		if _, err := GenerateClairvoyant(c.P, c.N, c.root, c.a); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("P=%d N=%d root=%d a=%v: %v, want ErrInvalidArgument", c.P, c.N, c.root, c.a, err)
		}
	}
	// Not commutative: refused.
	in := mustLookup(t, schedule.Reduce, Clairvoyant)
	prm := Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: 4, Count: 8}, ElemSize: 4}
	if err := in.Check(&prm); !errors.Is(err, errs.Unsupported) {
		t.Fatalf("non-commutative: %v, want ErrUnsupported", err)
	}
	// A bad arrival vector reaches the builder as its error.
	prm.Commutative, prm.Arrivals = true, []float64{0, 1}
	if _, err := in.Schedule(&prm); !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("2 arrival times of 4 ranks: %v, want ErrInvalidArgument", err)
	}
}

// TestClairvoyantDefaultRule: the default rule never picks clairvoyant.
func TestClairvoyantDefaultRule(t *testing.T) {
	for _, n := range []int{1, 1 << 10, 1 << 20} {
		prm := Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: 64, Count: n}, Commutative: true, ElemSize: 4}
		if in := Select(&prm, InProcess, Caps{}); in == nil || in.Name == Clairvoyant {
			t.Fatalf("n=%d: default %v", n, in)
		}
	}
}

func BenchmarkGenerateClairvoyant(b *testing.B) {
	for _, c := range []struct{ P, N int }{{128, 16}, {512, 64}} {
		b.Run(fmt.Sprintf("P=%d/N=%d", c.P, c.N), func(b *testing.B) {
			for b.Loop() {
				if _, err := GenerateClairvoyant(c.P, c.N, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleGenerateClairvoyant() {
	// Four ranks, four segments, the last rank 5 rounds late (Marendic et
	// al.'s Fig. 8): ranks 0-2 reduce among themselves first.
	pl, err := GenerateClairvoyant(4, 4, 0, []float64{0, 0, 0, 5})
	if err != nil {
		panic(err)
	}
	fmt.Println("rounds:", pl.Rounds)
	for _, st := range pl.Steps(3) {
		fmt.Printf("rank 3, round %d: sends segment %d to rank %d\n", st.Round, st.Send.Segment, st.Send.Peer)
	}
	// Output:
	// rounds: 9
	// rank 3, round 5: sends segment 0 to rank 0
	// rank 3, round 6: sends segment 1 to rank 0
	// rank 3, round 7: sends segment 2 to rank 0
	// rank 3, round 8: sends segment 3 to rank 0
}
