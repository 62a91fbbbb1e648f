package errs

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestCallError(t *testing.T) {
	inner := At(3, "Allreduce", fmt.Errorf("%w: len(send)=3 != len(recv)=4", InvalidArgument))
	cause := fmt.Errorf("%w: %w", PeerFailed, inner)
	for _, c := range []struct {
		err  error
		want string
		is   []error
	}{
		{At(2, "Allreduce", fmt.Errorf("%w: root 5", InvalidArgument)), "rank 2: Allreduce: scoll: invalid argument: root 5", []error{InvalidArgument}},
		{At(-1, "Run", fmt.Errorf("%w: 0 ranks", InvalidArgument)), "Run: scoll: invalid argument: 0 ranks", []error{InvalidArgument}},
		{At(0, "Bcast", fmt.Errorf("%w: %w", Canceled, cause)),
			"rank 0: Bcast: scoll: canceled: peer failed: rank 3: Allreduce: invalid argument: len(send)=3 != len(recv)=4",
			[]error{Canceled, PeerFailed, InvalidArgument}},
		{At(1, "Allreduce", &MismatchError{Rank: 1, Other: 0, Theirs: "Bcast"}), "rank 1: Allreduce: scoll: ranks called mismatched collectives: rank 0 called Bcast", []error{Mismatch}},
		{At(1, "Scan", &MismatchError{Rank: -1, Other: -1, Theirs: "Scan", Same: true}),
			"rank 1: Scan: scoll: ranks called mismatched collectives: another rank called Scan with other arguments (count, root, element type, operator, algorithm or options)", []error{Mismatch}},
		{At(1, "Scan", &MismatchError{Seq: 7, Rank: 1, Other: 2}), "rank 1: Scan: scoll: ranks called mismatched collectives: collective #7: rank 2 called it with other arguments than rank 1", []error{Mismatch}},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("error\n %q, want\n %q", got, c.want)
		}
		for _, s := range c.is {
			if !errors.Is(c.err, s) {
				t.Errorf("%v does not match %v", c.err, s)
			}
		}
	}
	if At(1, "X", nil) != nil {
		t.Error("At of nil is not nil")
	}
	if e := At(2, "Split", inner); e != inner {
		t.Errorf("At wrapped a CallError again: %v", e)
	}
	if errors.Is(At(0, "X", fmt.Errorf("%w", context.Canceled)), Canceled) {
		t.Error("a context error matches Canceled without being wrapped so")
	}
}
