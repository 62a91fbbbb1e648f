package algorithms

import "fmt"

// Round-optimal n-block broadcast schedules on a circulant graph, for any
// number of processes p (Träff 2022, "(Poly)Logarithmic time construction
// of round-optimal n-block broadcast schedules", arXiv 2205.10072; Träff
// 2023, "Round-optimal n-block broadcast schedules in logarithmic time",
// arXiv 2312.11236).
//
// With q = ⌈lg p⌉ the skips are s_q = p and s_k = ⌈s_(k+1)/2⌉, so that
// s_0 = 1. In round i every process r (numbered relative to the root)
// receives from r − s_k and sends to r + s_k (mod p), k = i mod q: every
// process sends and receives one block per round, over the same q-regular
// circulant graph. Rounds come in phases of q; in each phase a process
// receives one new block, its baseblock b(r) (the index of the last skip
// in the greedy decomposition of r into skips), and the q−1 blocks of the
// phase before whose residues are not b(r). Its receive schedule says in
// which round of a phase it gets which of them; the sender of a round
// sends what the receiver's schedule asks for. With n blocks the broadcast
// takes n − 1 + q rounds, which no schedule can beat.

// circSkips returns the skips s_0 … s_q of p ≥ 2 processes.
func circSkips(p int) []int {
	q := ceilLog2(p)
	s := make([]int, q+1)
	s[q] = p
	for k := q - 1; k >= 0; k-- {
		s[k] = (s[k+1] + 1) / 2
	}
	return s
}

// circBase returns the baseblock of process r in [1, p): the index of the
// last skip when r is written greedily as a sum of skips, largest first
// (every such r ends exactly on a skip).
func circBase(r int, s []int) int {
	sum := 0
	for k := len(s) - 2; k >= 0; k-- {
		switch {
		case sum+s[k] == r:
			return k
		case sum+s[k] < r:
			sum += s[k]
		}
	}
	return len(s) - 1
}

// circRecv returns the receive schedule of process r in [1, p) for skips
// s: entry k is what r receives in round k of a phase — b(r), its new
// block, or e − q for the block of residue e of the phase before.
//
// The schedule follows the canonical paths from 0 to r + p in the
// circulant graph unrolled over two phases (Träff 2023, sec. 3): in round
// k the sender is r + p − s_k, and r takes the baseblock e of the farthest
// process 0 + … + s_e on those paths that the sender is at or past, each
// residue once; reaching p itself stands for r's own new block.
func circRecv(r int, s []int) []int {
	q := len(s) - 1
	b := circBase(r, s)
	w := circWalk{s: s, t: r + s[q], used: make([]bool, q+1), out: make([]int, q)}
	w.used[b] = true
	w.visit(0, 2*s[q], q)
	for k, e := range w.out {
		if e == q {
			w.out[k] = b
		} else {
			w.out[k] = e - q
		}
	}
	return w.out
}

// circWalk is circRecv's state: the skips, the target t = r + p, the
// residues taken, the schedule so far and its next round k.
type circWalk struct {
	s    []int
	t    int
	used []bool
	out  []int
	k    int
}

// visit scans the paths that continue from process at (below bound) with
// skips e, e−1, …, 0 not yet taken.
func (w *circWalk) visit(at, bound, e int) {
	q := len(w.s) - 1
	for ; e >= 0 && w.k < q; e-- {
		if w.used[e] {
			continue
		}
		v := at + w.s[e]
		if v > w.t-w.s[w.k] || v >= bound {
			continue
		}
		if v <= w.t-w.s[w.k+1] {
			w.visit(v, bound, e)
			if w.k == q {
				return
			}
		}
		if at > w.t-w.s[w.k+1] {
			return
		}
		bound = v
		w.out[w.k] = e
		w.used[e] = true
		w.k++
	}
}

// circBlocks returns, for the n-block broadcast over skips s, the block a
// process with receive schedule recv (circRecv; nil for the root) receives
// in each round, −1 for none; rounds are numbered from 0 to n − 2 + q.
// Blocks past the last count as the last, and a block already held is not
// received again.
func circBlocks(recv []int, q, n int) []int {
	rounds := n - 1 + q
	out := make([]int, rounds)
	x := circShift(q, n)
	last := false
	for i := range out {
		if recv == nil {
			out[i] = -1
			continue
		}
		j := i + x // the round in the schedule's own numbering
		blk := recv[j%q] + (j/q)*q - x
		switch {
		case blk < 0:
			blk = -1
		case blk >= n-1:
			if last {
				blk = -1
			} else {
				blk, last = n-1, true
			}
		}
		out[i] = blk
	}
	return out
}

// circShift returns the rounds x of the schedule's first phase that an
// n-block broadcast skips (block numbers start at −x), so that the last
// block is new in the last phase: x = (q − (n−1) mod q) mod q.
func circShift(q, n int) int { return mod(q-(n-1)%q, q) }

// checkCirc simulates the n-block broadcast on p processes and reports
// the first violation: a process sending a block it does not hold, or
// ending without every block.
func checkCirc(p, n int) error {
	s := circSkips(p)
	q := len(s) - 1
	has := make([][]bool, p)
	recv := make([][]int, p)
	for r := range p {
		has[r] = make([]bool, n)
		var sched []int
		if r > 0 {
			sched = circRecv(r, s)
		}
		recv[r] = circBlocks(sched, q, n)
	}
	for i := range has[0] {
		has[0][i] = true
	}
	got := make([]int, p)
	for i := range n - 1 + q {
		k := (i + circShift(q, n)) % q
		for r := 1; r < p; r++ {
			got[r] = -1
			blk := recv[r][i]
			if blk < 0 {
				continue
			}
			f := mod(r-s[k], p)
			if !has[f][blk] {
				return fmt.Errorf("p=%d n=%d round %d: %d sends block %d to %d before holding it", p, n, i, f, blk, r)
			}
			if has[r][blk] {
				return fmt.Errorf("p=%d n=%d round %d: %d receives block %d again", p, n, i, r, blk)
			}
			got[r] = blk
		}
		for r := 1; r < p; r++ {
			if got[r] >= 0 {
				has[r][got[r]] = true
			}
		}
	}
	for r := range p {
		for blk, ok := range has[r] {
			if !ok {
				return fmt.Errorf("p=%d n=%d: process %d ends without block %d", p, n, r, blk)
			}
		}
	}
	return nil
}
