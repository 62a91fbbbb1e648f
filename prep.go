package scoll

import (
	"context"
	"unsafe"

	"github.com/scoll/scoll/schedule"
)

func sizeOf[T any](z T) uintptr { return unsafe.Sizeof(z) }

func checkRoot(coll schedule.Collective, c *Comm, root int) error {
	if c != nil && (root < 0 || root >= c.size) {
		return argErr(coll, "root %d out of range [0,%d)", root, c.size)
	}
	return nil
}

// pre runs the checks every call starts with.
func pre(ctx context.Context, c *Comm, coll schedule.Collective, root int) error {
	if err := c.usable(ctx); err != nil {
		return err
	}
	if coll.Rooted() {
		return checkRoot(coll, c, root)
	}
	return nil
}

func prepBcast[T Number](cl *call, ctx context.Context, c *Comm, buf []T, root int, opts []CallOption) error {
	coll := schedule.Bcast
	if err := pre(ctx, c, coll, root); err != nil {
		return err
	}
	return prepare[T](cl, ctx, c, schedule.Spec{Coll: coll, Root: root, Count: len(buf)}, nil, buf, Op{}, opts)
}

// prepReduction handles Allreduce, Scan and Exscan: equal-length buffers or
// send == nil for in place.
func prepReduction[T Number](cl *call, ctx context.Context, c *Comm, coll schedule.Collective, send, recv []T, op Op, opts []CallOption) error {
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Count: len(recv), InPlace: send == nil}
	if send != nil && len(send) != len(recv) {
		return argErr(coll, "len(send)=%d != len(recv)=%d", len(send), len(recv))
	}
	return prepare(cl, ctx, c, spec, send, recv, op, opts)
}

func prepAllreduce[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepReduction(cl, ctx, c, schedule.Allreduce, send, recv, op, opts)
}

func prepScan[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepReduction(cl, ctx, c, schedule.Scan, send, recv, op, opts)
}

func prepExscan[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepReduction(cl, ctx, c, schedule.Exscan, send, recv, op, opts)
}

func prepReduce[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, root int, opts []CallOption) error {
	coll := schedule.Reduce
	if err := pre(ctx, c, coll, root); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Root: root, Count: len(send)}
	if c.rank == root {
		if send == nil {
			spec.InPlace, spec.Count = true, len(recv)
		} else if len(recv) != len(send) {
			return argErr(coll, "len(send)=%d != len(recv)=%d at root", len(send), len(recv))
		}
	} else {
		recv = nil
	}
	return prepare(cl, ctx, c, spec, send, recv, op, opts)
}

