package schedule

import (
	"errors"
	"fmt"
	"slices"
)

// Collective identifies a collective operation.
type Collective uint8

// The collectives. Their names (String) are the ones the registry and the
// command line use.
const (
	Bcast Collective = iota
	Reduce
	Allreduce
	Gather
	Gatherv
	Scatter
	Scatterv
	Allgather
	Allgatherv
	Alltoall
	Alltoallv
	ReduceScatterBlock
	ReduceScatter
	Scan
	Exscan
	Barrier
	NumCollectives
)

var collNames = [...]string{
	Bcast: "bcast", Reduce: "reduce", Allreduce: "allreduce", Gather: "gather",
	Gatherv: "gatherv", Scatter: "scatter", Scatterv: "scatterv",
	Allgather: "allgather", Allgatherv: "allgatherv", Alltoall: "alltoall",
	Alltoallv: "alltoallv", ReduceScatterBlock: "reducescatter",
	ReduceScatter: "reducescatterv", Scan: "scan", Exscan: "exscan", Barrier: "barrier",
}

// String returns the collective's registry name.
func (c Collective) String() string {
	if int(c) < len(collNames) {
		return collNames[c]
	}
	return fmt.Sprintf("collective(%d)", uint8(c))
}

// ParseCollective returns the collective with the given name. Besides the
// canonical names it accepts "reducescatterblock" and "reduce_scatter" forms.
func ParseCollective(name string) (Collective, bool) {
	for c, n := range collNames {
		if n == name {
			return Collective(c), true
		}
	}
	switch name {
	case "reducescatterblock", "reduce-scatter-block", "reduce_scatter_block", "reduce-scatter", "reduce_scatter":
		return ReduceScatterBlock, true
	}
	return 0, false
}

// Rooted reports whether the collective has a root.
func (c Collective) Rooted() bool {
	switch c {
	case Bcast, Reduce, Gather, Gatherv, Scatter, Scatterv:
		return true
	}
	return false
}

// Reduces reports whether the collective combines contributions with an
// operator.
func (c Collective) Reduces() bool {
	switch c {
	case Reduce, Allreduce, ReduceScatterBlock, ReduceScatter, Scan, Exscan:
		return true
	}
	return false
}

// Vector reports whether the collective takes per-rank counts.
func (c Collective) Vector() bool {
	switch c {
	case Gatherv, Scatterv, Allgatherv, Alltoallv, ReduceScatter:
		return true
	}
	return false
}

// ErrSpec is wrapped by errors describing an inconsistent Spec.
var ErrSpec = errors.New("schedule: invalid collective arguments")

// Spec describes one call of a collective across all ranks: everything that
// determines the schedules and their expected result. Counts are in elements.
//
// Count means, per collective: the buffer length (Bcast, Reduce, Allreduce,
// Scan, Exscan), the block per rank (Gather, Scatter, Allgather,
// ReduceScatterBlock) or the block per pair of ranks (Alltoall).
//
// Counts and Displs describe v-variants: Counts[r] is rank r's block and
// Displs[r] its offset in the root's (or every rank's) gathered buffer; nil
// Displs means packed. For ReduceScatter, Counts[r] is rank r's result length
// and blocks are packed. For Alltoallv, Matrix[s][d] elements go from s to d,
// packed in rank order at both ends unless SDispls[s][d] and RDispls[d][s] say
// otherwise.
type Spec struct {
	Coll    Collective
	Size    int
	Root    int
	Count   int
	Counts  []int
	Displs  []int
	Matrix  [][]int
	SDispls [][]int
	RDispls [][]int
	// InPlace: the input is already in the receive buffer (MPI_IN_PLACE). For
	// rooted collectives only the root is in place.
	InPlace bool
}

// InPlaceAt reports whether rank r's input lives in its receive buffer.
func (s *Spec) InPlaceAt(r int) bool {
	if !s.InPlace {
		return false
	}
	if s.Coll.Rooted() {
		return r == s.Root
	}
	return true
}

// Check reports whether the spec is consistent.
func (s *Spec) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrSpec, s.Coll, fmt.Sprintf(format, args...))
	}
	if s.Coll >= NumCollectives {
		return bad("unknown collective")
	}
	if s.Size < 1 {
		return bad("size %d", s.Size)
	}
	if s.Coll.Rooted() && (s.Root < 0 || s.Root >= s.Size) {
		return bad("root %d out of range [0,%d)", s.Root, s.Size)
	}
	if s.Count < 0 {
		return bad("negative count %d", s.Count)
	}
	switch s.Coll {
	case Gatherv, Scatterv, Allgatherv, ReduceScatter:
		if len(s.Counts) != s.Size {
			return bad("%d counts for %d ranks", len(s.Counts), s.Size)
		}
		for r, c := range s.Counts {
			if c < 0 {
				return bad("negative count %d for rank %d", c, r)
			}
		}
		if s.Displs != nil {
			if s.Coll == ReduceScatter {
				return bad("displacements are not used")
			}
			if len(s.Displs) != s.Size {
				return bad("%d displacements for %d ranks", len(s.Displs), s.Size)
			}
			if err := checkDispls(s.Counts, s.Displs); err != nil {
				return bad("%v", err)
			}
		}
	case Alltoallv:
		if len(s.Matrix) != s.Size {
			return bad("matrix has %d rows for %d ranks", len(s.Matrix), s.Size)
		}
		for r, row := range s.Matrix {
			if len(row) != s.Size {
				return bad("matrix row %d has %d entries", r, len(row))
			}
			for _, c := range row {
				if c < 0 {
					return bad("negative count in row %d", r)
				}
			}
		}
		for name, d := range map[string][][]int{"send": s.SDispls, "receive": s.RDispls} {
			if d == nil {
				continue
			}
			if len(d) != s.Size {
				return bad("%s displacements have %d rows for %d ranks", name, len(d), s.Size)
			}
			for r, row := range d {
				if len(row) != s.Size {
					return bad("%s displacement row %d has %d entries", name, r, len(row))
				}
			}
		}
		for r := 0; r < s.Size; r++ {
			sc, sd := s.AlltoallvSend(r)
			rc, rd := s.AlltoallvRecv(r)
			if err := checkDispls(sc, sd); err != nil {
				return bad("rank %d send: %v", r, err)
			}
			if err := checkDispls(rc, rd); err != nil {
				return bad("rank %d recv: %v", r, err)
			}
		}
	}
	return nil
}

