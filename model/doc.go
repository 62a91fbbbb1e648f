// Package model predicts the runtime, energy and memory of collective
// algorithms analytically: by counting what their schedules do, and by the
// closed forms of the papers.
//
// # Counting and critical paths
//
// Count builds every rank's schedule of a schedule.Generator, one rank at a
// time and one round at a time (never a whole schedule), and counts
// messages, bytes sent and received, bytes reduced and copied, and rounds:
// per rank (summed and extremes in Counts.Total, Max, Min) and along the
// round-synchronous critical path (the Crit fields: for each round index the
// busiest rank, summed over rounds). From the counts:
//
//	AlphaBetaGamma  α·messages + β·(bytes + copies) + γ·reduced, round-synchronous
//	LogGP           Hoefler–Moor's LogGP accounting (L + 2o + sG a message, o ≥ g), round-synchronous
//	Energy          e·messages + E·bytes (all ranks) + static power · P · time
//	Memory          d · (messages sent by the busiest process)
//
// CriticalPath evaluates the same schedules along their dependencies
// instead: each rank's rounds start when its previous round has ended, and
// a message completes when both ranks' ports have carried it. It streams all
// ranks at once (iter.Pull per rank, one round each in memory) and matches
// messages as the simulator does.
//
// The round-synchronous view is cheap and exact for algorithms whose ranks
// move in lockstep, but rounds are local in the schedule IR: a rank whose
// first message arrives at global step v still calls that round its round
// 0, and the builder drops empty rounds. So the round-synchronous view
// under-estimates pipelines (rank v of a chain waits v steps for its first
// segment) and sparse schedules (a ring allreduce of fewer elements than
// ranks: most blocks are empty and most rounds dropped, yet each non-empty
// block still crosses the ring hop by hop — 6α counted against 126α on 64
// ranks), and can over-estimate when ranks in different phases share a
// round index. CriticalPath charges all of these along their real chains.
//
// EvaluateGenerator runs Count and CriticalPath on any schedules in one
// pass and returns a Row: times, energy and memory. The package knows
// schedules, not algorithms; package workload's Evaluate does this for
// every registered algorithm of a collective and sets the rows beside the
// algorithm's registered α-β-γ cost (algorithms.Info.Cost) and the
// Hoefler–Moor closed form when one models it: the rows of a runtime,
// energy and memory trade-off as in Hoefler and Moor's Fig. 5.
//
// Machine parameters (Params) come from presets (ParamsByName: infiniband,
// curie, bgp, inprocess, each documented with its source) or a JSON file
// (LoadParams, OpenParams).
//
// # Evaluations against the registered costs
//
// On a crossbar, with a count the ranks divide evenly and not zero (the
// registered costs charge the start-ups of an empty call whose schedule
// sends nothing), CriticalPath reproduces the α, β and γ terms of
// Info.Cost exactly (β plus the copies the schedule does, see below) for
//
//	allgather      bruck, linear, neighbor-exchange, recursive-doubling, ring
//	allreduce      allgather-reduce, rabenseifner, recursive-doubling, reduce-bcast, ring
//	alltoall       bruck, direct, pairwise
//	barrier        dissemination, recursive-doubling, tree
//	bcast          binomial, linear, scatter-allgather, scatter-ring-allgather,
//	               pipeline (when the segments are full)
//	gather         binomial, linear
//	reduce         binomial, linear, parallel-ring, radix-k
//	reducescatter  pairwise, reduce-scatter, ring
//	scatter        linear
//
// and, for a power of two ranks, reduce/rabenseifner,
// reducescatter/recursive-halving and scan/recursive-doubling. The
// round-synchronous counts (CritMsgs, CritBytes, CritReduced) reproduce
// them for the same list except bcast/pipeline, barrier/tree,
// bcast/scatter-allgather, and allreduce/rabenseifner,
// reducescatter/reduce-scatter and bcast/scatter-ring-allgather off powers
// of two, but in addition for scatter/binomial on powers of two.
//
// Elsewhere the registered form approximates the schedule:
//
//   - bcast/binary, split-binary and in-order-binary reduce charge every
//     pipeline step with two messages, also where a node has one child, and
//     bcast/two-tree one step more than its schedule needs unless P is a
//     power of two; all pipelines charge a short last segment in full. With
//     full segments CriticalPath gives the registered bcast/pipeline,
//     reduce/pipeline (α and γ; its per-segment copies lie on the chain) and,
//     for a power of two ranks, bcast/two-tree.
//   - bcast/k-nomial and reduce/k-nomial: ⌈log_k P⌉(k−1) charges k−1
//     children on every level, also on levels that have fewer when P is not
//     a power of k.
//   - scan/butterfly, scan/linear and the exscan algorithms: the registered
//     terms are approximations ("at most", "≈"); scatter/binomial and the
//     folds of reduce/rabenseifner and reducescatter/recursive-halving off
//     powers of two move more bytes along the critical path than the
//     registered ((P−1)/P)·N.
//
// The registered Copy terms are not reproduced: most registered costs leave
// out the copy of a rank's own block or input into the receive buffer that
// the schedules do (allgather, gather, scatter, reduce, alltoall, scan),
// allgather/recursive-doubling registers the N(1+1/P) copies of Bruck's
// algorithm although its schedule copies only its own block, and
// alltoall/bruck registers the pack and unpack copies without the own
// block. AlphaBetaGamma and CriticalPath charge the copies the schedule
// does, at β.
//
// # Hoefler and Moor's closed forms
//
// The LogGP runtime T, dynamic energy D and memory M of the algorithms of
// Hoefler and Moor's Table 1 (rooted collectives) and Table 2 (unrooted
// collectives) are functions returning an Estimate: FlatTree (FT, F̃T),
// KaryTree (KT), KaryTreePersonal (K̃T), BinomialTree (BT),
// BinomialTreePersonal (B̃T), PipelinedBinaryTree (PBT), DoubleTree (DT),
// SplitBinaryTree (SB, from their text), DirectSend (DS, D̃S), Butterfly
// (BF), ButterflyPersonal (B̃F), and UpDown for the 2×KT, 2×K̃T, 2×PBT
// columns and the 2×BT of their Fig. 5. The personalized pipelined binary
// tree P̃BT is left out: neither its table entry nor its derivation is
// legible in our copy of the paper. HoeflerMoor maps a registered algorithm
// to its form (Mappings lists the table):
//
//	collective  algorithm           form   parameters
//	bcast       linear              FT
//	bcast       binomial            BT
//	bcast       binary              PBT    N = segments of the message
//	bcast       split-binary        SB     (paper: unsegmented)
//	bcast       two-tree            DT     N = segments of half the message
//	reduce      linear              FT     computation free
//	reduce      binomial            BT     computation free
//	reduce      in-order-binary     PBT    N = segments; computation free
//	gather      linear              F~T
//	gather      binomial            B~T
//	scatter     linear              F~T
//	scatter     binomial            B~T
//	allgather   linear              D~S
//	allgather   recursive-doubling  B~F
//	allgather   bruck               B~F
//	alltoall    direct              D~S
//	allreduce   recursive-doubling  BF     computation free
//	allreduce   reduce-bcast        2xBT   computation free
//	allreduce   allgather-reduce    B~F    s = the whole vector
//	barrier     dissemination       BF     s = 0
//	barrier     recursive-doubling  BF     s = 0
//	barrier     tree                2xBT   s = 0
//
// The other registered algorithms (rings, neighbor exchange, pairwise
// exchange, Rabenseifner, k-nomial trees, chain pipelines, scatter-allgather
// broadcasts, scans) have no row in their tables. alltoall/bruck is not
// mapped to B̃F: the form's (P−1)·s bytes are allgather's, while Bruck's
// alltoall moves about (P/2)·s·lg P.
//
// The LogGP time of the schedules (round-synchronous LogGP of the counts;
// CriticalPath's too with G = 0 on powers of two, as it charges (s−1)·G a
// message) equals the form's time for the mapped FT, F̃T, BT, B̃T,
// BF, B̃F and 2×BT algorithms on a power of two ranks (bcast/binomial,
// bcast/linear, gather/linear, scatter/linear and the Bruck forms for any
// P), but for reduce/linear, whose root receives one message a round, in
// rank order, where FT has all of them in one; for D̃S it is one o higher,
// because Hoefler and Moor drop the receive overhead of the last message
// there but not in FT. The pipelined forms (PBT, DT, SB) assume
// other trees and segmentations than the registered algorithms and are
// estimates only. The dynamic energy of the counted messages equals the
// form's D for the mapped trees and butterflies on a power of two ranks,
// except SB and DT. Memory follows their definition, descriptors of sent
// messages only: for the reduction and gather direction of a tree the
// forms' M (derived for broadcast and scatter, where the root sends) counts
// the root's P−1 or lg P messages, which there are receives, while Memory
// counts each sender's one.
//
// # Marendic et al.'s Table 3 and the segment count
//
// MarendicBinomialTree, MarendicButterfly, MarendicParallelRing,
// MarendicRadixK, MarendicLinearPipeline, MarendicTwoTree and
// MarendicClairvoyant are the rows of their Table 3 (reduction time in the
// α-β-γ model, n = ⌈log2 P⌉); Marendic maps the registered reduce
// algorithms binomial, rabenseifner (butterfly), parallel-ring, radix-k,
// linear-pipeline and two-tree to them (the segmented rows at the optimal
// segment count). On a power of two ranks the registered costs of
// rabenseifner, parallel-ring and radix-k are their rows, and so is
// linear-pipeline's at the optimal segment count; two-tree's row is a
// bound of another shape (see MarendicTwoTree). NOpt is their optimal
// number of segments √((n−1)m(β+γ)/α), at which their Eq. (1) equals the
// Clairvoyant row.
//
// # Broadcast lower bound
//
// BcastLowerBound is the bound (√(α·log2(p−1)) + √(β·s))² of Heath and
// Solomonik's notes (sec. 5.2.3) on broadcasts with a fixed packet size,
// with p = 2 taken as one message, α + βs. Its derivation has the root send
// every packet once; protocols whose root sends data repeatedly, such as the
// binomial tree, can beat it for short messages (see its documentation).
package model
