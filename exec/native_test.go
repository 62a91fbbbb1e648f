package exec

import (
	"slices"
	"testing"

	"github.com/scoll/scoll/schedule"
)

// orderKernel is a non-commutative operation on 1-byte elements,
// d = 3d + s, so that the order in which operands combine shows.
func orderKernel() Kernel {
	return Kernel{ElemSize: 1, Reduce: func(dst, src []byte) {
		for i := range dst {
			dst[i] = dst[i]*3 + src[i]
		}
	}}
}

// TestExchangeData checks what ranks publish and compute in an exchange
// against a reference fold in rank order, in place and not.
func TestExchangeData(t *testing.T) {
	const p, n = 4, 3
	k := orderKernel()
	input := func(r int) []byte { return []byte{byte(r + 1), byte(2*r + 1), byte(r)} }
	want := input(0)
	for r := 1; r < p; r++ {
		k.Reduce(want, input(r))
	}
	for _, inPlace := range []bool{false, true} {
		data := make([][]byte, p)
		recvs := make([][]byte, p)
		for r := range p {
			recvs[r] = make([]byte, n)
			send := input(r)
			if inPlace {
				copy(recvs[r], send)
				send = nil
			}
			data[r] = slices.Clone(ExchangeInput(schedule.Allreduce, r, p, 0, send, recvs[r]))
		}
		for r := range p {
			ExchangeResult(schedule.Allreduce, r, p, 0, data, recvs[r], k)
			if !slices.Equal(recvs[r], want) {
				t.Errorf("in place %v: rank %d got %v, want %v", inPlace, r, recvs[r], want)
			}
		}
	}
	// Allgather in place publishes the rank's own block; bcast only the root.
	recv := []byte{0, 0, 7, 8, 0, 0}
	if got := ExchangeInput(schedule.Allgather, 1, 3, 0, nil, recv); !slices.Equal(got, []byte{7, 8}) {
		t.Errorf("in-place allgather publishes %v", got)
	}
	if got := ExchangeInput(schedule.Bcast, 1, 3, 0, nil, recv); got != nil {
		t.Errorf("a bcast leaf publishes %v", got)
	}
	out := make([]byte, 6)
	ExchangeResult(schedule.Allgather, 2, 3, 0, [][]byte{{1, 2}, {3, 4}, {5, 6}}, out, k)
	if !slices.Equal(out, []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("allgather result %v", out)
	}
}

// TestMeetFunc runs a meeting's function on every rank's buffers.
func TestMeetFunc(t *testing.T) {
	const p = 3
	k := orderKernel()
	vals := make([]any, p)
	outs := make([][]byte, p)
	want := []byte{1}
	for r := range p {
		outs[r] = make([]byte, 1)
		vals[r] = MeetArg{In: []byte{byte(r + 1)}, Out: outs[r]}
		if r > 0 {
			k.Reduce(want, []byte{byte(r + 1)})
		}
	}
	if err := MeetFunc(schedule.Allreduce, 0, k)(vals); err != nil {
		t.Fatal(err)
	}
	for r := range p {
		if !slices.Equal(outs[r], want) {
			t.Errorf("allreduce: rank %d got %v, want %v", r, outs[r], want)
		}
	}
	outs[2][0] = 42
	if err := MeetFunc(schedule.Bcast, 2, k)(vals); err != nil {
		t.Fatal(err)
	}
	if outs[0][0] != 42 || outs[1][0] != 42 {
		t.Errorf("bcast from 2: %v %v", outs[0], outs[1])
	}
	if MeetFunc(schedule.Gather, 0, k) != nil {
		t.Error("gather has no meeting")
	}
}
