package algorithms

import (
	"testing"

	"github.com/scoll/scoll/schedule"

	"github.com/scoll/scoll/internal/sweep"
)

// TestCirculantSchedules simulates the n-block broadcast of the circulant
// schedules for every p up to 300 and n up to 2⌈lg p⌉ + 3, and (without
// -short) every p up to 1024 (4096 with -tags long) with n = 1, q + 1 and
// 2q + 1: no process sends a block before it holds it or receives one
// twice, and every process ends with every block, in n − 1 + ⌈lg p⌉ rounds.
func TestCirculantSchedules(t *testing.T) {
	maxP := 300
	if !testing.Short() {
		maxP = 1024
	}
	if sweep.Long {
		maxP = 4096
	}
	for p := 2; p <= maxP; p++ {
		q := ceilLog2(p)
		ns := []int{1, q + 1, 2*q + 1}
		if p <= 300 {
			ns = ns[:0]
			for n := 1; n <= 2*q+3; n++ {
				ns = append(ns, n)
			}
		}
		for _, n := range ns {
			if err := checkCirc(p, n); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCirculantSkips checks the skips and baseblocks against their
// definitions: s_q = p, s_k = ⌈s_(k+1)/2⌉, s_0 = 1; every r in [1, p) is a
// sum of distinct skips taken greedily, the last of index b(r); and each
// receive schedule holds b(r) once and the other residues once, as e − q.
func TestCirculantSkips(t *testing.T) {
	for p := 2; p <= 1100; p++ {
		s := circSkips(p)
		q := len(s) - 1
		if q != ceilLog2(p) || s[q] != p || s[0] != 1 {
			t.Fatalf("p=%d: skips %v", p, s)
		}
		for k := range q {
			if s[k] != (s[k+1]+1)/2 {
				t.Fatalf("p=%d: skips %v", p, s)
			}
		}
		for r := 1; r < p; r++ {
			b := circBase(r, s)
			sum, last := 0, -1
			for k := q - 1; k >= 0; k-- {
				if sum+s[k] <= r {
					sum += s[k]
					last = k
				}
				if sum == r {
					break
				}
			}
			if sum != r || last != b {
				t.Fatalf("p=%d r=%d: baseblock %d, greedy sum %d ends at %d", p, r, b, sum, last)
			}
			seen := make([]bool, q)
			for _, v := range circRecv(r, s) {
				e := v
				if v < 0 {
					e = v + q
				}
				if e < 0 || e >= q || seen[e] || (v >= 0) != (v == b) {
					t.Fatalf("p=%d r=%d (b=%d): receive schedule %v", p, r, b, circRecv(r, s))
				}
				seen[e] = true
			}
		}
	}
}

// TestBcastOptimalRounds checks the built schedules: n − 1 + ⌈lg P⌉ rounds
// for n packets, one send and one receive at most per rank and round, and
// the cost's α count equal to the rounds; each verified symbolically.
func TestBcastOptimalRounds(t *testing.T) {
	in := mustLookup(t, schedule.Bcast, Optimal)
	for _, P := range []int{2, 3, 5, 6, 7, 11, 12, 13, 24, 31, 33, 100} {
		q := ceilLog2(P)
		for _, n := range []int{1, 2, q - 1, q, q + 1, 2*q + 3} {
			if n < 1 {
				continue
			}
			for _, root := range rootedRoots(P) {
				prm := Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Root: root, Count: 3 * n}, Segments: n, ElemSize: 4}
				rounds := 0
				for r := range P {
					q := prm
					q.Rank = r
					s, err := in.Schedule(&q)
					if err != nil {
						t.Fatal(err)
					}
					rounds = max(rounds, len(s.Rounds))
					for i, rd := range s.Rounds {
						sends, recvs := 0, 0
						for _, o := range rd {
							if o.Kind.IsComm() {
								if o.Kind.IsRecv() {
									recvs++
								} else {
									sends++
								}
							}
						}
						if sends > 1 || recvs > 1 {
							t.Fatalf("P=%d n=%d rank %d round %d: %d sends, %d receives", P, n, r, i, sends, recvs)
						}
					}
				}
				if want := n - 1 + q; rounds != want {
					t.Errorf("P=%d n=%d root=%d: %d rounds, want %d", P, n, root, rounds, want)
				}
				if c := in.Cost(&prm); c.Alpha != float64(n-1+q) || c.Beta != float64(n-1+q)*12 {
					t.Errorf("P=%d n=%d: cost %+v, want %d rounds of 12 bytes", P, n, c, n-1+q)
				}
				rootedVerify(t, in, prm)
			}
		}
	}
}

// TestBcastOptimalPackets checks the default packet count against every n
// from 1 to the count under several machines: its cost (n + q − 1)(α + sβ)
// is within 0.1 % of the least (packets of ⌈count/n⌉ elements make the
// cost a little ragged near the real optimum √((q−1)·mβ/α)).
func TestBcastOptimalPackets(t *testing.T) {
	for _, m := range []Machine{InProcess, {Alpha: 2e-6, Beta: 1 / 6e9}, {Alpha: 20e-6, Beta: 1 / 2.5e9}, {Alpha: 1e-6, Beta: 1e-9}} {
		for _, P := range []int{2, 3, 16, 1000} {
			for _, count := range []int{1, 7, 1000, 1 << 18} {
				prm := Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: count}, ElemSize: 4, Machine: m}
				cost := func(n int) float64 {
					q := prm
					q.Segments = n
					return bcastOptimalCost(&q).Time(m.Alpha, m.Beta, 0)
				}
				best := 1
				for n := 2; n <= min(count, 4096); n++ {
					if cost(n) < cost(best) {
						best = n
					}
				}
				got, _ := bcastOptimalPackets(&prm)
				if c := bcastOptimalCost(&prm).Time(m.Alpha, m.Beta, 0); c > cost(best)*(1+1e-3) {
					t.Errorf("%+v P=%d count=%d: %d packets cost %g, %d cost %g", m, P, count, got, c, best, cost(best))
				}
			}
		}
	}
}
