package scoll

import (
	"context"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/kernels"
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
// "chain" is a registered algorithm of bcast, reduce, allreduce, gather,
// scatter, scan and exscan (scoll algorithms lists it) whose path is the
// chain: it runs natively for blocking calls. On a communicator made with
// WithChainGroup that has not learnt its members it is the default choice
// of those blocking calls (WithoutAlgorithm(ChainAlgorithm) declines it);
// DoubleScan and DoubleExscan always run it. On any other communicator
// (the world, tables, a chain that has learnt its members),
// WithAlgorithm(ChainAlgorithm) makes those blocking calls run it too, the
// communicator seen as a chain of the ranks in order. The non-blocking
// (I*) and persistent (*Init) forms named ChainAlgorithm run its stand-in
// message schedule (the same data messages as a schedule). Arguments are
// checked as the other algorithms check them, with the same errors.
//
// Everything else on a chain communicator works as on any other but first
// resolves the addresses it needs:
//
//   - the other collectives, the non-blocking and persistent forms of every
//     collective, and a blocking call that names another algorithm or
//     declines the chain, learn the members once: one chain allgather of
//     the addresses, ⌈lg n⌉ rounds, after which every rank keeps all n
//     addresses (4n bytes) and later calls use the usual schedules (and no
//     longer the chain algorithms, unless they name ChainAlgorithm).
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
const ChainAlgorithm = algorithms.Chain

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

func doubleScan[T Element](ctx context.Context, c *Comm, send, fromLeft, fromRight []T, op Op, exclusive bool, opts []CallOption) error {
	o := parseOptions(opts)
	k := opFor[T](op)
	name := "DoubleScan"
	if exclusive {
		name = "DoubleExscan"
	}
	return at(c, name, c.core().DoubleScan(ctx, kernels.Bytes(send), kernels.Bytes(fromLeft), kernels.Bytes(fromRight), &k, exclusive, &o))
}
