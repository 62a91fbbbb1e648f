package plan

import (
	"fmt"
	"strings"

	"github.com/scoll/scoll/schedule"
)

// Buf is a buffer as the argument checks see it.
type Buf struct {
	// Len is its length in elements.
	Len int
	// Nil tells that it is nil, which means in place where the collective
	// allows it (an empty non-nil buffer is not in place).
	Nil bool
}

// Args are one rank's arguments of a collective call, buffers as lengths.
type Args struct {
	// Coll is the collective called.
	Coll schedule.Collective
	// Rank and Size are the caller's rank and the communicator's size.
	Rank, Size int
	// Root is the root of a rooted collective (ignored by the others).
	Root int
	// Send and Recv are the send and receive buffers.
	Send, Recv Buf
	// Counts and Displs are the per-rank counts and displacements (nil:
	// packed) of Gatherv, Scatterv and Allgatherv, the send side of
	// Alltoallv, and the counts of ReduceScatter.
	Counts, Displs []int
	// RecvCounts and RecvDispls are the receive side of Alltoallv.
	RecvCounts, RecvDispls []int
}

// Use tells which of its buffers a rank passes on to the call: a rank
// other than the root of a rooted collective ignores the buffer only the
// root reads or writes.
type Use struct {
	// Send and Recv are set when the rank uses its send and its receive
	// buffer.
	Send, Recv bool
}

// Check checks a's arguments, sets spec to the call's spec (Size set) and
// returns the buffers the rank uses. Lengths, counts and roots that do not fit
// fail with errs.InvalidArgument; an in-place Alltoallv fails with
// errs.Unsupported. The checks are local: ranks that disagree are found
// when the call runs (their signatures differ).
//
// Bcast's buffer is Recv. Alltoallv's matrix holds only this rank's row
// and column; the other entries are zero.
func (a *Args) Check(spec *schedule.Spec) (Use, error) {
	coll, send, recv, p := a.Coll, a.Send, a.Recv, a.Size
	use := Use{true, true}
	isRoot := a.Rank == a.Root
	if coll.Rooted() && (a.Root < 0 || a.Root >= p) {
		return use, Invalid("root %d out of range [0,%d)", a.Root, p)
	}
	*spec = schedule.Spec{Coll: coll, Size: p, Root: a.Root}
	var err error
	switch coll {
	case schedule.Bcast:
		spec.Count = recv.Len
	case schedule.Allreduce, schedule.Scan, schedule.Exscan:
		spec.Count, spec.InPlace = recv.Len, send.Nil
		if !send.Nil && send.Len != recv.Len {
			err = Invalid("len(send)=%d != len(recv)=%d", send.Len, recv.Len)
		}
	case schedule.Reduce:
		spec.Count = send.Len
		switch {
		case !isRoot:
			use.Recv = false
		case send.Nil:
			spec.InPlace, spec.Count = true, recv.Len
		case recv.Len != send.Len:
			err = Invalid("len(send)=%d != len(recv)=%d at root", send.Len, recv.Len)
		}
	// Gather and Scatter mirror each other. A shared helper for the two
	// (e800ef7) was reverted: it slowed the meeting path, which never runs
	// it, by 35 % through the build's code layout (581435c).
	case schedule.Gather:
		spec.Count = send.Len
		if !isRoot {
			use.Recv = false
		} else {
			err = blocks(spec, send, recv, p, "recv", "send")
		}
	case schedule.Scatter:
		spec.Count = recv.Len
		if !isRoot {
			use.Send = false
		} else {
			err = blocks(spec, recv, send, p, "send", "recv")
		}
	case schedule.Allgather:
		spec.Count = send.Len
		err = blocks(spec, send, recv, p, "recv", "send")
	case schedule.Alltoall:
		switch {
		case recv.Len%p != 0:
			err = Invalid("len(recv)=%d is not a multiple of %d ranks", recv.Len, p)
		case !send.Nil && send.Len != recv.Len:
			err = Invalid("len(send)=%d != len(recv)=%d", send.Len, recv.Len)
		}
		spec.Count, spec.InPlace = recv.Len/p, send.Nil
	case schedule.ReduceScatterBlock:
		spec.Count = recv.Len
		if send.Nil {
			err = blocks(spec, send, recv, p, "recv", "send")
		} else if send.Len != p*recv.Len {
			err = Invalid("len(send)=%d, want %d ranks × len(recv)=%d", send.Len, p, recv.Len)
		}
		spec.InPlace = send.Nil
	case schedule.Gatherv, schedule.Allgatherv, schedule.Scatterv:
		err = a.checkV(spec, &use)
	case schedule.Alltoallv:
		err = a.checkAlltoallv(spec)
	case schedule.ReduceScatter:
		err = a.checkReduceScatter(spec)
	}
	return use, err
}

