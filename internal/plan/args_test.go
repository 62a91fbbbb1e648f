package plan

import (
	"errors"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// buf is a buffer of n elements, nil for n < 0.
func buf(n int) Buf {
	if n < 0 {
		return Buf{Nil: true}
	}
	return Buf{Len: n}
}

func TestArgsErrors(t *testing.T) {
	inv, uns := errs.InvalidArgument, errs.Unsupported
	two := []int{2, 2}
	three := []int{2, 2, 2}
	cases := []struct {
		a    Args
		is   error
		want string
	}{
		{Args{Coll: schedule.Bcast, Size: 3, Root: -1}, inv, "root -1 out of range [0,3)"},
		{Args{Coll: schedule.Gatherv, Size: 3, Root: 3}, inv, "root 3 out of range [0,3)"},
		{Args{Coll: schedule.Reduce, Size: 3, Rank: 1, Root: 1, Send: buf(2), Recv: buf(3)}, inv, "len(send)=2 != len(recv)=3 at root"},
		{Args{Coll: schedule.Allreduce, Size: 3, Send: buf(2), Recv: buf(3)}, inv, "len(send)=2 != len(recv)=3"},
		{Args{Coll: schedule.Exscan, Size: 3, Send: buf(4), Recv: buf(3)}, inv, "len(send)=4 != len(recv)=3"},
		{Args{Coll: schedule.Gather, Size: 3, Rank: 2, Root: 2, Send: buf(-1), Recv: buf(7)}, inv, "in place: len(recv)=7 is not a multiple of 3 ranks"},
		{Args{Coll: schedule.Gather, Size: 3, Send: buf(2), Recv: buf(7)}, inv, "len(recv)=7, want 3 ranks × len(send)=2"},
		{Args{Coll: schedule.Scatter, Size: 3, Rank: 1, Root: 1, Send: buf(7), Recv: buf(-1)}, inv, "in place: len(send)=7 is not a multiple of 3 ranks"},
		{Args{Coll: schedule.Scatter, Size: 3, Send: buf(7), Recv: buf(2)}, inv, "len(send)=7, want 3 ranks × len(recv)=2"},
		{Args{Coll: schedule.Allgather, Size: 3, Send: buf(-1), Recv: buf(7)}, inv, "in place: len(recv)=7 is not a multiple of 3 ranks"},
		{Args{Coll: schedule.Allgather, Size: 3, Send: buf(2), Recv: buf(7)}, inv, "len(recv)=7, want 3 ranks × len(send)=2"},
		{Args{Coll: schedule.Alltoall, Size: 3, Send: buf(4), Recv: buf(4)}, inv, "len(recv)=4 is not a multiple of 3 ranks"},
		{Args{Coll: schedule.Alltoall, Size: 3, Send: buf(3), Recv: buf(6)}, inv, "len(send)=3 != len(recv)=6"},
		{Args{Coll: schedule.ReduceScatterBlock, Size: 3, Send: buf(-1), Recv: buf(7)}, inv, "in place: len(recv)=7 is not a multiple of 3 ranks"},
		{Args{Coll: schedule.ReduceScatterBlock, Size: 3, Send: buf(7), Recv: buf(2)}, inv, "len(send)=7, want 3 ranks × len(recv)=2"},
		{Args{Coll: schedule.Gatherv, Size: 3, Send: buf(1), Recv: buf(4), Counts: []int{1, 1}}, inv, "2 counts for 3 ranks"},
		{Args{Coll: schedule.Gatherv, Size: 3, Send: buf(1), Recv: buf(4), Counts: []int{1, -1, 1}}, inv, "negative count -1 for rank 1"},
		{Args{Coll: schedule.Gatherv, Size: 3, Send: buf(1), Recv: buf(4), Counts: []int{1, 1, 1}, Displs: []int{0, 1}}, inv, "2 displacements for 3 ranks"},
		{Args{Coll: schedule.Gatherv, Size: 3, Rank: 1, Root: 1, Send: buf(1), Recv: buf(2), Counts: []int{1, 1, 1}}, inv, "len(recv)=2, blocks need 3"},
		{Args{Coll: schedule.Gatherv, Size: 3, Root: 1, Send: buf(2), Recv: buf(3), Counts: []int{1, 1, 1}}, inv, "len(send)=2, counts[0]=1"},
		{Args{Coll: schedule.Allgatherv, Size: 3, Send: buf(2), Recv: buf(6), Counts: three, Displs: []int{0, 1, 4}}, inv,
			"blocks of ranks 0 and 1 overlap"},
		{Args{Coll: schedule.Scatterv, Size: 3, Send: buf(3), Recv: buf(2), Counts: three}, inv, "len(send)=3, blocks need 6"},
		{Args{Coll: schedule.Scatterv, Size: 3, Rank: 1, Root: 2, Send: buf(6), Recv: buf(3), Counts: three}, inv, "len(recv)=3, counts[1]=2"},
		{Args{Coll: schedule.Alltoallv, Size: 2, Send: buf(-1), Recv: buf(4), Counts: two, RecvCounts: two}, uns, "in-place alltoallv is not supported"},
		{Args{Coll: schedule.Alltoallv, Size: 2, Send: buf(4), Recv: buf(4), Counts: []int{2}, RecvCounts: two}, inv, "1 counts for 2 ranks"},
		{Args{Coll: schedule.Alltoallv, Size: 2, Send: buf(3), Recv: buf(4), Counts: two, RecvCounts: two}, inv, "len(send)=3, blocks need 4"},
		{Args{Coll: schedule.Alltoallv, Size: 2, Send: buf(4), Recv: buf(3), Counts: two, RecvCounts: two}, inv, "len(recv)=3, blocks need 4"},
		{Args{Coll: schedule.Alltoallv, Size: 2, Send: buf(4), Recv: buf(5), Counts: two, RecvCounts: []int{3, 2}}, inv, "rank 0 sends 2 elements to itself but receives 3"},
		{Args{Coll: schedule.ReduceScatter, Size: 3, Send: buf(-1), Recv: buf(5), Counts: three}, inv, "in place: len(recv)=5, want sum(counts)=6"},
		{Args{Coll: schedule.ReduceScatter, Size: 3, Send: buf(5), Recv: buf(2), Counts: three}, inv, "len(send)=5, want sum(counts)=6"},
		{Args{Coll: schedule.ReduceScatter, Size: 3, Rank: 2, Send: buf(6), Recv: buf(3), Counts: three}, inv, "len(recv)=3, counts[2]=2"},
	}
	for _, c := range cases {
		var s schedule.Spec
		_, err := c.a.Check(&s)
		if !errors.Is(err, c.is) {
			t.Errorf("%s %+v: error %v, want %v", c.a.Coll, c.a, err, c.is)
			continue
		}
		if want := c.is.Error() + ": " + c.want; err.Error() != want {
			t.Errorf("%s: error\n %q, want\n %q", c.a.Coll, err, want)
		}
	}
}

func TestArgsSpec(t *testing.T) {
	counts := []int{1, 2, 3}
	cases := []struct {
		name    string
		a       Args
		count   int
		inPlace bool
		use     Use
	}{
		{"bcast", Args{Coll: schedule.Bcast, Size: 3, Root: 1, Send: buf(-1), Recv: buf(5)}, 5, false, Use{true, true}},
		{"allreduce in place", Args{Coll: schedule.Allreduce, Size: 3, Send: buf(-1), Recv: buf(5)}, 5, true, Use{true, true}},
		{"reduce at root in place", Args{Coll: schedule.Reduce, Size: 3, Rank: 1, Root: 1, Send: buf(-1), Recv: buf(5)}, 5, true, Use{true, true}},
		{"reduce elsewhere", Args{Coll: schedule.Reduce, Size: 3, Root: 1, Send: buf(4), Recv: buf(9)}, 4, false, Use{true, false}},
		{"gather at root in place", Args{Coll: schedule.Gather, Size: 3, Send: buf(-1), Recv: buf(6)}, 2, true, Use{true, true}},
		{"gather elsewhere", Args{Coll: schedule.Gather, Size: 3, Rank: 2, Send: buf(2), Recv: buf(1)}, 2, false, Use{true, false}},
		{"scatter at root", Args{Coll: schedule.Scatter, Size: 3, Send: buf(6), Recv: buf(2)}, 2, false, Use{true, true}},
		{"scatter elsewhere", Args{Coll: schedule.Scatter, Size: 3, Rank: 1, Send: buf(1), Recv: buf(2)}, 2, false, Use{false, true}},
		{"allgather in place", Args{Coll: schedule.Allgather, Size: 3, Send: buf(-1), Recv: buf(6)}, 2, true, Use{true, true}},
		{"alltoall", Args{Coll: schedule.Alltoall, Size: 3, Send: buf(6), Recv: buf(6)}, 2, false, Use{true, true}},
		{"reducescatterblock in place", Args{Coll: schedule.ReduceScatterBlock, Size: 3, Send: buf(-1), Recv: buf(6)}, 2, true, Use{true, true}},
		{"reducescatterblock", Args{Coll: schedule.ReduceScatterBlock, Size: 3, Send: buf(6), Recv: buf(2)}, 2, false, Use{true, true}},
		{"gatherv elsewhere", Args{Coll: schedule.Gatherv, Size: 3, Rank: 1, Send: buf(2), Recv: buf(0), Counts: counts}, 0, false, Use{true, false}},
		{"scatterv elsewhere", Args{Coll: schedule.Scatterv, Size: 3, Rank: 2, Send: buf(0), Recv: buf(3), Counts: counts}, 0, false, Use{false, true}},
		{"allgatherv in place", Args{Coll: schedule.Allgatherv, Size: 3, Rank: 2, Send: buf(-1), Recv: buf(6), Counts: counts}, 0, true, Use{true, true}},
		{"reducescatterv", Args{Coll: schedule.ReduceScatter, Size: 3, Rank: 1, Send: buf(6), Recv: buf(2), Counts: counts}, 0, false, Use{true, true}},
		{"barrier", Args{Coll: schedule.Barrier, Size: 3, Send: buf(-1), Recv: buf(-1)}, 0, false, Use{true, true}},
	}
	for _, c := range cases {
		var s schedule.Spec
		use, err := c.a.Check(&s)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if s.Coll != c.a.Coll || s.Size != c.a.Size || s.Count != c.count || s.InPlace != c.inPlace || use != c.use {
			t.Errorf("%s: spec %+v use %+v, want count %d in place %v use %+v", c.name, s, use, c.count, c.inPlace, c.use)
		}
		if err := s.Check(); err != nil && !c.a.Coll.Vector() {
			t.Errorf("%s: spec: %v", c.name, err)
		}
	}
}

func TestArgsAlltoallvMatrix(t *testing.T) {
	// Rank 1 of 3 sends 1, 2, 3 and receives 4, 2, 0 elements.
	a := Args{Coll: schedule.Alltoallv, Size: 3, Rank: 1, Send: buf(6), Recv: buf(6),
		Counts: []int{1, 2, 3}, RecvCounts: []int{4, 2, 0}}
	var s schedule.Spec
	_, err := a.Check(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 4, 0}, {1, 2, 3}, {0, 0, 0}}
	for q := range want {
		for r := range want[q] {
			if s.Matrix[q][r] != want[q][r] {
				t.Fatalf("matrix %v, want %v", s.Matrix, want)
			}
		}
	}
	if s.SDispls[1][2] != 3 || s.RDispls[1][1] != 4 {
		t.Errorf("displacements %v %v: want packed", s.SDispls[1], s.RDispls[1])
	}
}
