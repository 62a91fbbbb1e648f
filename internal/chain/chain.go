// Package chain runs Moody, Ahn and de Supinski's collectives on a group
// kept as a chain ("Exascale algorithms for generalized MPI_Comm_split",
// EuroMPI 2011, sec. 2): a rank knows its rank, the chain's size and the
// transport addresses of itself, its neighbours and rank 0 (split.Links),
// and learns the other partners it needs from the messages, so it holds
// O(1) addresses during and after a call. Package scoll's chain
// collectives (scoll.ChainAlgorithm) check the arguments and watch for
// mismatched calls; this package moves the bytes.
//
// The data are bytes combined with an exec.Kernel: contributions are
// combined in rank order (lower ranks on the left), so non-commutative
// operators are right.
package chain

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/split"
)

// Conn is the connection of one call: split.Conn's rounds of messages
// between transport addresses, and a way to give the call up.
type Conn interface {
	// Round posts sends and recvs, waits for all of them and sets each
	// receive's N; on an error it has aborted the call.
	Round(ctx context.Context, sends []split.Send, recvs []split.Recv) error
	// Abort gives the call up with err: the other ranks' parts fail.
	Abort(err error)
}

// Call is one chain collective on one rank: its place in the chain, the
// connection of the call and the operator's kernel. A Call runs one
// collective, once.
//
// Every message starts with a header of Hdr bytes holding a transport
// address (the partner the receiver learns: split.None for none); the
// data follows, 8-byte aligned.
type Call struct {
	conn  Conn
	l     split.Links
	k     exec.Kernel
	sends []split.Send
	recvs []split.Recv
}

// New returns the call of this rank, at l in its chain, over conn, with
// the operator's kernel k (only its ElemSize for the collectives that do
// not reduce).
func New(conn Conn, l split.Links, k exec.Kernel) *Call { return &Call{conn: conn, l: l, k: k} }

// Hdr is the length in bytes of a message's header.
const Hdr = 8

// aligned returns n bytes aligned for every element type (non-nil).
func aligned(n int) []byte { return kernels.Bytes(make([]uint64, n/8+1))[:n] }

// Msg returns a message of n data bytes after the header.
func Msg(n int) []byte { return aligned(Hdr + n) }

func getAddr(msg []byte) int32 { return int32(binary.LittleEndian.Uint32(msg)) }

// Tags is the first tag of the chain calls; round k's messages
// to the right have tag Tags+2k, those to the left Tags+2k+1.
// These are the tags of split's chain allgather, which a chain
// communicator learning its members runs (package scoll): a rank that
// learns while its neighbours run a chain algorithm (ranks that disagree
// on the call) exchanges a message with each of them in the first round,
// and the signatures tell the mismatch. Every chain algorithm exchanges
// one message at least with each neighbour in its first round too.
const Tags = 15 << 20

func tag(k int, leftward bool) int {
	if leftward {
		return Tags + 2*k + 1
	}
	return Tags + 2*k
}

// send adds the message of round k to transport address to, on the left
// of this rank when left, its header set to addr.
func (x *Call) send(to int32, left bool, k int, msg []byte, addr int32) {
	binary.LittleEndian.PutUint32(msg, uint32(addr))
	x.sends = append(x.sends, split.Send{To: int(to), Tag: tag(k, left), Data: msg, Direct: true})
}

// recv adds a receive of round k of exactly len(buf) bytes from transport
// address from, on the left of this rank when left.
func (x *Call) recv(from int32, left bool, k int, buf []byte) {
	x.recvs = append(x.recvs, split.Recv{From: int(from), Tag: tag(k, !left), Buf: buf, Direct: true})
}

// round runs the sends and receives added since the last round (none: no
// round) and checks every message's length.
func (x *Call) round(ctx context.Context) error {
	defer func() { x.sends, x.recvs = x.sends[:0], x.recvs[:0] }()
	if len(x.sends)+len(x.recvs) == 0 {
		return nil
	}
	if err := x.conn.Round(ctx, x.sends, x.recvs); err != nil {
		return err // Round has aborted the call
	}
	for _, r := range x.recvs {
		if r.N != len(r.Buf) {
			err := fmt.Errorf("%w: chain: %d bytes from transport address %d, expected %d", errs.Mismatch, r.N, r.From, len(r.Buf))
			x.conn.Abort(err)
			return err
		}
	}
	return nil
}

