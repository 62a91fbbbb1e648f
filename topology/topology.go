// Package topology describes interconnection networks and routes messages
// over them, for the network simulators (the stage model of Sack's thesis,
// sec. 3.1, and the max-min-fair flow model) and for rendering.
//
// A Topology is a directed graph of vertices (compute nodes and switches)
// and links. Every cable is full duplex and shows as two Links, one per
// direction; each is a separate resource with its own Capacity, 1 being the
// bandwidth of a node's injection link. Route returns the links a message
// crosses and the fraction of the message on each (several paths when the
// routing splits traffic over equal-cost paths).
//
// # Networks
//
// Parse spells them as follows (the constructors NewTorus, NewMesh,
// NewHypercube, NewCrossbar, NewClos and NewDragonfly build the same).
//
//	torus:8x8x8        N-D torus
//	mesh:4x4x8         N-D mesh
//	hypercube:9        2^9 nodes
//	crossbar:512       512 nodes on one non-blocking switch
//	clos:R=32,T=16,mu=0.25[,levels=2][,nodes=N][,routing=ideal|dmodk]
//	dragonfly:g=9,a=4,p=2[,h=2]
//
// Torus and mesh: nodes are numbered x fastest (XYZ) and are their own
// routers, so routes hold the inter-node links only, with no injection
// links, as in Sack's torus model. Routing is dimension-order (X, then Y,
// then Z, ...), the shorter way round each ring; a displacement of exactly
// half a ring is split, 0.5 each way, and since every split path reaches
// the same node before the next dimension, the later dimensions carry the
// whole message once. A dimension of size 1 has no links. A torus dimension
// of size 2 has two parallel cables between the pair (the "+" one and the
// wrap-around one), so its degree and bisection follow Table 2 and a route
// between the pair is a half ring split over both.
//
// Hypercube: the 2×2×...×2 grid without switches; e-cube routing corrects
// the differing bits lowest first.
//
// Crossbar: every node has an injection and an ejection link to one
// non-blocking switch; a route is [src up, dst down].
//
// Clos: see NewClos for the sizing (T nodes and ⌈μT⌉ uplinks of capacity
// μT/⌈μT⌉ per leaf switch, R leaf switches by default) and ClosRouting for
// ideal and D-mod-k routing. Dragonfly: see NewDragonfly for the
// consecutive global arrangement and minimal routing.
//
// # Degree, diameter, bisection
//
// For tori, meshes and hypercubes they are those of Table 2 of the
// Heath–Solomonik notes (n-D mesh 2n, n(k−1), k^(n−1); n-D torus 2n, nk/2,
// 2k^(n−1); hypercube k, k, 2^(k−1)), generalised to unequal sizes: the
// degree counts cables at a node, the diameter sums over dimensions and
// the bisection cuts across the largest dimension k_max (P/k_max cables for
// a mesh, 2P/k_max for a torus: exactly minimal when k_max is even, Table
// 2's approximation otherwise). For the indirect networks the degree
// counts cables at the busiest switch (n for a crossbar, at most R for a
// Clos network), the diameter counts node links (2 for a crossbar), and the
// bisection is ⌊P/2⌋ node links for a crossbar, μ·P/2 for Clos (the
// taper's definition) and the global cables between two halves of the
// groups for a dragonfly; NewClos and NewDragonfly give the details.
//
// # Mappings
//
// A Mapping places ranks on nodes: XYZ (identity, the default), Morton (Z
// order over a torus, mesh or hypercube) or Explicit; ParseMapping spells
// them "xyz", "morton" and "list:0,5,2,...". Gray ("gray", the reflected
// Gray code), Ring ("ring", a Hamiltonian cycle of a torus or mesh) and
// HTree ("htree", a binary tree's H-tree layout) are the embeddings of
// Fig. 5 of the Heath–Solomonik notes; Embed and Embedder measure an
// embedding's load, dilation and congestion (sec. 3.1.2).
package topology

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidSpec is wrapped by every error about a topology spec or
// configuration that cannot be built.
var ErrInvalidSpec = errors.New("topology: invalid spec")

// Link is a directed link (each direction of a full-duplex cable is its own
// Link), numbered 0..Links()-1.
type Link int32

// Hop is a link of a route and the fraction of the message crossing it. A
// route split over equal-cost paths carries fractions below 1; a link used
// by several of the split paths appears once, with the summed fraction.
type Hop struct {
	Link Link
	Frac float64
}

