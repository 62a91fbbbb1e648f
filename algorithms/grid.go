package algorithms

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/scoll/scoll/internal/errs"
)

// The process grid of the topology-aware algorithms (rd-optimal, rh-optimal
// and the bucket family): ranks numbered in XYZ order, dimension 0 varying
// fastest, so rank r has coordinate (r / stride[j]) mod dims[j] in dimension
// j with stride[0] = 1.

// DefaultGrid returns the grid the topology-aware algorithms use when a call
// names none: size factored into d dimensions as equal as possible (the
// largest prime factors placed first on the currently smallest dimension, as
// MPI_Dims_create does), smallest dimension first. A prime size gives
// 1×…×1×size; d < 1 is taken as 1.
func DefaultGrid(size, d int) []int {
	d = max(d, 1)
	dims := make([]int, d)
	for i := range dims {
		dims[i] = 1
	}
	if size <= 1 {
		return dims
	}
	var primes []int
	for n, f := size, 2; n > 1; {
		if f*f > n {
			primes = append(primes, n)
			break
		}
		if n%f == 0 {
			primes = append(primes, f)
			n /= f
			continue
		}
		f++
	}
	slices.Reverse(primes) // largest first
	for _, f := range primes {
		i := 0
		for j := range dims {
			if dims[j] < dims[i] {
				i = j
			}
		}
		dims[i] *= f
	}
	slices.Sort(dims)
	return dims
}

// CheckGrid reports (wrapping errs.InvalidArgument) whether dims is a grid of
// size ranks: at least one dimension, every one positive, product size.
func CheckGrid(dims []int, size int) error {
	if len(dims) == 0 {
		return fmt.Errorf("%w: empty process grid", errs.InvalidArgument)
	}
	prod := 1
	for _, k := range dims {
		if k < 1 {
			return fmt.Errorf("%w: process grid %v has a dimension below 1", errs.InvalidArgument, dims)
		}
		if prod > size {
			break
		}
		prod *= k
	}
	if prod != size {
		return fmt.Errorf("%w: process grid %v does not hold %d ranks", errs.InvalidArgument, dims, size)
	}
	return nil
}

// grid returns the call's process grid: p.Grid, or DefaultGrid(p.Size, 3).
// Info.Check has rejected a Grid that does not fit.
func (p *Params) grid() []int {
	if p.Grid != nil {
		return p.Grid
	}
	return DefaultGrid(p.Size, 3)
}

// gridOrder numbers the ranks of a grid in a rotated dimension order: order
// lists the dimensions fastest first (order[0] = 1 for YZX), so index(r) is
// the rank's position when the ranks are numbered in that order.
type gridOrder struct {
	dims   []int // grid
	stride []int // XYZ stride of each grid dimension
	order  []int // dimensions, fastest first
	ostr   []int // stride of order[t] in the rotated numbering
}

func newGridOrder(dims []int, first int) *gridOrder {
	d := len(dims)
	g := &gridOrder{dims: dims, stride: make([]int, d), order: make([]int, d), ostr: make([]int, d+1)}
	s := 1
	for j, k := range dims {
		g.stride[j] = s
		s *= k
	}
	s = 1
	for t := range d {
		j := (first + t) % d
		g.order[t] = j
		g.ostr[t] = s
		s *= dims[j]
	}
	g.ostr[d] = s
	return g
}

// index returns rank r's position in the rotated numbering.
func (g *gridOrder) index(r int) int {
	q := 0
	for t, j := range g.order {
		q += (r / g.stride[j]) % g.dims[j] * g.ostr[t]
	}
	return q
}

// rank returns the rank at position q of the rotated numbering.
func (g *gridOrder) rank(q int) int {
	r := 0
	for t, j := range g.order {
		r += (q / g.ostr[t]) % g.dims[j] * g.stride[j]
	}
	return r
}

// torusStages returns the stage schedule S of Sack's torus-reordered
// recursive doubling (sec. 3.4.1) for a grid of power-of-two dimensions: S[s]
// is the rank bit flipped in stage s. Each stage takes the highest remaining
// bit of the dimension with the most bits left (ties: the higher dimension),
// so hop distances never grow and the largest dimensions go first; for 8×8×8
// it is {8,5,2,7,4,1,6,3,0}. ok is false when a dimension is not a power of
// two.
func torusStages(dims []int) (S []int, ok bool) {
	left := make([]int, len(dims))
	off := make([]int, len(dims))
	total := 0
	for j, k := range dims {
		if !isPow2(k) {
			return nil, false
		}
		off[j] = total
		left[j] = bits.Len(uint(k)) - 1
		total += left[j]
	}
	for range total {
		best := -1
		for j := range dims {
			if left[j] > 0 && (best < 0 || left[j] >= left[best]) {
				best = j
			}
		}
		left[best]--
		S = append(S, off[best]+left[best])
	}
	return S, true
}
