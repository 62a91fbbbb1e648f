package scoll

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
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
		alg = parseOptions(opts).alg
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

// chainOptions checks the options of a chain call as prepare checks them
// (with argErr's messages; name is the collective).
func chainOptions(name fmt.Stringer, c *Comm, opts []CallOption) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, name, fmt.Sprintf(format, args...))
	}
	cfg := parseOptions(opts)
	if cfg.alg != "" && cfg.alg != ChainAlgorithm {
		return bad("unknown algorithm %q (have %s)", cfg.alg, ChainAlgorithm)
	}
	if cfg.segBytes < 0 {
		return bad("negative segment size %d", cfg.segBytes)
	}
	if cfg.radix != 0 && cfg.radix < 2 {
		return bad("radix %d (want ≥ 2)", cfg.radix)
	}
	if cfg.grid != nil {
		if err := algorithms.CheckGrid(cfg.grid, c.size); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if cfg.place != nil {
		if err := algorithms.CheckPlacement(cfg.place, c.size); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// chainAbandon is abandon for a chain call: the others wait in the
// message space of c's splits (or, had they taken another path, in c's
// own), so the call is aborted in both.
func (c *Comm) chainAbandon(err error) { c.abandonIn(err, true) }

// chainKernel finishes the argument checks of a reducing chain call whose
// own checks gave err: the operator's kernel for T and the options. On an
// error it abandons the call.
func chainKernel[T Number](c *Comm, name fmt.Stringer, op Op, opts []CallOption, err error) (exec.Kernel, error) {
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
	h := newHash()
	h.add(coll, uint64(count), uint64(root), uint64(elemSize), opID)
	h.str(ChainAlgorithm)
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
	l, err := c.links(ctx)
	if err != nil {
		c.chainAbandon(err)
		return nil, ctx, err
	}
	x := &chainX{c: c, conn: c.splitConn(sig), l: l, k: k}
	ck := c.checker
	if ck == nil || c.size == 1 {
		return x, ctx, nil
	}
	seq := x.conn.seq
	// The communicator's record, which the executor's calls share (they
	// number their calls from the same sequence). Transports whose ranks
	// cannot see each other find mismatches as messages arrive, by the
	// key they carry: the call's own message space is recorded there too.
	ck.RecordCall(c.id, seq, sig)
	if _, ok := c.t.(transport.CallAborter); ok {
		x.space = c.id | splitBit
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
	c, seq, sig := x.c, x.conn.seq, x.conn.sig
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

func elemSize[T Number]() int {
	var z T
	return int(sizeOf(z))
}

func chainBcast[T Number](ctx context.Context, c *Comm, buf []T, root int, opts []CallOption) error {
	coll := schedule.Bcast
	err := pre(ctx, c, coll, root)
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
	return x.end(coll, x.bcast(ctx, root, kernels.Bytes(buf)))
}

func chainReduce[T Number](ctx context.Context, c *Comm, send, recv []T, op Op, root int, opts []CallOption) error {
	coll := schedule.Reduce
	err := pre(ctx, c, coll, root)
	count := len(send)
	if err == nil && c.rank == root {
		if send == nil {
			count = len(recv)
		} else if len(recv) != len(send) {
			err = argErr(coll, "len(send)=%d != len(recv)=%d at root", len(send), len(recv))
		}
	}
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
	acc := chainMsg(count * k.ElemSize)
	copy(acc[chainHdr:], kernels.Bytes(in))
	if err := x.end(coll, x.reduce(ctx, root, acc)); err != nil {
		return err
	}
	if c.rank == root {
		copy(kernels.Bytes(recv), acc[chainHdr:])
	}
	return nil
}

// chainReduction runs Allreduce, Scan and Exscan.
func chainReduction[T Number](ctx context.Context, c *Comm, coll schedule.Collective, send, recv []T, op Op, opts []CallOption) error {
	err := pre(ctx, c, coll, 0)
	if err == nil && send != nil && len(send) != len(recv) {
		err = argErr(coll, "len(send)=%d != len(recv)=%d", len(send), len(recv))
	}
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
		accL, _, _, _, err := x.scan(ctx, mine, scanWant{lr: true})
		if err := x.end(coll, err); err != nil {
			return err
		}
		copy(out, accL)
	case schedule.Exscan:
		_, _, exL, _, err := x.scan(ctx, mine, scanWant{lr: true, exL: true})
		if err := x.end(coll, err); err != nil {
			return err
		}
		if exL != nil {
			copy(out, exL)
		}
	default: // Allreduce: (send_0 ⊕ … ⊕ send_r) ⊕ (send_r+1 ⊕ … ⊕ send_n−1)
		accL, _, _, exR, err := x.scan(ctx, mine, scanWant{lr: true, rl: true, exR: true})
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

func chainAllreduce[T Number](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
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
func floating[T Number]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

func chainScan[T Number](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return chainReduction(ctx, c, schedule.Scan, send, recv, op, opts)
}

func chainExscan[T Number](ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return chainReduction(ctx, c, schedule.Exscan, send, recv, op, opts)
}

func chainGather[T Number](ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Gather
	x, count, ctx, err := chainRooted(ctx, c, coll, root, send, recv, "recv", "send", opts)
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
	return x.end(coll, x.gather(ctx, root, count*es, kernels.Bytes(send), out))
}

func chainScatter[T Number](ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	coll := schedule.Scatter
	x, count, ctx, err := chainRooted(ctx, c, coll, root, recv, send, "send", "recv", opts)
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
	return x.end(coll, x.scatter(ctx, root, m, in, kernels.Bytes(recv)))
}

// chainRooted checks the arguments of a chain Gather (one = send, all =
// recv) or Scatter (one = recv, all = send) as the table path does, and
// starts the call: the block count (len(one), or len(all)/n at a root in
// place, where one is nil).
func chainRooted[T Number](ctx context.Context, c *Comm, coll schedule.Collective, root int, one, all []T, allName, oneName string, opts []CallOption) (*chainX, int, context.Context, error) {
	err := pre(ctx, c, coll, root)
	count := len(one)
	if err == nil && c.rank == root {
		if one == nil {
			if len(all)%c.size != 0 {
				err = argErr(coll, "in place: len(%s)=%d is not a multiple of %d ranks", allName, len(all), c.size)
			}
			count = len(all) / c.size
		} else if len(all) != c.size*len(one) {
			err = argErr(coll, "len(%s)=%d, want %d ranks × len(%s)=%d", allName, len(all), c.size, oneName, len(one))
		}
	}
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
func DoubleScan[T Number](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, opts ...CallOption) error {
	return doubleScan(ctx, c, send, fromLeft, fromRight, op, false, opts)
}

// DoubleExscan is DoubleScan with exclusive results: on rank r, fromLeft =
// send_0 ⊕ … ⊕ send_r−1 and fromRight = send_r+1 ⊕ … ⊕ send_n−1. Rank 0's
// fromLeft and the last rank's fromRight are left untouched, as
// MPI_Exscan leaves rank 0's receive buffer.
func DoubleExscan[T Number](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, opts ...CallOption) error {
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

func doubleScan[T Number](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, exclusive bool, opts []CallOption) error {
	name := dscan(exclusive)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, name, fmt.Sprintf(format, args...))
	}
	err := c.usable(ctx)
	if err == nil && (len(fromLeft) != len(send) || len(fromRight) != len(send)) {
		err = bad("len(send)=%d, len(fromLeft)=%d, len(fromRight)=%d: want equal lengths", len(send), len(fromLeft), len(fromRight))
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
	w := scanWant{lr: true, rl: true, exL: exclusive, exR: exclusive}
	accL, accR, exL, exR, err := x.scan(ctx, kernels.Bytes(send), w)
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

// chainX is one chain collective on one rank: its place in the chain, the
// connection of the call and the operator's kernel.
//
// Every message starts with a header of chainHdr bytes holding a transport
// address (the partner the receiver learns: split.None for none); the
// data follows, 8-byte aligned.
type chainX struct {
	c     *Comm
	conn  *splitConn
	l     split.Links
	k     exec.Kernel
	sends []split.Send
	recvs []split.Recv

	// The watch of chainStart (nil cancel: none) and the second message
	// space it records the call in (0: none).
	space  uint64
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer // nil once the call is over
}

const chainHdr = 8

// aligned returns n bytes aligned for every element type (non-nil).
func aligned(n int) []byte { return kernels.Bytes(make([]uint64, n/8+1))[:n] }

// chainMsg returns a message of n data bytes after the header.
func chainMsg(n int) []byte { return aligned(chainHdr + n) }

func getAddr(msg []byte) int32 { return int32(binary.LittleEndian.Uint32(msg)) }

// chainTags is the first tag of the chain calls; round k's messages
// to the right have tag chainTags+2k, those to the left chainTags+2k+1.
// These are the tags of split's chain allgather, which a chain
// communicator learning its members runs (learnMembers): a rank that
// learns while its neighbours run a chain algorithm (ranks that disagree
// on the call) exchanges a message with each of them in the first round,
// and the signatures tell the mismatch. Every chain algorithm exchanges
// one message at least with each neighbour in its first round too.
const chainTags = 15 << 20

func chainTag(k int, leftward bool) int {
	if leftward {
		return chainTags + 2*k + 1
	}
	return chainTags + 2*k
}

// send adds the message of round k to transport address to, on the left
// of this rank when left, its header set to addr.
func (x *chainX) send(to int32, left bool, k int, msg []byte, addr int32) {
	binary.LittleEndian.PutUint32(msg, uint32(addr))
	x.sends = append(x.sends, split.Send{To: int(to), Tag: chainTag(k, left), Data: msg, Direct: true})
}

// recv adds a receive of round k of exactly len(buf) bytes from transport
// address from, on the left of this rank when left.
func (x *chainX) recv(from int32, left bool, k int, buf []byte) {
	x.recvs = append(x.recvs, split.Recv{From: int(from), Tag: chainTag(k, !left), Buf: buf, Direct: true})
}

// round runs the sends and receives added since the last round (none: no
// round) and checks every message's length.
func (x *chainX) round(ctx context.Context) error {
	defer func() { x.sends, x.recvs = x.sends[:0], x.recvs[:0] }()
	if len(x.sends)+len(x.recvs) == 0 {
		return nil
	}
	if err := x.conn.Round(ctx, x.sends, x.recvs); err != nil {
		return err // Round has aborted the call
	}
	for _, r := range x.recvs {
		if r.N != len(r.Buf) {
			err := fmt.Errorf("%w: chain: %d bytes from transport address %d, expected %d", ErrMismatch, r.N, r.From, len(r.Buf))
			x.conn.abort(nil, err)
			return err
		}
	}
	return nil
}

// scanWant selects the scans of scan: lr and rl run the left-to-right and
// right-to-left scans, exL and exR also compute their exclusive results.
type scanWant struct{ lr, rl, exL, exR bool }

// scan is Moody et al.'s Fig. 1, in both directions when asked: in round k
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
func (x *chainX) scan(ctx context.Context, mine []byte, w scanWant) (accL, accR, exL, exR []byte, err error) {
	m := len(mine)
	wl, wr := 0, 0 // payloads of the rightward and leftward messages
	if w.lr {
		wl = m
	}
	if w.rl {
		wr = m
	}
	toR, toL := chainMsg(wl), chainMsg(wr)
	fromL, fromR := chainMsg(wl), chainMsg(wr)
	if w.lr {
		accL = toR[chainHdr:]
		copy(accL, mine)
	}
	if w.rl {
		accR = toL[chainHdr:]
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
			nl = getAddr(fromL)
			if v := fromL[chainHdr:]; w.lr {
				// v holds the 2^k values left of this rank's window.
				if w.exL {
					exL = x.combine(exL, v, true)
				}
				x.k.ReduceLeft(accL, v)
			}
		}
		if rp != split.None {
			nr = getAddr(fromR)
			if v := fromR[chainHdr:]; w.rl {
				if w.exR {
					exR = x.combine(exR, v, false)
				}
				x.k.Reduce(accR, v)
			}
		}
		lp, rp = nl, nr
	}
	return accL, accR, exL, exR, nil
}

// combine returns acc combined with v, v on the left when left: a copy of
// v when acc is nil.
func (x *chainX) combine(acc, v []byte, left bool) []byte {
	switch {
	case acc == nil:
		acc = aligned(len(v))
		copy(acc, v)
	case left:
		x.k.ReduceLeft(acc, v)
	default:
		x.k.Reduce(acc, v)
	}
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
func (x *chainX) arms(root int) []arm {
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
func (x *chainX) contract(ctx context.Context, root int, out func() []byte,
	in func(i int, a *arm, k, cnt int) []byte, got func(a *arm, k, cnt int, data []byte)) error {
	arms := x.arms(root)
	addrOut := chainMsg(0)
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
					addrIn[i] = chainMsg(0)
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
				got(a, k, cnts[i], bufs[i][chainHdr:])
			}
			if a.d > 0 {
				a.toward = getAddr(addrIn[i])
			}
		}
	}
}

// reduce combines every rank's acc[chainHdr:] into root's, in rank order.
func (x *chainX) reduce(ctx context.Context, root int, acc []byte) error {
	m := len(acc) - chainHdr
	var bufs [2][]byte
	return x.contract(ctx, root,
		func() []byte { return acc },
		func(i int, _ *arm, _, _ int) []byte {
			if bufs[i] == nil {
				bufs[i] = chainMsg(m)
			}
			return bufs[i]
		},
		func(a *arm, _, _ int, v []byte) {
			if a.left { // v holds lower ranks
				x.k.ReduceLeft(acc[chainHdr:], v)
			} else {
				x.k.Reduce(acc[chainHdr:], v)
			}
		})
}

// gather collects every rank's m bytes of mine into out at root (where
// root's own block is already in place).
func (x *chainX) gather(ctx context.Context, root, m int, mine, out []byte) error {
	r := x.l.Rank
	var blocks []byte // a leaving rank's message: its own and its subtree's blocks in rank order
	var own int       // this rank's block in blocks
	if r != root {
		a := x.arms(root)[0]
		c := min(1<<bits.TrailingZeros(uint(a.d)), a.max+1-a.d)
		blocks = chainMsg(c * m)
		if a.left {
			own = c - 1
		}
		copy(blocks[chainHdr+own*m:], mine)
	}
	var bufs [2][]byte
	return x.contract(ctx, root,
		func() []byte { return blocks },
		func(i int, _ *arm, _, cnt int) []byte {
			if len(bufs[i]) < chainHdr+cnt*m {
				bufs[i] = chainMsg(cnt * m)
			}
			return bufs[i][:chainHdr+cnt*m]
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
				copy(blocks[chainHdr+(own+first-r)*m:], v)
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
func (x *chainX) spread(ctx context.Context, root int, out func(a *arm, k int) []byte,
	in func(a *arm, k int) []byte, got func(a *arm, k int, data []byte)) error {
	arms := x.arms(root)
	top := 0
	for _, a := range arms {
		top = max(top, a.max)
	}
	var toAway, toToward, fromAway, fromToward [2][]byte
	for i := range arms {
		toAway[i], toToward[i] = chainMsg(0), chainMsg(0)
		fromAway[i], fromToward[i] = chainMsg(0), chainMsg(0)
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
					got(a, k, bufs[i][chainHdr:])
				}
			}
			a.away, a.toward = na, nt
		}
	}
	return nil
}

// bcast copies root's buf into every rank's.
func (x *chainX) bcast(ctx context.Context, root int, buf []byte) error {
	var msg []byte // header and data, once this rank holds them
	if x.l.Rank == root {
		msg = chainMsg(len(buf))
		copy(msg[chainHdr:], buf)
	}
	return x.spread(ctx, root,
		func(*arm, int) []byte { return msg },
		func(*arm, int) []byte {
			msg = chainMsg(len(buf))
			return msg
		},
		func(_ *arm, _ int, v []byte) { copy(buf, v) })
}

// scatter sends block i (m bytes) of root's send to rank i's recv (root's
// own block is already in place). A rank at distance d > 0 receives in
// round k = ⌊lg d⌋ the blocks of the ranks at distance d, d+2^(k+1),
// d+2·2^(k+1), … of its arm and passes on those of d+2^k', d+2^k'+2^(k'+1),
// … in each later round k'.
func (x *chainX) scatter(ctx context.Context, root, m int, send, recv []byte) error {
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
			msg := chainMsg(count(a, f, k) * m)
			for j := 0; f <= a.max; f, j = f+2<<k, j+1 {
				copy(msg[chainHdr+j*m:], block(a, f))
			}
			return msg
		},
		func(a *arm, k int) []byte { return chainMsg(count(a, a.d, k) * m) },
		func(a *arm, k int, v []byte) {
			held, step = v, 2<<k
			copy(recv, v[:m])
		})
}
