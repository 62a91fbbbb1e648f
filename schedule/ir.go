// Package schedule is scoll's intermediate representation of a collective
// algorithm: per-rank sequences of rounds, each a set of point-to-point and
// local operations on symbolic buffer regions.
//
// An algorithm does no I/O. It emits, for one rank, the operations of each
// round into a [Builder]. The same schedule is then executed over a transport
// (package exec), verified symbolically ([Verify]), simulated on a network
// model and costed.
//
// Semantics of one round on one rank:
//
//  1. every Send and Recv of the round is posted at once;
//  2. when all of them have completed, the round's Reduce and Copy operations
//     run in the order they were added;
//  3. then the rank moves to its next round.
//
// Rounds are local: a rank does not wait for other ranks to finish a round.
// Messages between a pair of ranks match in the order they were posted. A send
// may complete only when the receiver has posted the matching receive
// (rendezvous); a schedule that passes [Verify] is therefore deadlock-free on
// eager and rendezvous transports alike. Within a round a send's region must not
// overlap a receive's region, and two receives must not overlap, so the data a
// send carries is the content of its region at the start of the round.
package schedule

import (
	"fmt"
	"strings"
)

// Space names one of the three buffers a schedule addresses.
type Space uint8

const (
	// SendSpace is the caller's send buffer. It is read-only.
	SendSpace Space = iota
	// RecvSpace is the caller's receive buffer (the only buffer of Bcast).
	RecvSpace
	// ScratchSpace is temporary memory owned by the executor; its length is
	// Schedule.Scratch elements.
	ScratchSpace
	numSpaces
)

// String returns the space's name as rendered in schedules.
func (s Space) String() string { return enumName(spaceNames[:], s, "space") }

var spaceNames = [numSpaces]string{SendSpace: "send", RecvSpace: "recv", ScratchSpace: "tmp"}

// enumName returns names[v], or what(v) for a value without a name.
func enumName[T ~uint8](names []string, v T, what string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, uint8(v))
}

// Region is a contiguous run of elements in one buffer space. Offsets and
// lengths count elements, never bytes.
type Region struct {
	Space Space
	Off   int
	Len   int
}

// SendBuf returns the region [off, off+n) of the send buffer.
func SendBuf(off, n int) Region { return Region{SendSpace, off, n} }

// RecvBuf returns the region [off, off+n) of the receive buffer.
func RecvBuf(off, n int) Region { return Region{RecvSpace, off, n} }

// ScratchBuf returns the region [off, off+n) of the scratch buffer.
func ScratchBuf(off, n int) Region { return Region{ScratchSpace, off, n} }

// End returns the offset one past the region's last element.
func (r Region) End() int { return r.Off + r.Len }

// Sub returns the sub-region [off, off+n) relative to r's start.
func (r Region) Sub(off, n int) Region { return Region{r.Space, r.Off + off, n} }

// Overlaps reports whether r and o share an element.
func (r Region) Overlaps(o Region) bool {
	return r.Space == o.Space && r.Len > 0 && o.Len > 0 && r.Off < o.End() && o.Off < r.End()
}

// String renders the region as space[off:end].
func (r Region) String() string { return fmt.Sprintf("%s[%d:%d]", r.Space, r.Off, r.End()) }

// Kind is the kind of an operation.
type Kind uint8

const (
	// OpSend sends region Src to Peer.
	OpSend Kind = iota
	// OpRecv receives from Peer into region Dst.
	OpRecv
	// OpReduce combines Src into Dst element-wise: Dst = Dst ⊕ Src, or
	// Dst = Src ⊕ Dst when SrcLeft is set. The left operand holds
	// contributions of lower ranks for non-commutative operations.
	OpReduce
	// OpCopy copies region Src to region Dst (memmove semantics).
	OpCopy
	// OpRecvReduce receives a message M from Peer and combines it with the
	// local region Src into Dst: Dst = Src ⊕ M when SrcLeft, else
	// Dst = M ⊕ Src. Src may equal Dst. It is a receive: posted with the
	// round's communication, complete when the combined data is in Dst. It
	// saves the scratch copy of a receive followed by a reduction.
	OpRecvReduce
)

// String returns the kind's name.
func (k Kind) String() string { return enumName(kindNames[:], k, "kind") }

var kindNames = [...]string{
	OpSend: "send", OpRecv: "recv", OpReduce: "reduce", OpCopy: "copy", OpRecvReduce: "recvreduce",
}

// IsComm reports whether the kind is a point-to-point operation.
func (k Kind) IsComm() bool { return k == OpSend || k == OpRecv || k == OpRecvReduce }

// IsRecv reports whether the kind receives a message.
func (k Kind) IsRecv() bool { return k == OpRecv || k == OpRecvReduce }

// Op is one operation of a round.
type Op struct {
	Kind    Kind
	Peer    int    // OpSend, OpRecv, OpRecvReduce: the other rank
	Dst     Region // OpRecv, OpReduce, OpCopy, OpRecvReduce
	Src     Region // OpSend, OpReduce, OpCopy; OpRecvReduce: the local operand
	SrcLeft bool   // OpReduce, OpRecvReduce: Src is the left operand
}

// Len returns the number of elements the operation moves or combines.
func (o Op) Len() int {
	if o.Kind.IsRecv() {
		return o.Dst.Len
	}
	return o.Src.Len
}

// String renders the operation as in schedule text.
func (o Op) String() string {
	switch o.Kind {
	case OpSend:
		return fmt.Sprintf("send %s -> %d", o.Src, o.Peer)
	case OpRecv:
		return fmt.Sprintf("recv %s <- %d", o.Dst, o.Peer)
	case OpReduce:
		if o.SrcLeft {
			return fmt.Sprintf("reduce %s = %s (+) %s", o.Dst, o.Src, o.Dst)
		}
		return fmt.Sprintf("reduce %s (+)= %s", o.Dst, o.Src)
	case OpCopy:
		return fmt.Sprintf("copy %s = %s", o.Dst, o.Src)
	case OpRecvReduce:
		// Shaped like the OpReduce case (the operand order by SrcLeft),
		// kept apart because each prints its own text format.
		if o.SrcLeft {
			return fmt.Sprintf("recvreduce %s = %s (+) msg <- %d", o.Dst, o.Src, o.Peer)
		}
		return fmt.Sprintf("recvreduce %s = msg (+) %s <- %d", o.Dst, o.Src, o.Peer)
	}
	return o.Kind.String()
}

// Round is the operations of one round of one rank.
type Round []Op

// Schedule is the whole schedule of one rank.
//
// Invariant: within each round every communication operation (OpSend,
// OpRecv, OpRecvReduce) precedes every OpReduce and OpCopy (the Builder
// enforces it).
type Schedule struct {
	Rank, Size int
	// Scratch is the number of scratch elements the schedule addresses.
	Scratch int
	Rounds  []Round
}

// Messages returns the number of sends in the schedule.
func (s *Schedule) Messages() int {
	n := 0
	for _, r := range s.Rounds {
		for _, o := range r {
			if o.Kind == OpSend {
				n++
			}
		}
	}
	return n
}

// String renders the schedule as text, one round a line.
func (s *Schedule) String() string {
	var sb strings.Builder
	WriteText(&sb, s)
	return sb.String()
}
