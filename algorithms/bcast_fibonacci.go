package algorithms

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// LogP holds the parameters of the LogP model (Culler et al. 1993) the
// fibonacci trees are built for: L the latency, O the overhead of sending
// or receiving a message, G the gap between two sends of one process, in
// any one unit.
type LogP struct{ L, O, G float64 }

// DefaultLogP is the model of the fibonacci trees when a call gives none:
// L = G, O = 0, under which the optimal tree is the binomial tree.
var DefaultLogP = LogP{L: 1, O: 0, G: 1}

// CheckLogP reports parameters that cannot build a tree
// (errs.InvalidArgument): negative or not finite ones, or G and O both 0.
func CheckLogP(lp LogP) error {
	for _, x := range []float64{lp.L, lp.O, lp.G} {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: LogP parameters L=%g o=%g g=%g", errs.InvalidArgument, lp.L, lp.O, lp.G)
		}
	}
	if lp.G == 0 && lp.O == 0 {
		return fmt.Errorf("%w: LogP parameters with g = o = 0 (a process would send to every other at once)", errs.InvalidArgument)
	}
	return nil
}

// FibonacciTree returns the optimal single-item broadcast tree of P
// processes under lp (Karp, Sahay, Santos, Schauser 1993; Hoefler–Moor
// 2014 Fig. 2a): process 0 holds the item at time 0; a process that holds
// it sends it to a new process every max(g, o) from then on, and the
// message arrives o + L + o after its send starts. The tree takes the P
// earliest arrivals of that unbounded tree: greedily, each new process
// (numbered 1, 2, … in arrival order) is sent to by the process that can
// send soonest (ties: the lower number). It returns each process's parent
// (−1 for 0), its children in sending order, and its arrival time; the
// broadcast time is the largest arrival.
func FibonacciTree(P int, lp LogP) (parent []int, kids [][]int, arrive []float64) {
	parent, kids, arrive = make([]int, P), make([][]int, P), make([]float64, P)
	if P < 1 {
		return nil, nil, nil
	}
	parent[0] = -1
	step := math.Max(lp.G, lp.O)
	q := &sendQueue{{at: 0, node: 0}}
	for v := 1; v < P; v++ {
		s := (*q)[0]
		parent[v] = s.node
		kids[s.node] = append(kids[s.node], v)
		arrive[v] = s.at + 2*lp.O + lp.L
		(*q)[0].at += step
		heap.Fix(q, 0)
		heap.Push(q, sendSlot{at: arrive[v], node: v})
	}
	return parent, kids, arrive
}

// sendSlot is a process's next send time.
type sendSlot struct {
	at   float64
	node int
}

// sendQueue orders send slots by time, then process number.
type sendQueue []sendSlot