// VertexKind says whether a Vertex is a compute node or a switch.
type VertexKind uint8

const (
	// KindNode is a compute node (an endpoint; on a torus, mesh or
	// hypercube also its own router).
	KindNode VertexKind = iota
	// KindSwitch is a switch or router that no rank runs on.
	KindSwitch
)

// Vertex is an end of a link: a node (Index in [0, Nodes())) or a switch
// (Index in [0, Switches())).
type Vertex struct {
	Kind  VertexKind
	Index int
}

// String returns "n<index>" for a node and "s<index>" for a switch.
func (v Vertex) String() string {
	if v.Kind == KindSwitch {
		return "s" + strconv.Itoa(v.Index)
	}
	return "n" + strconv.Itoa(v.Index)
}

// Topology is an interconnection network with its routing. Implementations
// are immutable and safe for concurrent use.
type Topology interface {
	// String returns the canonical spec, which Parse accepts and which
	// omits parameters at their defaults, e.g. "torus:8x8x8".
	String() string
	// Nodes is the number of compute nodes (endpoints), numbered
	// 0..Nodes()-1.
	Nodes() int
	// Switches is the number of switch vertices (0 for direct networks),
	// numbered 0..Switches()-1.
	Switches() int
	// Links is the number of directed links, node links included.
	Links() int
	// Capacity is the relative bandwidth of l, 1 being a node's injection
	// link; a tapered or bundled link shows here. It panics if l is not in
	// [0, Links()).
	Capacity(l Link) float64
	// Route appends the hops of the route from node src to node dst to
	// buf[:0] and returns the result; src == dst gives an empty route.
	// The fractions of the hops leaving src sum to 1, as do those entering
	// dst, and every vertex in between passes on what it receives. Route
	// allocates nothing when buf has room for the route, so a caller that
	// reuses its buffer routes allocation-free. It panics if src or dst is
	// not in [0, Nodes()), like an out-of-range slice index.
	Route(src, dst int, buf []Hop) []Hop
	// Degree is the largest number of links leaving any vertex (node or
	// switch), which is the number of cables at it: the graph degree of
	// Table 2 of the Heath–Solomonik notes.
	Degree() int
	// Diameter is the largest number of hops of a route between two
	// nodes, node links included for indirect networks. For tori,
	// meshes, hypercubes, crossbars and Clos networks it is the graph
	// diameter (Table 2); for a dragonfly the longest minimal route.
	Diameter() int
	// Bisection is the capacity (in cables, weighted by Capacity) cut by
	// a minimal balanced bisection of the nodes, as in Table 2; each
	// topology documents how it computes it.
	Bisection() float64
	// Endpoint returns the vertices l leaves and enters. It panics if l is
	// not in [0, Links()).
	Endpoint(l Link) (from, to Vertex)
}

// Grid is a Topology whose nodes form an N-D grid numbered x fastest:
// node = x0 + d0·(x1 + d1·(x2 + ...)) for Dims() = [d0, d1, ...]. Tori,
// meshes and hypercubes (2×2×...×2) are grids.
type Grid interface {
	Topology
	// Dims returns a copy of the grid's sizes, fastest dimension first.
	Dims() []int
}

// maxLinks bounds every topology so that links fit in a Link.
const maxLinks = math.MaxInt32

// maxParam bounds the integer parameters of Clos and dragonfly specs, so
// that size computations cannot overflow before the link bound is checked.
const maxParam = 1 << 20

// kinds are the topology kinds Parse knows. A new kind is added here, to
// Parse, and to the specs of the route property tests (a test checks that
// every kind has some).
var kinds = []string{"torus", "mesh", "hypercube", "crossbar", "clos", "dragonfly"}

// Kinds returns the topology kinds Parse knows.
func Kinds() []string { return slices.Clone(kinds) }