func prepGather[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Gather
	if err := pre(ctx, c, coll, root); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Root: root, Count: len(send)}
	if c.rank == root {
		if send == nil {
			if len(recv)%c.size != 0 {
				return argErr(coll, "in place: len(recv)=%d is not a multiple of %d ranks", len(recv), c.size)
			}
			spec.InPlace, spec.Count = true, len(recv)/c.size
		} else if len(recv) != c.size*len(send) {
			return argErr(coll, "len(recv)=%d, want %d ranks × len(send)=%d", len(recv), c.size, len(send))
		}
	} else {
		recv = nil
	}
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepScatter[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Scatter
	if err := pre(ctx, c, coll, root); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Root: root, Count: len(recv)}
	if c.rank == root {
		if recv == nil {
			if len(send)%c.size != 0 {
				return argErr(coll, "in place: len(send)=%d is not a multiple of %d ranks", len(send), c.size)
			}
			spec.InPlace, spec.Count = true, len(send)/c.size
		} else if len(send) != c.size*len(recv) {
			return argErr(coll, "len(send)=%d, want %d ranks × len(recv)=%d", len(send), c.size, len(recv))
		}
	} else {
		send = nil
	}
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepAllgather[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, opts []CallOption) error {
	coll := schedule.Allgather
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Count: len(send), InPlace: send == nil}
	if send == nil {
		if len(recv)%c.size != 0 {
			return argErr(coll, "in place: len(recv)=%d is not a multiple of %d ranks", len(recv), c.size)
		}
		spec.Count = len(recv) / c.size
	} else if len(recv) != c.size*len(send) {
		return argErr(coll, "len(recv)=%d, want %d ranks × len(send)=%d", len(recv), c.size, len(send))
	}
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepAlltoall[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, opts []CallOption) error {
	coll := schedule.Alltoall
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	if len(recv)%c.size != 0 {
		return argErr(coll, "len(recv)=%d is not a multiple of %d ranks", len(recv), c.size)
	}
	if send != nil && len(send) != len(recv) {
		return argErr(coll, "len(send)=%d != len(recv)=%d", len(send), len(recv))
	}
	spec := schedule.Spec{Coll: coll, Count: len(recv) / c.size, InPlace: send == nil}
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepReduceScatterBlock[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	coll := schedule.ReduceScatterBlock
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Count: len(recv), InPlace: send == nil}
	if send == nil {
		if len(recv)%c.size != 0 {
			return argErr(coll, "in place: len(recv)=%d is not a multiple of %d ranks", len(recv), c.size)
		}
		spec.Count = len(recv) / c.size
	} else if len(send) != c.size*len(recv) {
		return argErr(coll, "len(send)=%d, want %d ranks × len(recv)=%d", len(send), c.size, len(recv))
	}
	return prepare(cl, ctx, c, spec, send, recv, op, opts)
}

// checkV validates per-rank counts and displacements.
func checkV(coll schedule.Collective, c *Comm, counts, displs []int) error {
	if len(counts) != c.size {
		return argErr(coll, "%d counts for %d ranks", len(counts), c.size)
	}
	for i, n := range counts {
		if n < 0 {
			return argErr(coll, "negative count %d for rank %d", n, i)
		}
	}
	if displs != nil {
		if len(displs) != c.size {
			return argErr(coll, "%d displacements for %d ranks", len(displs), c.size)
		}
		s := schedule.Spec{Coll: schedule.Allgatherv, Size: c.size, Counts: counts, Displs: displs}
		if err := s.Check(); err != nil {
			return argErr(coll, "%v", err)
		}
	}
	return nil
}

func prepGatherv[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, root int, opts []CallOption) error {
	return prepV(cl, ctx, c, schedule.Gatherv, send, recv, counts, displs, root, opts)
}

func prepAllgatherv[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, opts []CallOption) error {
	return prepV(cl, ctx, c, schedule.Allgatherv, send, recv, counts, displs, 0, opts)
}

func prepScatterv[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, root int, opts []CallOption) error {
	return prepV(cl, ctx, c, schedule.Scatterv, send, recv, counts, displs, root, opts)
}

