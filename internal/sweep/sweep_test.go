package sweep

import (
	"slices"
	"testing"
)

func TestMore(t *testing.T) {
	normal := []int{1, 2, 3}
	got := More(normal, 4, 5)
	want := []int{1, 2, 3}
	if Long {
		want = []int{1, 2, 3, 4, 5}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("More = %v, want %v (Long=%v)", got, want, Long)
	}
	if !slices.Equal(normal, []int{1, 2, 3}) {
		t.Fatalf("More changed its argument: %v", normal)
	}
}