// Want selects the scans of Scan: LR and RL run the left-to-right and
// right-to-left scans, ExL and ExR also compute their exclusive results.
type Want struct{ LR, RL, ExL, ExR bool }

// Scan is Moody et al.'s Fig. 1, in both directions when asked: in round k
// (2^k < n) a rank sends to its right partner (2^k to the right) the
// address of its left partner and its left-to-right partial result (the
// combination of the 2^k values ending with its own), and to its left
// partner the address of its right partner and its right-to-left partial
// result; it combines what it receives and takes the received addresses as
// its partners 2^(k+1) away. A direction not asked for carries only the
// addresses. ⌈lg n⌉ rounds.
//
// It returns the inclusive results accL and accR and the exclusive ones
// exL (nil on rank 0) and exR (nil on the last rank), each of len(mine)
// bytes, aligned; results not asked for are nil.
func (x *Call) Scan(ctx context.Context, mine []byte, w Want) (accL, accR, exL, exR []byte, err error) {
	m := len(mine)
	wl, wr := 0, 0 // payloads of the rightward and leftward messages
	if w.LR {
		wl = m
	}
	if w.RL {
		wr = m
	}
	toR, toL := Msg(wl), Msg(wr)
	fromL, fromR := Msg(wl), Msg(wr)
	if w.LR {
		accL = toR[Hdr:]
		copy(accL, mine)
	}
	if w.RL {
		accR = toL[Hdr:]
		copy(accR, mine)
	}
	lp, rp := x.l.Left, x.l.Right
	for k, d := 0, 1; d < x.l.Size; k, d = k+1, 2*d {
		if rp != split.None {
			x.send(rp, false, k, toR, lp)
			x.recv(rp, false, k, fromR)
		}
		if lp != split.None {
			x.send(lp, true, k, toL, rp)
			x.recv(lp, true, k, fromL)
		}
		if err := x.round(ctx); err != nil {
			return nil, nil, nil, nil, err
		}
		nl, nr := split.None, split.None
		if lp != split.None {
			nl = x.absorb(fromL, true, w.LR, w.ExL, accL, &exL)
		}
		if rp != split.None {
			nr = x.absorb(fromR, false, w.RL, w.ExR, accR, &exR)
		}
		lp, rp = nl, nr
	}
	return accL, accR, exL, exR, nil
}

// absorb takes a scan message from the partner on the left of this rank
// (when left) or on its right: when that direction's scan runs, the
// message's values — the 2^k values beyond this rank's window on that
// side — join the inclusive result acc and, when wantEx, the exclusive
// one *ex. It returns the address the message carries.
func (x *Call) absorb(msg []byte, left, run, wantEx bool, acc []byte, ex *[]byte) int32 {
	if v := msg[Hdr:]; run {
		if wantEx {
			*ex = x.combine(*ex, v, left)
		}
		x.fold(acc, v, left)
	}
	return getAddr(msg)
}

// fold combines v into acc, v on the left (lower ranks) when left.
func (x *Call) fold(acc, v []byte, left bool) {
	if left {
		x.k.ReduceLeft(acc, v)
	} else {
		x.k.Reduce(acc, v)
	}
}

// combine returns acc combined with v, v on the left when left: a copy of
// v when acc is nil.
func (x *Call) combine(acc, v []byte, left bool) []byte {
	if acc == nil {
		acc = aligned(len(v))
		copy(acc, v)
		return acc
	}
	x.fold(acc, v, left)
	return acc
}

// arm is one side of the chain seen from a root: the ranks at distance
// 0 (the root), 1, …, max from it on that side. A rank other than the
// root is on one arm; the root is at distance 0 on both.
type arm struct {
	d, max int
	// toward and away are the partners 2^k closer to the root and 2^k
	// farther from it in round k (split.None: none).
	toward, away int32
	// left is set on the arm left of the root: away is toward rank 0.
	left bool
}

// arms returns this rank's arms for root.
func (x *Call) arms(root int) []arm {
	l := x.l
	switch {
	case l.Rank < root:
		return []arm{{d: root - l.Rank, max: root, toward: l.Right, away: l.Left, left: true}}
	case l.Rank > root:
		return []arm{{d: l.Rank - root, max: l.Size - 1 - root, toward: l.Left, away: l.Right}}
	}
	return []arm{
		{max: root, toward: split.None, away: l.Left, left: true},
		{max: l.Size - 1 - root, toward: split.None, away: l.Right},
	}
}

