package exec

import "github.com/scoll/scoll/schedule"

// The data of the shared-memory paths (the registered algorithms exchange
// and meet), which transports run natively (transport.Exchanger,
// transport.Meeter): what a rank brings and how the results are made.
// Reductions fold the inputs in rank order, lower ranks on the left, so
// results are bitwise equal on every rank and non-commutative operators are
// right.

// ExchangeInput returns what rank publishes in an exchange of coll: its
// input (recv when the call is in place; its own block of recv for an
// in-place allgather), the root's buffer in bcast, nothing in barrier.
func ExchangeInput(coll schedule.Collective, rank, size, root int, send, recv []byte) []byte {
	switch coll {
	case schedule.Allreduce, schedule.Reduce:
		if send == nil {
			return recv // in place
		}
		return send
	case schedule.Bcast:
		if rank == root {
			return recv
		}
	case schedule.Allgather:
		if send == nil { // in place: this rank's block of recv
			n := len(recv) / size
			return recv[rank*n : (rank+1)*n]
		}
		return send
	}
	return nil
}

// ExchangeResult writes rank's result of an exchange of coll into recv
// from data, every rank's published input by rank.
func ExchangeResult(coll schedule.Collective, rank, size, root int, data [][]byte, recv []byte, k Kernel) {
	switch coll {
	case schedule.Allreduce, schedule.Reduce:
		if (coll == schedule.Reduce && rank != root) || len(recv) == 0 {
			return
		}
		copy(recv, data[0])
		for _, d := range data[1:size] {
			k.Reduce(recv, d) // recv holds the lower ranks: left operand
		}
	case schedule.Bcast:
		if rank != root {
			copy(recv, data[root])
		}
	case schedule.Allgather:
		n := len(recv) / size
		for r, d := range data[:size] {
			copy(recv[r*n:(r+1)*n], d)
		}
	}
}

// MeetArg is what a rank brings to a meeting: its input and its result
// buffer.
type MeetArg struct {
	In, Out []byte
}

// MeetFunc returns what the last rank to arrive at a meeting of coll runs
// on every rank's MeetArg (in rank order), or nil when coll has no
// meeting.
func MeetFunc(coll schedule.Collective, root int, k Kernel) func(vals []any) error {
	switch coll {
	case schedule.Barrier:
		return func([]any) error { return nil }
	case schedule.Allreduce, schedule.Reduce:
		return func(vals []any) error {
			acc := append([]byte(nil), vals[0].(MeetArg).In...)
			for _, v := range vals[1:] {
				k.Reduce(acc, v.(MeetArg).In) // acc holds lower ranks: left operand
			}
			if coll == schedule.Reduce {
				copy(vals[root].(MeetArg).Out, acc)
				return nil
			}
			for _, v := range vals {
				copy(v.(MeetArg).Out, acc)
			}
			return nil
		}
	case schedule.Bcast:
		return func(vals []any) error {
			src := vals[root].(MeetArg).Out
			for r, v := range vals {
				if r != root {
					copy(v.(MeetArg).Out, src)
				}
			}
			return nil
		}
	}
	return nil
}
