package topology

import (
	"fmt"
	"math"
)

// Pair is a directed edge of a guest graph: rank From sends to rank To.
type Pair struct{ From, To int }

// Embedding measures a graph embedding in the sense of sec. 3.1.2 of the
// Heath–Solomonik notes: a guest graph on ranks 0..Ranks−1, placed on the
// nodes of a topology by a Mapping, its edges mapped to the topology's
// routes.
//
// The guest graph is directed: an edge is an ordered pair (a, b) of
// distinct ranks, routed from a's node to b's, as the network carries a
// message. A pair that talks both ways is two edges, which on full-duplex
// links load the two directions of the cables; with symmetric routes this
// gives the notes' undirected count on each direction.
type Embedding struct {
	// Ranks is the number of guest nodes and Edges the number of edges
	// added.
	Ranks, Edges int
	// Load is the largest number of ranks on one node (1 for the
	// injective mappings of this package).
	Load int
	// Dilation is the longest route of an edge in links (a route split
	// over equal-cost paths counts the length of those paths);
	// MeanDilation is the mean over the edges (0 without edges).
	Dilation     int
	MeanDilation float64
	// Congestion is the largest number of edges routed over one directed
	// link, divided by the link's capacity: a route split over equal-cost
	// paths adds its fraction to each path's links. On tori, meshes and
	// hypercubes every capacity is 1 and this is the notes' count.
	Congestion float64
}

// Embedder measures an embedding edge by edge, reusing its buffers, so
// that a caller can measure a large graph without holding its edge list
// (Add), or measure several edge sets on one placement (Reset).
//
// Invariant: load[l] is the edge count of link l, nonzero only for links
// in used.
type Embedder struct {
	t      Topology
	m      Mapping
	res    Embedding
	sumDil int64
	load   []float64
	used   []Link
	route  []Hop
}

// NewEmbedder returns an Embedder of ranks 0..ranks−1 placed on t by m (nil
// is XYZ). It computes the load at once, and errors, wrapping
// ErrInvalidMapping, if a rank's node is not a node of t.
func NewEmbedder(t Topology, m Mapping, ranks int) (*Embedder, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no topology", ErrInvalidMapping)
	}
	if m == nil {
		m = XYZ{}
	}
	if ranks < 0 {
		return nil, fmt.Errorf("%w: %d ranks", ErrInvalidMapping, ranks)
	}
	e := &Embedder{t: t, m: m, load: make([]float64, t.Links())}
	perNode := make(map[int]int, ranks)
	for r := range ranks {
		n := m.Node(r)
		if n < 0 || n >= t.Nodes() {
			return nil, fmt.Errorf("%w: rank %d on node %d of %v, which has %d nodes", ErrInvalidMapping, r, n, t, t.Nodes())
		}
		perNode[n]++
		e.res.Load = max(e.res.Load, perNode[n])
	}
	e.res.Ranks = ranks
	return e, nil
}

// Add routes the edge from rank a to rank b and returns its length in
// links. It panics if a or b is not one of the Embedder's ranks.
func (e *Embedder) Add(a, b int) int {
	if uint(a) >= uint(e.res.Ranks) || uint(b) >= uint(e.res.Ranks) {
		panic(fmt.Sprintf("topology: edge %d→%d out of range [0, %d)", a, b, e.res.Ranks))
	}
	e.route = e.t.Route(e.m.Node(a), e.m.Node(b), e.route[:0])
	length := 0.0
	for _, h := range e.route {
		if e.load[h.Link] == 0 {
			e.used = append(e.used, h.Link)
		}
		e.load[h.Link] += h.Frac
		length += h.Frac
	}
	// The paths of a split route have one length; rounding drops the
	// float error of summing their fractions.
	hops := int(math.Round(length))
	e.res.Edges++
	e.sumDil += int64(hops)
	e.res.Dilation = max(e.res.Dilation, hops)
	return hops
}

// Result returns the measures of the edges added since the Embedder was
// made or last Reset.
func (e *Embedder) Result() Embedding {
	res := e.res
	for _, l := range e.used {
		res.Congestion = max(res.Congestion, e.load[l]/e.t.Capacity(l))
	}
	if res.Edges > 0 {
		res.MeanDilation = float64(e.sumDil) / float64(res.Edges)
	}
	return res
}

// Reset forgets the edges added, keeping the placement and its load.
func (e *Embedder) Reset() {
	for _, l := range e.used {
		e.load[l] = 0
	}
	e.used = e.used[:0]
	e.sumDil = 0
	e.res = Embedding{Ranks: e.res.Ranks, Load: e.res.Load}
}

// Embed measures the embedding of the directed graph with the given edges
// on ranks 0..ranks−1, placed on t by m (nil is XYZ) and routed by
// t.Route. Edges from a rank to itself count like the others (a route of
// length 0). Errors wrap ErrInvalidMapping.
func Embed(t Topology, m Mapping, ranks int, edges []Pair) (Embedding, error) {
	e, err := NewEmbedder(t, m, ranks)
	if err != nil {
		return Embedding{}, err
	}
	for i, p := range edges {
		if uint(p.From) >= uint(ranks) || uint(p.To) >= uint(ranks) {
			return Embedding{}, fmt.Errorf("%w: edge %d (%d→%d) leaves ranks [0, %d)", ErrInvalidMapping, i, p.From, p.To, ranks)
		}
		e.Add(p.From, p.To)
	}
	return e.Result(), nil
}

// RingPairs returns the edges of the bidirectional ring on n ranks: r → r±1
// mod n (one edge each way for n = 2, none for n < 2).
func RingPairs(n int) []Pair {
	var edges []Pair
	for r := range n {
		if n > 1 {
			edges = append(edges, Pair{r, (r + 1) % n})
		}
		if n > 2 {
			edges = append(edges, Pair{r, (r + n - 1) % n})
		}
	}
	return edges
}

// TreePairs returns the edges, both ways, of the heap-shaped binary tree on
// n ranks: rank r's children are 2r+1 and 2r+2 (the tree of the "binary"
// broadcast, and of HTree).
func TreePairs(n int) []Pair {
	var edges []Pair
	for c := 1; c < n; c++ {
		edges = append(edges, Pair{(c - 1) / 2, c}, Pair{c, (c - 1) / 2})
	}
	return edges
}
