package exec

import (
	"testing"

	"github.com/scoll/scoll/schedule"
)

func reg(space schedule.Space, off, n int) schedule.Region {
	return schedule.Region{Space: space, Off: off, Len: n}
}

// TestEarlyLocal: local operations run while messages are in flight only
// when they touch nothing the messages use, and only as a prefix.
func TestEarlyLocal(t *testing.T) {
	send, recv := schedule.SendSpace, schedule.RecvSpace
	copyOp := func(dst, src schedule.Region) schedule.Op {
		return schedule.Op{Kind: schedule.OpCopy, Dst: dst, Src: src}
	}
	sendOp := func(src schedule.Region) schedule.Op { return schedule.Op{Kind: schedule.OpSend, Peer: 1, Src: src} }
	recvOp := func(dst schedule.Region) schedule.Op { return schedule.Op{Kind: schedule.OpRecv, Peer: 1, Dst: dst} }
	for _, c := range []struct {
		name  string
		round schedule.Round
		want  int
	}{
		{"allgather own block", schedule.Round{sendOp(reg(send, 0, 8)), recvOp(reg(recv, 8, 8)), copyOp(reg(recv, 0, 8), reg(send, 0, 8))}, 1},
		{"reads the receive", schedule.Round{recvOp(reg(recv, 8, 8)), copyOp(reg(recv, 0, 8), reg(recv, 8, 8))}, 0},
		{"writes the receive", schedule.Round{recvOp(reg(recv, 8, 8)), copyOp(reg(recv, 4, 8), reg(send, 0, 8))}, 0},
		{"writes what is sent", schedule.Round{sendOp(reg(recv, 0, 8)), copyOp(reg(recv, 0, 8), reg(send, 0, 8))}, 0},
		{"reads what is sent", schedule.Round{sendOp(reg(send, 0, 8)), copyOp(reg(recv, 0, 8), reg(send, 0, 8))}, 1},
		{"only a prefix", schedule.Round{recvOp(reg(recv, 8, 8)), copyOp(reg(recv, 0, 8), reg(recv, 8, 8)), copyOp(reg(recv, 16, 8), reg(send, 0, 8))}, 0},
		{"no messages", schedule.Round{copyOp(reg(recv, 0, 8), reg(send, 0, 8))}, 0},
	} {
		if got := earlyLocal(c.round); got != c.want {
			t.Errorf("%s: %d early, want %d", c.name, got, c.want)
		}
	}
}