// Parse builds a topology from its spec (see the package documentation).
// Errors wrap ErrInvalidSpec and say what is wrong.
func Parse(spec string) (Topology, error) {
	s := strings.TrimSpace(spec)
	kind, body, ok := strings.Cut(s, ":")
	if !ok {
		return nil, specErr(spec, "want kind:parameters, e.g. torus:8x8x8 (kinds: "+strings.Join(kinds, ", ")+")")
	}
	body = strings.TrimSpace(body)
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "torus", "mesh":
		dims, err := parseDims(spec, body)
		if err != nil {
			return nil, err
		}
		return newGrid(spec, dims, strings.EqualFold(strings.TrimSpace(kind), "torus"))
	case "hypercube":
		k, err := parseInt(spec, "dimension", body)
		if err != nil {
			return nil, err
		}
		return newHypercube(spec, k)
	case "crossbar":
		n, err := parseInt(spec, "node count", body)
		if err != nil {
			return nil, err
		}
		return newCrossbar(spec, n)
	case "clos":
		c, err := parseClos(spec, body)
		if err != nil {
			return nil, err
		}
		return newClos(spec, c)
	case "dragonfly":
		c, err := parseDragonfly(spec, body)
		if err != nil {
			return nil, err
		}
		return newDragonfly(spec, c)
	default:
		return nil, specErr(spec, fmt.Sprintf("unknown kind %q (kinds: %s)", kind, strings.Join(kinds, ", ")))
	}
}

// specErr returns an error wrapping ErrInvalidSpec about spec.
func specErr(spec, msg string) error {
	if spec == "" {
		return fmt.Errorf("%w: %s", ErrInvalidSpec, msg)
	}
	return fmt.Errorf("%w %q: %s", ErrInvalidSpec, spec, msg)
}

// parseInt parses a non-negative decimal integer parameter.
func parseInt(spec, what, s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, specErr(spec, what+" is missing")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, specErr(spec, fmt.Sprintf("%s %q is not a non-negative integer", what, s))
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxLinks {
		return 0, specErr(spec, fmt.Sprintf("%s %q is too large", what, s))
	}
	return n, nil
}

// parseDims parses "8x8x8".
func parseDims(spec, body string) ([]int, error) {
	parts := strings.Split(strings.ToLower(body), "x")
	if len(parts) > maxDims {
		return nil, specErr(spec, fmt.Sprintf("%d dimensions, want at most %d", len(parts), maxDims))
	}
	dims := make([]int, len(parts))
	for i, p := range parts {
		n, err := parseInt(spec, fmt.Sprintf("size of dimension %d", i+1), p)
		if err != nil {
			return nil, err
		}
		dims[i] = n
	}
	return dims, nil
}

// parseParams parses "k=v,k=v" with keys matched case-insensitively
// against the allowed ones; it returns the values by lower-case key.
func parseParams(spec, body string, allowed ...string) (map[string]string, error) {
	out := make(map[string]string, len(allowed))
	if body == "" {
		return out, nil
	}
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, specErr(spec, fmt.Sprintf("parameter %q is not key=value", strings.TrimSpace(kv)))
		}
		known := false
		for _, a := range allowed {
			if strings.ToLower(a) == k {
				known = true
			}
		}
		if !known {
			return nil, specErr(spec, fmt.Sprintf("unknown parameter %q (want %s)", k, strings.Join(allowed, ", ")))
		}
		if _, dup := out[k]; dup {
			return nil, specErr(spec, fmt.Sprintf("parameter %q given twice", k))
		}
		out[k] = v
	}
	return out, nil
}

// checkNodes panics unless src and dst are nodes of a topology with n nodes.
func checkNodes(src, dst, n int) {
	if uint(src) >= uint(n) || uint(dst) >= uint(n) {
		routePanic(src, dst, n)
	}
}

// routePanic panics about a route out of range; kept out of line so that
// checkNodes and inject inline into the routes.
//
//go:noinline
func routePanic(src, dst, n int) {
	panic(fmt.Sprintf("topology: route %d→%d out of range [0, %d)", src, dst, n))
}

// inject starts the route src→dst of an indirect network of n nodes, in
// which node i injects on link 2i and ejects on link 2i+1: it checks the
// nodes and returns buf emptied, with the injection hop unless src == dst
// (the empty route: ok is false).
func inject(src, dst, n int, buf []Hop) (route []Hop, ok bool) {
	checkNodes(src, dst, n)
	if src == dst {
		return buf[:0], false
	}
	return append(buf[:0], Hop{Link(2 * src), 1}), true
}

// linkPanic panics about a link out of range.
func linkPanic(l Link, n int) {
	panic(fmt.Sprintf("topology: link %d out of range [0, %d)", l, n))
}

func node(i int) Vertex { return Vertex{KindNode, i} }
func sw(i int) Vertex   { return Vertex{KindSwitch, i} }