// blocks checks the buffers of a rank that holds all p blocks (all) of a
// collective whose ranks each contribute or get one (one): the root of
// Gather and Scatter, every rank of Allgather, and of ReduceScatterBlock
// in place. A nil one is in place: len(all) must be a multiple of p and
// sets the count; else len(all) must be p·len(one).
func blocks(spec *schedule.Spec, one, all Buf, p int, allName, oneName string) error {
	if one.Nil {
		spec.InPlace, spec.Count = true, all.Len/p
		if all.Len%p != 0 {
			return Invalid("in place: len(%s)=%d is not a multiple of %d ranks", allName, all.Len, p)
		}
		return nil
	}
	if all.Len != p*one.Len {
		return Invalid("len(%s)=%d, want %d ranks × len(%s)=%d", allName, all.Len, p, oneName, one.Len)
	}
	return nil
}

// counts checks per-rank counts and, when not nil, displacements.
func (a *Args) counts(counts, displs []int) error {
	p := a.Size
	if len(counts) != p {
		return Invalid("%d counts for %d ranks", len(counts), p)
	}
	for i, n := range counts {
		if n < 0 {
			return Invalid("negative count %d for rank %d", n, i)
		}
	}
	if displs != nil {
		if len(displs) != p {
			return Invalid("%d displacements for %d ranks", len(displs), p)
		}
		s := schedule.Spec{Coll: schedule.Allgatherv, Size: p, Counts: counts, Displs: displs}
		if err := s.Check(); err != nil {
			// The spec's error names its package and collective: keep
			// what it says of the displacements only.
			return Invalid("%s", strings.TrimPrefix(err.Error(), fmt.Sprintf("%v: %v: ", schedule.ErrSpec, s.Coll)))
		}
	}
	return nil
}

// checkV checks Gatherv, Allgatherv and Scatterv.
func (a *Args) checkV(spec *schedule.Spec, use *Use) error {
	coll := a.Coll
	if err := a.counts(a.Counts, a.Displs); err != nil {
		return err
	}
	spec.Counts, spec.Displs = a.Counts, a.Displs
	ext := schedule.Extent(a.Counts, spec.VDispls())
	mine := a.Counts[a.Rank]
	isRoot := a.Rank == a.Root || coll == schedule.Allgatherv
	// Scatterv reads all blocks from the root's send; the others write
	// them to recv.
	all, one, allName, oneName, useAll := a.Recv, a.Send, "recv", "send", &use.Recv
	if coll == schedule.Scatterv {
		all, one, allName, oneName, useAll = a.Send, a.Recv, "send", "recv", &use.Send
	}
	if isRoot {
		spec.InPlace = one.Nil
		if all.Len < ext {
			return Invalid("len(%s)=%d, blocks need %d", allName, all.Len, ext)
		}
	} else {
		*useAll = false
	}
	if !spec.InPlace && one.Len != mine {
		return Invalid("len(%s)=%d, counts[%d]=%d", oneName, one.Len, a.Rank, mine)
	}
	return nil
}

// checkAlltoallv checks Alltoallv and fills in the rank's row and column
// of the count matrix.
func (a *Args) checkAlltoallv(spec *schedule.Spec) error {
	sendCounts, sendDispls, recvCounts, recvDispls := a.Counts, a.Displs, a.RecvCounts, a.RecvDispls
	if a.Send.Nil && len(sendCounts) > 0 {
		return unsupported("in-place alltoallv is not supported")
	}
	if err := a.counts(sendCounts, sendDispls); err != nil {
		return err
	}
	if err := a.counts(recvCounts, recvDispls); err != nil {
		return err
	}
	if sendDispls == nil {
		sendDispls = schedule.Packed(sendCounts)
	}
	if recvDispls == nil {
		recvDispls = schedule.Packed(recvCounts)
	}
	if e := schedule.Extent(sendCounts, sendDispls); a.Send.Len < e {
		return Invalid("len(send)=%d, blocks need %d", a.Send.Len, e)
	}
	if e := schedule.Extent(recvCounts, recvDispls); a.Recv.Len < e {
		return Invalid("len(recv)=%d, blocks need %d", a.Recv.Len, e)
	}
	// Only this rank's row and column of the count matrix are known here;
	// the others stay zero.
	p, r := a.Size, a.Rank
	zero := make([]int, p)
	spec.Matrix, spec.SDispls, spec.RDispls = make([][]int, p), make([][]int, p), make([][]int, p)
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
		return Invalid("rank %d sends %d elements to itself but receives %d", r, sendCounts[r], recvCounts[r])
	}
	spec.SDispls[r], spec.RDispls[r] = sendDispls, recvDispls
	return nil
}

// checkReduceScatter checks ReduceScatter.
func (a *Args) checkReduceScatter(spec *schedule.Spec) error {
	counts := a.Counts
	if err := a.counts(counts, nil); err != nil {
		return err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	spec.Counts, spec.InPlace = counts, a.Send.Nil
	switch {
	case a.Send.Nil:
		if a.Recv.Len != total {
			return Invalid("in place: len(recv)=%d, want sum(counts)=%d", a.Recv.Len, total)
		}
	case a.Send.Len != total:
		return Invalid("len(send)=%d, want sum(counts)=%d", a.Send.Len, total)
	case a.Recv.Len != counts[a.Rank]:
		return Invalid("len(recv)=%d, counts[%d]=%d", a.Recv.Len, a.Rank, counts[a.Rank])
	}
	return nil
}