// contract runs the binomial tree toward root by distance (reduce,
// gather): in round k the ranks at an odd multiple of 2^k from the root
// leave: each sends its data with the address of its away partner to its
// toward partner, and the address of its toward partner to its away
// partner, which thereby learn their partners 2^(k+1) away (removing a
// list's node). A rank leaving in round k sends the data of the 2^k ranks
// (fewer at the end of the arm) from it outward. The root finishes after
// ⌈lg(max+1)⌉ rounds of its longer arm.
//
// out is the message a leaving rank sends (header first); in returns the
// buffer for the message of cnt ranks' data arriving on arm i in round k,
// and got takes its data.
func (x *Call) contract(ctx context.Context, root int, out func() []byte,
	in func(i int, a *arm, k, cnt int) []byte, got func(a *arm, k, cnt int, data []byte)) error {
	arms := x.arms(root)
	addrOut := Msg(0)
	var addrIn, bufs [2][]byte
	var cnts [2]int
	for k := 0; ; k++ {
		leaving, busy := false, false
		for i := range arms {
			a := &arms[i]
			bufs[i] = nil
			if a.d>>k&1 == 1 {
				x.send(a.toward, !a.left, k, out(), a.away)
				if a.away != split.None {
					x.send(a.away, a.left, k, addrOut, a.toward)
				}
				leaving = true
				continue
			}
			if a.away != split.None {
				cnts[i] = min(1<<k, a.max+1-a.d-1<<k)
				bufs[i] = in(i, a, k, cnts[i])
				x.recv(a.away, a.left, k, bufs[i])
				busy = true
			}
			if a.d > 0 {
				if addrIn[i] == nil {
					addrIn[i] = Msg(0)
				}
				x.recv(a.toward, !a.left, k, addrIn[i])
				busy = true
			}
		}
		if !leaving && !busy {
			return nil
		}
		if err := x.round(ctx); err != nil {
			return err
		}
		if leaving {
			return nil
		}
		for i := range arms {
			a := &arms[i]
			if bufs[i] != nil {
				a.away = getAddr(bufs[i])
				got(a, k, cnts[i], bufs[i][Hdr:])
			}
			if a.d > 0 {
				a.toward = getAddr(addrIn[i])
			}
		}
	}
}

// Reduce combines every rank's acc[Hdr:] into root's, in rank order.
func (x *Call) Reduce(ctx context.Context, root int, acc []byte) error {
	m := len(acc) - Hdr
	var bufs [2][]byte
	return x.contract(ctx, root,
		func() []byte { return acc },
		func(i int, _ *arm, _, _ int) []byte {
			if bufs[i] == nil {
				bufs[i] = Msg(m)
			}
			return bufs[i]
		},
		func(a *arm, _, _ int, v []byte) { x.fold(acc[Hdr:], v, a.left) })
}

// Gather collects every rank's m bytes of mine into out at root (where
// root's own block is already in place).
func (x *Call) Gather(ctx context.Context, root, m int, mine, out []byte) error {
	r := x.l.Rank
	var blocks []byte // a leaving rank's message: its own and its subtree's blocks in rank order
	var own int       // this rank's block in blocks
	if r != root {
		a := x.arms(root)[0]
		c := min(1<<bits.TrailingZeros(uint(a.d)), a.max+1-a.d)
		blocks = Msg(c * m)
		if a.left {
			own = c - 1
		}
		copy(blocks[Hdr+own*m:], mine)
	}
	var bufs [2][]byte
	return x.contract(ctx, root,
		func() []byte { return blocks },
		func(i int, _ *arm, _, cnt int) []byte {
			if len(bufs[i]) < Hdr+cnt*m {
				bufs[i] = Msg(cnt * m)
			}
			return bufs[i][:Hdr+cnt*m]
		},
		func(a *arm, k, cnt int, v []byte) {
			// The arriving ranks are 2^k … 2^k+cnt−1 away from this one.
			first := r + 1<<k // lowest arriving rank
			if a.left {
				first = r - 1<<k - cnt + 1
			}
			if r == root {
				copy(out[first*m:], v)
			} else {
				copy(blocks[Hdr+(own+first-r)*m:], v)
			}
		})
}