func (q sendQueue) Len() int { return len(q) }
func (q sendQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].node < q[j].node
}
func (q sendQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *sendQueue) Push(x any)   { *q = append(*q, x.(sendSlot)) }
func (q *sendQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// fibonacciTrees holds built trees by size and model.
var fibonacciTrees = newMemo[fibKey, fibTree](16)

type fibKey struct {
	P  int
	lp LogP
}

type fibTree struct {
	parent []int
	kids   [][]int
	depth  int // the most messages on a path: Σ (child index + 1)
}

func fibonacciOf(p *Params) fibTree {
	lp := DefaultLogP
	if p.LogP != nil {
		lp = *p.LogP
	}
	return fibonacciTrees.get(fibKey{p.Size, lp}, func() fibTree {
		parent, kids, _ := FibonacciTree(p.Size, lp)
		t := fibTree{parent: parent, kids: kids}
		hops := make([]int, p.Size) // sequential sends before v is reached
		// Children are numbered after their parents, so one pass in order
		// sees every parent first.
		for v := range p.Size {
			for i, c := range kids[v] {
				hops[c] = hops[v] + i + 1
				t.depth = max(t.depth, hops[c])
			}
		}
		return t
	})
}

// fibonacciFor returns p's tree, or fails b on a LogP model that cannot
// build one.
func fibonacciFor(b *schedule.Builder, p *Params) (fibTree, bool) {
	if p.LogP != nil {
		if err := CheckLogP(*p.LogP); err != nil {
			b.Fail(err)
			return fibTree{}, false
		}
	}
	return fibonacciOf(p), true
}

// bcastFibonacci sends along the fibonacci tree: a process receives from
// its parent, then posts its sends to all its children in one round, in
// their order, so that a transport (and the LogGP model) starts each as
// soon as the previous one leaves, as the tree assumes (relative ranks:
// process v is rank (root + v) mod P).
//
// Cost: K(α + nβ), K the most sequential sends on a path from the root.
// Source: Karp, Sahay, Santos, Schauser 1993; Hoefler, Moor 2014 Fig. 2a.
func bcastFibonacci(b *schedule.Builder, p *Params) {
	t, ok := fibonacciFor(b, p)
	if !ok {
		return
	}
	P, v := p.Size, mod(p.Rank-p.Root, p.Size)
	rank := func(u int) int { return (u + p.Root) % P }
	buf := schedule.RecvBuf(0, p.Count)
	if v > 0 {
		b.Recv(rank(t.parent[v]), buf)
		b.EndRound()
	}
	for _, c := range t.kids[v] {
		b.Send(rank(c), buf)
	}
	b.EndRound()
}

// reduceFibonacci is bcastFibonacci reversed: a process receives its
// children's partial results in one round (each into its own scratch),
// combines them, then sends to its parent. Children are not contiguous
// ranks: commutative operators only.
func reduceFibonacci(b *schedule.Builder, p *Params) {
	t, ok := fibonacciFor(b, p)
	if !ok {
		return
	}
	P, v, n := p.Size, mod(p.Rank-p.Root, p.Size), p.Count
	rank := func(u int) int { return (u + p.Root) % P }
	in := p.input()
	kids := t.kids[v]
	acc := schedule.RecvBuf(0, n)
	if v > 0 && len(kids) > 0 {
		acc = b.Alloc(n)
	}
	have := in
	if len(kids) > 0 {
		tmp := make([]schedule.Region, len(kids))
		for i, c := range kids {
			tmp[i] = b.Alloc(n)
			b.Recv(rank(c), tmp[i])
		}
		if acc != in {
			b.Copy(acc, in)
		}
		for i := range kids {
			b.Reduce(acc, tmp[i])
		}
		have = acc
		b.EndRound()
	}
	if v > 0 {
		b.Send(rank(t.parent[v]), have)
		b.EndRound()
	} else if have != acc {
		b.Copy(acc, have)
		b.EndRound()
	}
}

func fibonacciCost(p *Params, reduces bool) Cost {
	if p.Size <= 1 || p.Count == 0 {
		return Cost{}
	}
	return rtHopsCost(p, fibonacciOf(p).depth, reduces)
}

func init() {
	register(Info{Name: Fibonacci, Build: bcastFibonacci, Cost: func(p *Params) Cost { return fibonacciCost(p, false) },
		Doc:    "the LogP-optimal single-item tree for WithLogP's L, o, g or SCOLL_PARAMS' (fibonacci trees; binomial when L = g, o = 0)",
		Source: "Karp, Sahay, Santos, Schauser 1993; Hoefler, Moor 2014 Fig. 2a"}, schedule.Bcast)
	register(Info{Name: Fibonacci, Build: reduceFibonacci, Cost: func(p *Params) Cost { return fibonacciCost(p, true) },
		Requires: NeedsCommutative,
		Doc:      "the fibonacci bcast tree reversed: LogP-optimal single-item reduction; commutative only",
		Source:   "Karp, Sahay, Santos, Schauser 1993; Hoefler, Moor 2014 Fig. 2a"}, schedule.Reduce)
}
