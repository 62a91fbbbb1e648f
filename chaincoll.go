package scoll

import (
	"context"
	"errors"
	"fmt"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/wire"
	"sync"
	"time"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/chain"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// ChainAlgorithm is the name WithAlgorithm takes for the chain collectives:
// Moody, Ahn and de Supinski's collectives on a group kept as a chain
// ("Exascale algorithms for generalized MPI_Comm_split", EuroMPI 2011,
// sec. 2). They address only a rank's neighbours and the partners whose
// addresses travel with the data (Fig. 1), so a rank holds O(1) addresses
// during and after the call, never the member table.
//
// # Which calls run them
//
// On a communicator made with WithChainGroup that has not learnt its
// members, the blocking Bcast, Reduce, Allreduce, Gather, Scatter, Scan and
// Exscan run the chain algorithms when the call names no algorithm or names
// ChainAlgorithm; DoubleScan and DoubleExscan always do. On any other
// communicator (the world, tables, a chain that has learnt its members),
// WithAlgorithm(ChainAlgorithm) makes those blocking calls run them too,
// the communicator seen as a chain of the ranks in order. Arguments are
// checked as the other algorithms check them, with the same errors.
//
// Everything else on a chain communicator works as on any other but first
// resolves the addresses it needs:
//
//   - the other collectives, the non-blocking (I*) and persistent (*Init)
//     forms of every collective, and a blocking call that names a
//     registered algorithm, learn the members once: one chain allgather of
//     the addresses, ⌈lg n⌉ rounds, after which every rank keeps all n
//     addresses (4n bytes) and later calls use the usual schedules (and no
//     longer the chain algorithms, unless they name ChainAlgorithm). These
//     forms do not accept ChainAlgorithm (ErrInvalidArgument).
//   - point-to-point messages to a rank other than the neighbours and rank
//     0 find its address by walking the chain from the nearest rank whose
//     address is known: one lookup request per hop, up to n/2 in sequence,
//     answers cached.
//
// # Algorithms and rounds (n ranks, root r)
//
//	Scan, Exscan,            Fig. 1: in round k each rank sends to the rank
//	DoubleScan, DoubleExscan, 2^k to its right its partial scan and the
//	Allreduce                 address of its partner 2^k to its left, and
//	                          the other way round; ⌈lg n⌉ rounds, at most
//	                          two messages each way per rank and round.
//	                          Allreduce is a double scan: left ⊕ own ⊕ right.
//	Reduce, Gather           binomial tree by distance from the root, on
//	                          both sides at once: round k removes the ranks
//	                          at odd multiples of 2^k from the root, each
//	                          sending its data toward the root and telling
//	                          its two partners each other's address (a list
//	                          removal); max(⌈lg(r+1)⌉, ⌈lg(n−r)⌉) ≤ ⌈lg n⌉
//	                          rounds, n−1 data messages.
//	Bcast, Scatter           binomial tree by doubling from the root: in
//	                          round k the ranks within 2^k of the root send
//	                          to the rank 2^k further out, while all ranks
//	                          of each side swap partner addresses as in
//	                          Fig. 1; max(⌈lg(r+1)⌉, ⌈lg(n−r)⌉) rounds.
//
// Round k of the chain between ranks i and i+2^k:
//
//	scan         i ──[addr(i−2^k), scan_i]──▶ i+2^k
//	             i ◀──[addr(i+2^(k+1)), rscan]── i+2^k
//	reduce       i ◀──[addr(i+2^(k+1)), data]── i+2^k   (i+2^k leaves)
//	             i+2^k ──[addr(i)]──▶ i+2^(k+1)
//
// Costs in the α-β-γ model, for m bytes per rank and the root at an end
// of the chain (a root inside it has two shorter arms, ⌈lg max(r+1, n−r)⌉
// rounds in which it talks to both; the 8-byte address headers are left
// out):
//
//	Scan           ⌈lg n⌉(α + mβ + mγ)
//	Exscan         ⌈lg n⌉(α + mβ + 2mγ)
//	DoubleScan     ⌈lg n⌉(α + 2mβ + 2mγ)
//	DoubleExscan   ⌈lg n⌉(α + 2mβ + 4mγ)
//	Allreduce      ⌈lg n⌉(α + 2mβ + 3mγ); floating Sum, Prod, user: Reduce + Bcast
//	Reduce         ⌈lg n⌉(α + mβ + mγ)
//	Bcast          ⌈lg n⌉(α + mβ)
//	Gather         ⌈lg n⌉α + (n−1)mβ
//	Scatter        ⌈lg n⌉α + (n−1)mβ
//
// Reduce and Gather send at most 2(n−1) messages in all; the others up to
// two per rank and round (the address swaps of Fig. 1), of which Bcast and
// Scatter fill n−1 with data. A rank of Gather or Scatter holds the blocks
// of its subtree while it forwards them. Like the split algorithms, and
// unlike the registered ones, these are code over the point-to-point layer
// rather than schedules: a rank learns its peers during the call.
//
// Every operator works, built-in or UserOp: contributions are combined in
// rank order (non-commutative operators too). Allreduce is a double scan
// (⌈lg n⌉ rounds) except for floating-point Sum, Prod and user operators,
// where each rank's grouping of the terms would round its own way: there it
// is a Reduce to rank 0 and a Bcast (2⌈lg n⌉ rounds), so that every rank
// gets the same bits.
const ChainAlgorithm = "chain"

// useChain reports whether a blocking call on c with opts runs a chain
// algorithm (see ChainAlgorithm).
func useChain(c *Comm, opts []CallOption) bool {
	if c == nil {
		return false
	}
	alg := ""
	if len(opts) > 0 {
		alg = parseOptions(opts).Alg
	}
	switch alg {
	case ChainAlgorithm:
		return true
	case "":
		ch, ok := c.grp.(*split.Chain)
		return ok && !ch.Learnt()
	}
	return false
}

// chainOptions checks the options of a chain call as prepare checks them,
// where the only algorithm is ChainAlgorithm (name is the collective).
func chainOptions(name fmt.Stringer, c *Comm, opts []CallOption) error {
	o := parseOptions(opts)
	return o.CheckOnly(name, c.size, ChainAlgorithm)
}

// chainAbandon is abandon for a chain call: the others wait in the
// message space of c's splits (or, had they taken another path, in c's
// own), so the call is aborted in both.
func (c *Comm) chainAbandon(err error) { c.abandonIn(err, true) }

// chainKernel finishes the argument checks of a reducing chain call whose
// own checks gave err: the operator's kernel for T and the options. On an
// error it abandons the call.
func chainKernel[T Element](c *Comm, name fmt.Stringer, op Op, opts []CallOption, err error) (exec.Kernel, error) {
	var k exec.Kernel
	if err == nil {
		if k, err = kernelFor[T](op); err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	}
	if err == nil {
		err = chainOptions(name, c, opts)
	}
	if err != nil {
		c.chainAbandon(err)
	}
	return k, err
}

// Pseudo-collectives of the signatures of the double scans.
const (
	sigDoubleScan   = uint64(schedule.NumCollectives) + 1
	sigDoubleExscan = uint64(schedule.NumCollectives) + 2
)

// chainSig is the signature every rank's messages of a chain call carry.
func chainSig(coll uint64, count, root, elemSize int, opID uint64) uint64 {
	h := plan.NewHash()
	h.Add(coll, uint64(count), uint64(root), uint64(elemSize), opID)
	h.Str(ChainAlgorithm)
	return uint64(h)
}

// chainStart begins a chain call on c: c's place in its chain and a
// connection in a message space of the call's own (the next sequence
// number of c). A failure is reported to the others (chainAbandon).
//
// Ranks that disagree about the call (another collective, root or count)
// may post messages that never match, so the call is recorded with the
// transport's Checker, as the executor records its calls, and while it
// runs a timer asks the Checker now and then (after 0.5 ms, then ever
// less often, up to every 50 ms) whether the neighbouring ranks recorded
// another call: the returned context is then cancelled with the mismatch.
// end must be called when the call is over.
func (c *Comm) chainStart(ctx context.Context, sig uint64, k exec.Kernel) (*chainX, context.Context, error) {
	l, err := c.endpoint().Links(ctx)
	if err != nil {
		c.chainAbandon(err)
		return nil, ctx, err
	}
	conn := c.conn(sig)
	x := &chainX{Call: chain.New(conn, l, k), c: c, conn: conn}
	ck := c.checker
	if ck == nil || c.size == 1 {
		return x, ctx, nil
	}
	seq := x.conn.Seq()
	// The communicator's record, which the executor's calls share (they
	// number their calls from the same sequence). Transports whose ranks
	// cannot see each other find mismatches as messages arrive, by the
	// key they carry: the call's own message space is recorded there too.
	ck.RecordCall(c.id, seq, sig)
	if _, ok := c.t.(transport.CallAborter); ok {
		x.space = c.id | cid.SplitBit
		ck.RecordCall(x.space, seq, sig)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	delay := 500 * time.Microsecond
	var tick func()
	tick = func() {
		if err := x.check(false); err != nil {
			cancel(err)
			return
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.timer != nil {
			delay = min(2*delay, 50*time.Millisecond)
			x.timer.Reset(delay)
		}
	}
	x.mu.Lock()
	x.timer = time.AfterFunc(delay, tick)
	x.mu.Unlock()
	x.cancel = cancel
	return x, ctx, nil
}

// check asks the Checker whether another rank recorded this call with
// another signature.
func (x *chainX) check(full bool) error {
	c, seq, sig := x.c, x.conn.Seq(), x.conn.Sig()
	if err := c.checker.CheckCall(c.id, seq, sig, full); err != nil || x.space == 0 {
		return err
	}
	return c.checker.CheckCall(x.space, seq, sig, full)
}

// end finishes a chain call: it stops the watch of chainStart and returns
// err (nil or not) as the call's error, a mismatch the Checker knows of
// first, wrapped as cl.run wraps a schedule's.
func (x *chainX) end(name fmt.Stringer, err error) error {
	if x.cancel != nil {
		x.mu.Lock()
		x.timer.Stop()
		x.timer = nil
		x.mu.Unlock()
		x.cancel(nil)
		if err != nil {
			if cerr := x.check(true); cerr != nil && !errors.Is(err, ErrMismatch) {
				err = fmt.Errorf("%w (then: %w)", cerr, err)
			}
		}
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s/%s: %w", name, ChainAlgorithm, err)
}

func chainBcast[T Element](ctx context.Context, c *Comm, buf []T, root int, opts []CallOption) error {
	coll := schedule.Bcast
	var spec schedule.Spec
	_, err := checkArgs(ctx, c, &plan.Args{Coll: coll, Root: root, Recv: bufOf(buf)}, &spec)
	if err == nil {
		err = chainOptions(coll, c, opts)
	}
	if err != nil {
		c.chainAbandon(err)
		return err
	}
	es := elemSize[T]()
	x, ctx, err := c.chainStart(ctx, chainSig(uint64(coll), len(buf), root, es, 0), exec.Kernel{ElemSize: es})
	if err != nil {
		return err
	}
	return x.end(coll, x.Bcast(ctx, root, kernels.Bytes(buf)))
}

func chainReduce[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, root int, opts []CallOption) error {
	coll := schedule.Reduce
	var spec schedule.Spec
	_, err := checkArgs(ctx, c, &plan.Args{Coll: coll, Root: root, Send: bufOf(send), Recv: bufOf(recv)}, &spec)
	count := spec.Count
	k, err := chainKernel[T](c, coll, op, opts, err)
	if err != nil {
		return err
	}
	x, ctx, err := c.chainStart(ctx, chainSig(uint64(coll), count, root, k.ElemSize, op.id), k)
	if err != nil {
		return err
	}
	in := send
	if in == nil && c.rank == root {
		in = recv
	}
	acc := chain.Msg(count * k.ElemSize)
	copy(acc[chain.Hdr:], kernels.Bytes(in))
	if err := x.end(coll, x.Reduce(ctx, root, acc)); err != nil {
		return err
	}
	if c.rank == root {
		copy(kernels.Bytes(recv), acc[chain.Hdr:])
	}
	return nil
}

// chainReduction runs Allreduce, Scan and Exscan.
func chainReduction[T Element](ctx context.Context, c *Comm, coll schedule.Collective, send, recv []T, op Op, opts []CallOption) error {
	var spec schedule.Spec
	_, err := checkArgs(ctx, c, &plan.Args{Coll: coll, Send: bufOf(send), Recv: bufOf(recv)}, &spec)
	k, err := chainKernel[T](c, coll, op, opts, err)
	if err != nil {
		return err
	}
	x, ctx, err := c.chainStart(ctx, chainSig(uint64(coll), len(recv), 0, k.ElemSize, op.id), k)
	if err != nil {
		return err
	}
	in := send
	if in == nil {
		in = recv
	}
	mine, out := kernels.Bytes(in), kernels.Bytes(recv)
	switch coll {
	case schedule.Scan:
		accL, _, _, _, err := x.Scan(ctx, mine, chain.Want{LR: true})
		if err := x.end(coll, err); err != nil {
			return err
		}
		copy(out, accL)
	case schedule.Exscan:
		_, _, exL, _, err := x.Scan(ctx, mine, chain.Want{LR: true, ExL: true})
		if err := x.end(coll, err); err != nil {
			return err
		}
		if exL != nil {
			copy(out, exL)
		}
	default: // Allreduce: (send_0 ⊕ … ⊕ send_r) ⊕ (send_r+1 ⊕ … ⊕ send_n−1)
		accL, _, _, exR, err := x.Scan(ctx, mine, chain.Want{LR: true, RL: true, ExR: true})
		if err := x.end(coll, err); err != nil {
			return err
		}
		if exR != nil {
			k.Reduce(accL, exR)
		}
		copy(out, accL)
	}
	return nil
}

func chainAllreduce[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	if floating[T]() && (op.id == Sum.id || op.id == Prod.id || op.user != nil) {
		// A double scan groups every rank's sum differently, and floating
		// point rounds each grouping its own way: a reduce to rank 0 and a
		// broadcast give every rank the same bits (2⌈lg n⌉ rounds).
		if c == nil || len(send) != len(recv) && send != nil {
			return chainReduction(ctx, c, schedule.Allreduce, send, recv, op, opts) // its errors
		}
		in := send
		if in == nil && c.rank != 0 {
			in = recv
		}
		if err := chainReduce(ctx, c, in, recv, op, 0, opts); err != nil {
			return err
		}
		return chainBcast(ctx, c, recv, 0, opts)
	}
	return chainReduction(ctx, c, schedule.Allreduce, send, recv, op, opts)
}

// floating reports whether T is a floating-point type.
func floating[T Element]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

func chainScan[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return chainReduction(ctx, c, schedule.Scan, send, recv, op, opts)
}

func chainExscan[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return chainReduction(ctx, c, schedule.Exscan, send, recv, op, opts)
}

func chainGather[T Element](ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Gather
	x, count, ctx, err := chainRooted(ctx, c, coll, root, send, recv, opts)
	if err != nil {
		return err
	}
	es := elemSize[T]()
	var out []byte
	if c.rank == root {
		out = kernels.Bytes(recv)
		if send != nil {
			m := count * es
			copy(out[root*m:(root+1)*m], kernels.Bytes(send))
		}
	}
	return x.end(coll, x.Gather(ctx, root, count*es, kernels.Bytes(send), out))
}

func chainScatter[T Element](ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Scatter
	x, count, ctx, err := chainRooted(ctx, c, coll, root, send, recv, opts)
	if err != nil {
		return err
	}
	var in []byte
	m := count * elemSize[T]()
	if c.rank == root {
		in = kernels.Bytes(send)
		if recv != nil {
			copy(kernels.Bytes(recv), in[root*m:(root+1)*m])
		}
	}
	return x.end(coll, x.Scatter(ctx, root, m, in, kernels.Bytes(recv)))
}

// chainRooted checks the arguments of a chain Gather or Scatter as the
// table path does, and starts the call: the block count (that of one
// rank's block, or len(all)/n at a root in place).
func chainRooted[T Element](ctx context.Context, c *Comm, coll schedule.Collective, root int, send, recv []T, opts []CallOption) (*chainX, int, context.Context, error) {
	var spec schedule.Spec
	_, err := checkArgs(ctx, c, &plan.Args{Coll: coll, Root: root, Send: bufOf(send), Recv: bufOf(recv)}, &spec)
	count := spec.Count
	if err == nil {
		err = chainOptions(coll, c, opts)
	}
	if err != nil {
		c.chainAbandon(err)
		return nil, 0, ctx, err
	}
	es := elemSize[T]()
	x, ctx, err := c.chainStart(ctx, chainSig(uint64(coll), count, root, es, 0), exec.Kernel{ElemSize: es})
	return x, count, ctx, err
}

// DoubleScan runs a left-to-right and a right-to-left inclusive scan at
// once (Moody et al.'s double scan): on rank r, fromLeft = send_0 ⊕ … ⊕
// send_r and fromRight = send_r ⊕ … ⊕ send_n−1, combined in rank order with
// op (any built-in or UserOp, non-commutative ones too). send, fromLeft and
// fromRight have the same length on every rank; send may be fromLeft or
// fromRight (in place), but fromLeft and fromRight must not overlap.
//
// It runs along the chain of the ranks in order (ChainAlgorithm): on a
// communicator made with WithChainGroup it needs only the chain's links,
// on others the table gives the neighbours' addresses. ⌈lg n⌉ rounds, in
// each at most one message of len(send) elements to each neighbour 2^k
// away. The only option it takes is WithAlgorithm(ChainAlgorithm); the
// others are checked as for any call and ignored.
func DoubleScan[T Element](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, opts ...CallOption) error {
	return doubleScan(ctx, c, send, fromLeft, fromRight, op, false, opts)
}

// DoubleExscan is DoubleScan with exclusive results: on rank r, fromLeft =
// send_0 ⊕ … ⊕ send_r−1 and fromRight = send_r+1 ⊕ … ⊕ send_n−1. Rank 0's
// fromLeft and the last rank's fromRight are left untouched, as
// MPI_Exscan leaves rank 0's receive buffer.
func DoubleExscan[T Element](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, opts ...CallOption) error {
	return doubleScan(ctx, c, send, fromLeft, fromRight, op, true, opts)
}

// dscan names the double scans in errors.
type dscan bool

func (d dscan) String() string {
	if d {
		return "doubleexscan"
	}
	return "doublescan"
}

func doubleScan[T Element](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, exclusive bool, opts []CallOption) error {
	name := dscan(exclusive)
	err := c.usable(ctx)
	if err == nil && (len(fromLeft) != len(send) || len(fromRight) != len(send)) {
		err = plan.Invalid(name, "len(send)=%d, len(fromLeft)=%d, len(fromRight)=%d: want equal lengths", len(send), len(fromLeft), len(fromRight))
	}
	k, err := chainKernel[T](c, name, op, opts, err)
	if err != nil {
		return err
	}
	coll := sigDoubleScan
	if exclusive {
		coll = sigDoubleExscan
	}
	x, ctx, err := c.chainStart(ctx, chainSig(coll, len(send), 0, k.ElemSize, op.id), k)
	if err != nil {
		return err
	}
	w := chain.Want{LR: true, RL: true, ExL: exclusive, ExR: exclusive}
	accL, accR, exL, exR, err := x.Scan(ctx, kernels.Bytes(send), w)
	if err := x.end(name, err); err != nil {
		return err
	}
	if !exclusive {
		copy(kernels.Bytes(fromLeft), accL)
		copy(kernels.Bytes(fromRight), accR)
		return nil
	}
	if exL != nil {
		copy(kernels.Bytes(fromLeft), exL)
	}
	if exR != nil {
		copy(kernels.Bytes(fromRight), exR)
	}
	return nil
}

// chainX is one chain collective on one rank: the algorithms' call
// (package internal/chain) and the watch of chainStart.
type chainX struct {
	*chain.Call
	c    *Comm
	conn *wire.Conn

	// The watch of chainStart (nil cancel: none) and the second message
	// space it records the call in (0: none).
	space  uint64
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer // nil once the call is over
}