// spread runs the binomial tree from root by doubling (bcast, scatter):
// in round k (2^k ≤ the arm's length) the ranks of an arm within 2^k of
// the root, which hold their data, send data to their away partner 2^k
// farther out, and all ranks of the arm swap partner addresses as in
// scan: the message to the away partner carries the toward partner's
// address, the one to the toward partner the away partner's. A rank at
// distance d receives its data in round ⌊lg d⌋ from the rank 2^⌊lg d⌋
// closer to the root.
//
// out returns the message with the data a rank sends on arm a in round k
// (header first); in returns the buffer for the data a rank receives in
// round k, and got takes it.
func (x *Call) spread(ctx context.Context, root int, out func(a *arm, k int) []byte,
	in func(a *arm, k int) []byte, got func(a *arm, k int, data []byte)) error {
	arms := x.arms(root)
	top := 0
	for _, a := range arms {
		top = max(top, a.max)
	}
	var toAway, toToward, fromAway, fromToward [2][]byte
	for i := range arms {
		toAway[i], toToward[i] = Msg(0), Msg(0)
		fromAway[i], fromToward[i] = Msg(0), Msg(0)
	}
	var bufs [2][]byte
	for k := 0; 1<<k <= top; k++ {
		for i := range arms {
			a := &arms[i]
			bufs[i] = nil
			if a.away != split.None {
				msg := toAway[i]
				if a.d < 1<<k {
					msg = out(a, k)
				}
				x.send(a.away, a.left, k, msg, a.toward)
				x.recv(a.away, a.left, k, fromAway[i])
			}
			if a.toward != split.None {
				x.send(a.toward, !a.left, k, toToward[i], a.away)
				bufs[i] = fromToward[i]
				if a.d < 2<<k {
					bufs[i] = in(a, k)
				}
				x.recv(a.toward, !a.left, k, bufs[i])
			}
		}
		if err := x.round(ctx); err != nil {
			return err
		}
		for i := range arms {
			a := &arms[i]
			na, nt := split.None, split.None
			if a.away != split.None {
				na = getAddr(fromAway[i])
			}
			if a.toward != split.None {
				nt = getAddr(bufs[i])
				if a.d < 2<<k {
					got(a, k, bufs[i][Hdr:])
				}
			}
			a.away, a.toward = na, nt
		}
	}
	return nil
}

// Bcast copies root's buf into every rank's.
func (x *Call) Bcast(ctx context.Context, root int, buf []byte) error {
	var msg []byte // header and data, once this rank holds them
	if x.l.Rank == root {
		msg = Msg(len(buf))
		copy(msg[Hdr:], buf)
	}
	return x.spread(ctx, root,
		func(*arm, int) []byte { return msg },
		func(*arm, int) []byte {
			msg = Msg(len(buf))
			return msg
		},
		func(_ *arm, _ int, v []byte) { copy(buf, v) })
}

// Scatter sends block i (m bytes) of root's send to rank i's recv (root's
// own block is already in place). A rank at distance d > 0 receives in
// round k = ⌊lg d⌋ the blocks of the ranks at distance d, d+2^(k+1),
// d+2·2^(k+1), … of its arm and passes on those of d+2^k', d+2^k'+2^(k'+1),
// … in each later round k'.
func (x *Call) Scatter(ctx context.Context, root, m int, send, recv []byte) error {
	r := x.l.Rank
	var held []byte // the blocks this rank holds: distance d + j·step in block j
	step := 1
	block := func(a *arm, f int) []byte { // the block of the rank at distance f
		if r == root {
			q := root + f
			if a.left {
				q = root - f
			}
			return send[q*m : (q+1)*m]
		}
		j := (f - a.d) / step
		return held[j*m : (j+1)*m]
	}
	count := func(a *arm, f, k int) int { return (a.max-f)>>(k+1) + 1 }
	return x.spread(ctx, root,
		func(a *arm, k int) []byte {
			f := a.d + 1<<k
			msg := Msg(count(a, f, k) * m)
			for j := 0; f <= a.max; f, j = f+2<<k, j+1 {
				copy(msg[Hdr+j*m:], block(a, f))
			}
			return msg
		},
		func(a *arm, k int) []byte { return Msg(count(a, a.d, k) * m) },
		func(a *arm, k int, v []byte) {
			held, step = v, 2<<k
			copy(recv, v[:m])
		})
}
