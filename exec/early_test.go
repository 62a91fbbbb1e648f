package exec

import (
	"slices"
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

// TestAnnounces: a receive is announced when this rank has sent the peer
// nothing in the call before it or in its round, once per peer.
func TestAnnounces(t *testing.T) {
	op := func(k schedule.Kind, peer int) schedule.Op { return schedule.Op{Kind: k, Peer: peer} }
	send := func(p int) schedule.Op { return op(schedule.OpSend, p) }
	recv := func(p int) schedule.Op { return op(schedule.OpRecv, p) }
	local := schedule.Op{Kind: schedule.OpCopy}
	rounds := []schedule.Round{
		{send(1), recv(2), local},                        // 2: never sent to
		{recv(1), recv(2), op(schedule.OpRecvReduce, 3)}, // 1: sent to; 2: announced; 3: new
		{recv(5), send(5)},                               // 5: sent to in the same round
		{send(6), recv(7)},
	}
	got := announces(rounds)
	want := []bool{false, true, false, false, true, false, false, false, true}
	if !slices.Equal(got, want) {
		t.Fatalf("announces = %v, want %v", got, want)
	}
}