// prepV handles Gatherv, Allgatherv and Scatterv.
func prepV[T Number](cl *call, ctx context.Context, c *Comm, coll schedule.Collective, send, recv []T, counts, displs []int, root int, opts []CallOption) error {
	if err := pre(ctx, c, coll, root); err != nil {
		return err
	}
	if err := checkV(coll, c, counts, displs); err != nil {
		return err
	}
	spec := schedule.Spec{Coll: coll, Root: root, Size: c.size, Counts: counts, Displs: displs}
	ext := schedule.Extent(counts, spec.VDispls())
	mine := counts[c.rank]
	isRoot := c.rank == root || coll == schedule.Allgatherv
	switch coll {
	case schedule.Scatterv:
		if c.rank == root {
			spec.InPlace = recv == nil
			if len(send) < ext {
				return argErr(coll, "len(send)=%d, blocks need %d", len(send), ext)
			}
		} else {
			send = nil
		}
		if !spec.InPlace && len(recv) != mine {
			return argErr(coll, "len(recv)=%d, counts[%d]=%d", len(recv), c.rank, mine)
		}
	default:
		if isRoot {
			spec.InPlace = send == nil
			if len(recv) < ext {
				return argErr(coll, "len(recv)=%d, blocks need %d", len(recv), ext)
			}
		} else {
			recv = nil
		}
		if !spec.InPlace && len(send) != mine {
			return argErr(coll, "len(send)=%d, counts[%d]=%d", len(send), c.rank, mine)
		}
	}
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepAlltoallv[T Number](cl *call, ctx context.Context, c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int, opts []CallOption) error {
	coll := schedule.Alltoallv
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	if send == nil && len(sendCounts) > 0 {
		return argErrU(coll, "in-place alltoallv is not supported")
	}
	if err := checkV(coll, c, sendCounts, sendDispls); err != nil {
		return err
	}
	if err := checkV(coll, c, recvCounts, recvDispls); err != nil {
		return err
	}
	if sendDispls == nil {
		sendDispls = schedule.Packed(sendCounts)
	}
	if recvDispls == nil {
		recvDispls = schedule.Packed(recvCounts)
	}
	if e := schedule.Extent(sendCounts, sendDispls); len(send) < e {
		return argErr(coll, "len(send)=%d, blocks need %d", len(send), e)
	}
	if e := schedule.Extent(recvCounts, recvDispls); len(recv) < e {
		return argErr(coll, "len(recv)=%d, blocks need %d", len(recv), e)
	}
	// Only this rank's row and column of the count matrix are known here;
	// the others stay zero.
	p, r := c.size, c.rank
	zero := make([]int, p)
	spec := schedule.Spec{Coll: coll, Size: p, Matrix: make([][]int, p), SDispls: make([][]int, p), RDispls: make([][]int, p)}
	for q := range p {
		spec.Matrix[q], spec.SDispls[q], spec.RDispls[q] = zero, zero, zero
	}
	row := make([]int, p)
	copy(row, sendCounts)
	spec.Matrix[r] = row
	for q := range p {
		if q != r && recvCounts[q] != 0 {
			col := make([]int, p)
			col[r] = recvCounts[q]
			spec.Matrix[q] = col
		}
	}
	spec.Matrix[r][r] = recvCounts[r]
	if sendCounts[r] != recvCounts[r] {
		return argErr(coll, "rank %d sends %d elements to itself but receives %d", r, sendCounts[r], recvCounts[r])
	}
	spec.SDispls[r], spec.RDispls[r] = sendDispls, recvDispls
	return prepare[T](cl, ctx, c, spec, send, recv, Op{}, opts)
}

func prepReduceScatter[T Number](cl *call, ctx context.Context, c *Comm, send, recv []T, counts []int, op Op, opts []CallOption) error {
	coll := schedule.ReduceScatter
	if err := pre(ctx, c, coll, 0); err != nil {
		return err
	}
	if err := checkV(coll, c, counts, nil); err != nil {
		return err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	spec := schedule.Spec{Coll: coll, Size: c.size, Counts: counts, InPlace: send == nil}
	if send == nil {
		if len(recv) != total {
			return argErr(coll, "in place: len(recv)=%d, want sum(counts)=%d", len(recv), total)
		}
	} else {
		if len(send) != total {
			return argErr(coll, "len(send)=%d, want sum(counts)=%d", len(send), total)
		}
		if len(recv) != counts[c.rank] {
			return argErr(coll, "len(recv)=%d, counts[%d]=%d", len(recv), c.rank, counts[c.rank])
		}
	}
	return prepare(cl, ctx, c, spec, send, recv, op, opts)
}

func prepBarrier(cl *call, ctx context.Context, c *Comm, opts []CallOption) error {
	if err := pre(ctx, c, schedule.Barrier, 0); err != nil {
		return err
	}
	return prepare[byte](cl, ctx, c, schedule.Spec{Coll: schedule.Barrier}, nil, nil, Op{}, opts)
}