// checkDispls reports blocks that start at negative offsets or overlap.
func checkDispls(counts, displs []int) error {
	type blk struct{ off, n, r int }
	var bs []blk
	for r, c := range counts {
		if c < 0 {
			return fmt.Errorf("negative count %d for rank %d", c, r)
		}
		if displs[r] < 0 {
			return fmt.Errorf("negative displacement %d for rank %d", displs[r], r)
		}
		if c > 0 {
			bs = append(bs, blk{displs[r], c, r})
		}
	}
	slices.SortFunc(bs, func(a, b blk) int { return a.off - b.off })
	for i := 1; i < len(bs); i++ {
		if bs[i-1].off+bs[i-1].n > bs[i].off {
			return fmt.Errorf("blocks of ranks %d and %d overlap", bs[i-1].r, bs[i].r)
		}
	}
	return nil
}

// Packed returns the packed displacements of counts (exclusive prefix sums).
func Packed(counts []int) []int {
	d := make([]int, len(counts))
	off := 0
	for i, c := range counts {
		d[i] = off
		off += c
	}
	return d
}

// Extent returns the length of a buffer holding blocks counts at displs.
func Extent(counts, displs []int) int {
	n := 0
	for i, c := range counts {
		if c > 0 && displs[i]+c > n {
			n = displs[i] + c
		}
	}
	return n
}

// VDispls returns the displacements of a v-variant (packed when Displs is nil).
func (s *Spec) VDispls() []int {
	if s.Displs != nil {
		return s.Displs
	}
	return Packed(s.Counts)
}

// AlltoallvSend returns rank r's send counts and displacements.
func (s *Spec) AlltoallvSend(r int) (counts, displs []int) {
	counts = s.Matrix[r]
	if s.SDispls != nil {
		return counts, s.SDispls[r]
	}
	return counts, Packed(counts)
}

// AlltoallvRecv returns rank r's receive counts and displacements.
func (s *Spec) AlltoallvRecv(r int) (counts, displs []int) {
	counts = make([]int, s.Size)
	for q := range counts {
		counts[q] = s.Matrix[q][r]
	}
	if s.RDispls != nil {
		return counts, s.RDispls[r]
	}
	return counts, Packed(counts)
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// BufLens returns the lengths in elements of rank r's send and receive buffers.
// In place, the send buffer is absent (length 0) and the input is in the
// receive buffer.
func (s *Spec) BufLens(r int) (send, recv int) {
	p, n := s.Size, s.Count
	switch s.Coll {
	case Bcast:
		send, recv = 0, n
	case Reduce:
		send = n
		if r == s.Root {
			recv = n
		}
	case Allreduce, Scan, Exscan:
		send, recv = n, n
	// Gather and Scatter (and their v-forms) mirror each other: a block on
	// every rank, all of the blocks at the root.
	case Gather, Gatherv, Scatter, Scatterv:
		v := s.Coll == Gatherv || s.Coll == Scatterv
		block, all := n, 0
		if v {
			block = s.Counts[r]
		}
		if r == s.Root {
			all = p * n
			if v {
				all = Extent(s.Counts, s.VDispls())
			}
		}
		send, recv = block, all
		if s.Coll == Scatter || s.Coll == Scatterv {
			send, recv = all, block
		}
	case Allgather:
		send, recv = n, p*n
	case Allgatherv:
		send, recv = s.Counts[r], Extent(s.Counts, s.VDispls())
	case Alltoall:
		send, recv = p*n, p*n
	case Alltoallv:
		send = Extent(s.AlltoallvSend(r))
		recv = Extent(s.AlltoallvRecv(r))
	case ReduceScatterBlock:
		send, recv = p*n, n
	case ReduceScatter:
		send, recv = sum(s.Counts), s.Counts[r]
	}
	if s.InPlaceAt(r) {
		switch s.Coll {
		case Scatter, Scatterv:
			// The root keeps its block in the send buffer; it receives nothing.
			recv = 0
		case ReduceScatterBlock, ReduceScatter:
			// Input in the receive buffer, result at its start.
			recv = send
			send = 0
		default:
			send = 0
		}
	}
	return send, recv
}
