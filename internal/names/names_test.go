package names

import (
	"errors"
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"ring", "ring", 0}, {"rign", "ring", 1}, {"allredcue", "allreduce", 1},
		{"ring", "rings", 1}, {"ring", "rin", 1}, {"ring", "bing", 1}, {"abc", "", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	colls := []string{"allgather", "allreduce", "alltoall", "barrier", "bcast", "reduce", "reduce-scatter", "scan"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"allredcue", []string{"allreduce"}},
		{"ALLREDUCE", nil}, // the same name is no suggestion
		{"bcats", []string{"bcast"}},
		{"reduce-scat", []string{"reduce-scatter"}},
		{"xyzzy", nil},
		{"red", []string{"reduce", "reduce-scatter"}}, // prefixes after edits
		{"", nil},
	} {
		if got := Suggest(c.name, colls); !slices.Equal(got, c.want) {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSuggestCloserFirst: a name one edit away comes before the names it
// is a prefix of.
func TestSuggestCloserFirst(t *testing.T) {
	valid := []string{"cheng-128", "cheng-2048", "cheng-4096", "cheng-8192", "cheng"}
	if got := Suggest("chen", valid); len(got) == 0 || got[0] != "cheng" {
		t.Errorf("Suggest(chen) = %q, want cheng first", got)
	}
}

func TestUnknownError(t *testing.T) {
	err := error(Unknown("algorithm", "rign", "allreduce", []string{"auto", "ring", "rabenseifner"}))
	want := `unknown algorithm "rign" for allreduce; did you mean "ring"? (valid: auto, ring, rabenseifner)`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	var u *UnknownError
	if !errors.As(err, &u) || u.Name != "rign" {
		t.Errorf("errors.As: %v", u)
	}
	if got, want := Unknown("collective", "zz", "", []string{"bcast"}).Error(), `unknown collective "zz" (valid: bcast)`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
