package schedule

import (
	"errors"
	"strings"
	"testing"
)

func TestSpecCheckRejects(t *testing.T) {
	sq := func(v int) [][]int { return [][]int{{v, v}, {v, v}} }
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"unknown collective", Spec{Coll: NumCollectives, Size: 2}, "unknown collective"},
		{"zero size", Spec{Coll: Allreduce, Size: 0}, "size 0"},
		{"negative size", Spec{Coll: Barrier, Size: -3}, "size -3"},
		{"negative count", Spec{Coll: Allreduce, Size: 2, Count: -1}, "negative count"},
		{"negative root", Spec{Coll: Bcast, Size: 4, Root: -1, Count: 1}, "root -1 out of range"},
		{"root = size", Spec{Coll: Reduce, Size: 4, Root: 4, Count: 1}, "root 4 out of range"},
		{"root of scatterv", Spec{Coll: Scatterv, Size: 2, Root: 9, Counts: []int{1, 1}}, "out of range"},
		{"counts missing", Spec{Coll: Gatherv, Size: 3}, "0 counts for 3 ranks"},
		{"counts too long", Spec{Coll: Allgatherv, Size: 2, Counts: []int{1, 2, 3}}, "3 counts for 2 ranks"},
		{"negative block", Spec{Coll: ReduceScatter, Size: 2, Counts: []int{1, -2}}, "negative count -2 for rank 1"},
		{"displs wrong length", Spec{Coll: Gatherv, Size: 2, Counts: []int{1, 1}, Displs: []int{0}}, "1 displacements for 2 ranks"},
		{"negative displacement", Spec{Coll: Scatterv, Size: 2, Counts: []int{1, 1}, Displs: []int{0, -1}}, "negative displacement"},
		{"overlapping displacements", Spec{Coll: Allgatherv, Size: 3, Counts: []int{2, 2, 1}, Displs: []int{0, 1, 5}}, "overlap"},
		{"overlap out of order", Spec{Coll: Gatherv, Size: 3, Counts: []int{3, 1, 1}, Displs: []int{4, 9, 6}}, "ranks 0 and 2 overlap"},
		{"displs for reducescatterv", Spec{Coll: ReduceScatter, Size: 2, Counts: []int{1, 1}, Displs: []int{0, 1}}, "not used"},
		{"matrix rows", Spec{Coll: Alltoallv, Size: 3, Matrix: sq(1)}, "2 rows for 3 ranks"},
		{"matrix row length", Spec{Coll: Alltoallv, Size: 2, Matrix: [][]int{{1, 1}, {1}}}, "row 1 has 1 entries"},
		{"matrix negative", Spec{Coll: Alltoallv, Size: 2, Matrix: [][]int{{1, 1}, {1, -1}}}, "negative count in row 1"},
		{"alltoallv send overlap", Spec{Coll: Alltoallv, Size: 2, Matrix: sq(2), SDispls: [][]int{{0, 1}, {0, 2}}}, "rank 0 send"},
		{"alltoallv recv overlap", Spec{Coll: Alltoallv, Size: 2, Matrix: sq(2), RDispls: [][]int{{0, 2}, {3, 2}}}, "rank 1 recv"},
	}
	for _, c := range cases {
		err := c.spec.Check()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrSpec mentioning %q", c.name, err, c.want)
		}
		// Verify refuses the spec before generating anything.
		gen := func(b *Builder) { t.Errorf("%s: generator called", c.name) }
		if err := Verify(&c.spec, gen, Options{}); !errors.Is(err, ErrSpec) || errors.Is(err, ErrVerify) {
			t.Errorf("%s: Verify: %v, want ErrSpec only", c.name, err)
		}
	}
}

func TestSpecCheckAccepts(t *testing.T) {
	for _, s := range []Spec{
		{Coll: Barrier, Size: 1},
		{Coll: Bcast, Size: 3, Root: 2},
		{Coll: Gatherv, Size: 3, Counts: []int{0, 0, 0}},
		// Zero-length blocks may share an offset; gaps are allowed.
		{Coll: Allgatherv, Size: 3, Counts: []int{2, 0, 1}, Displs: []int{0, 0, 5}},
		// Root is ignored by collectives without one.
		{Coll: Allreduce, Size: 2, Root: 7, Count: 3},
		{Coll: Alltoallv, Size: 2, Matrix: [][]int{{1, 0}, {2, 3}}, RDispls: [][]int{{4, 0}, {0, 5}}},
	} {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestSpecBufLens(t *testing.T) {
	cases := []struct {
		spec       Spec
		rank       int
		send, recv int
	}{
		{Spec{Coll: Allgather, Size: 4, Count: 3}, 1, 3, 12},
		{Spec{Coll: Allgather, Size: 4, Count: 3, InPlace: true}, 1, 0, 12},
		{Spec{Coll: Gather, Size: 4, Root: 2, Count: 3, InPlace: true}, 1, 3, 0},
		{Spec{Coll: Gather, Size: 4, Root: 2, Count: 3, InPlace: true}, 2, 0, 12},
		{Spec{Coll: Scatter, Size: 4, Root: 0, Count: 2, InPlace: true}, 0, 8, 0},
		{Spec{Coll: ReduceScatterBlock, Size: 3, Count: 2, InPlace: true}, 0, 0, 6},
		{Spec{Coll: Alltoall, Size: 3, Count: 2}, 2, 6, 6},
		{Spec{Coll: Exscan, Size: 3, Count: 5, InPlace: true}, 0, 0, 5},
		{Spec{Coll: Gatherv, Size: 2, Root: 0, Counts: []int{2, 1}, Displs: []int{3, 0}}, 0, 2, 5},
		{Spec{Coll: Alltoallv, Size: 2, Matrix: [][]int{{1, 2}, {3, 4}}}, 1, 7, 6},
		{Spec{Coll: Barrier, Size: 5}, 3, 0, 0},
	}
	for _, c := range cases {
		s, r := c.spec.BufLens(c.rank)
		if s != c.send || r != c.recv {
			t.Errorf("%s rank %d in place %v: BufLens = %d, %d; want %d, %d",
				c.spec.Coll, c.rank, c.spec.InPlace, s, r, c.send, c.recv)
		}
	}
}

func TestParseCollective(t *testing.T) {
	for c := range NumCollectives {
		got, ok := ParseCollective(c.String())
		if !ok || got != c {
			t.Errorf("ParseCollective(%q) = %v, %v", c.String(), got, ok)
		}
	}
	if c, ok := ParseCollective("reduce_scatter"); !ok || c != ReduceScatterBlock {
		t.Errorf("reduce_scatter: %v %v", c, ok)
	}
	if _, ok := ParseCollective("allreduce "); ok {
		t.Error("accepted a name with a trailing space")
	}
}

// TestSpecCheckMalformedDispls pins a bug: Check indexes SDispls and RDispls
// without checking their shape, so malformed ones panic instead of failing
// with ErrSpec.
func TestSpecCheckMalformedDispls(t *testing.T) {
	sq := [][]int{{1, 1}, {1, 1}}
	for _, s := range []Spec{
		{Coll: Alltoallv, Size: 2, Matrix: sq, SDispls: [][]int{{0, 1}}},
		{Coll: Alltoallv, Size: 2, Matrix: sq, RDispls: [][]int{{0, 1}, {0}}},
	} {
		if err := s.Check(); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: %v, want ErrSpec", s, err)
		}
	}
}
