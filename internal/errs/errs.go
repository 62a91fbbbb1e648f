// Package errs holds scoll's sentinel errors so that every package can wrap
// them without import cycles; package scoll re-exports them.
//
// Every error of the public API reads
//
//	rank R: Call: scoll: kind: what and why
//
// (CallError): the caller's rank first (left out where no rank is known
// yet), the public name of the call (Allreduce, IAllreduce, AllreduceInit,
// Split, Init, ...), then the sentinel's text, once, and the details.
// Packages below the public API wrap a sentinel with the details only
// ("%w: len(send)=3 != len(recv)=4"), never a collective's or an internal
// path's name: the public API adds the rank and the call's name (At).
package errs

import (
	"errors"
	"fmt"
	"strings"
)

// The sentinels. Their texts carry the "scoll:" prefix of the public package.
var (
	InvalidArgument = errors.New("scoll: invalid argument")
	Unsupported     = errors.New("scoll: unsupported")
	PeerFailed      = errors.New("scoll: peer failed")
	Canceled        = errors.New("scoll: canceled")
	Mismatch        = errors.New("scoll: ranks called mismatched collectives")
	Closed          = errors.New("scoll: communicator closed")
)

// prefix is the package prefix every sentinel's text starts with.
const prefix = "scoll: "

// CallError is an error of a public call on one rank. Its text is "rank R:
// Call: " and Err's text with the "scoll: " prefix once (Once).
type CallError struct {
	// Rank is the caller's rank (-1: not known, and not shown).
	Rank int
	// Call is the public name of the call ("Allreduce", "IBcast",
	// "ReduceInit", "Split", "Init", ...).
	Call string
	// Err is what went wrong; it wraps a sentinel.
	Err error
	// Path is, for debugging, the registry entry and the path the call
	// ran on ("exchange/transport exchange", "ring/messages"; "" when not
	// known). It is not part of the text.
	Path string
}

func (e *CallError) Error() string {
	var b strings.Builder
	if e.Rank >= 0 {
		fmt.Fprintf(&b, "rank %d: ", e.Rank)
	}
	if e.Call != "" {
		b.WriteString(e.Call)
		b.WriteString(": ")
	}
	b.WriteString(Once(e.Err.Error()))
	return b.String()
}

func (e *CallError) Unwrap() error { return e.Err }

// At returns err as the error of call name on rank (rank < 0: not known):
// nil for nil, and err itself when it is a *CallError already.
func At(rank int, name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*CallError); ok {
		return err
	}
	return &CallError{Rank: rank, Call: name, Err: err}
}

// Once returns s with the sentinels' "scoll: " prefix at its first
// occurrence only: an error that wraps another rank's error, or a
// sentinel wrapping another ("scoll: canceled: scoll: peer failed: ..."),
// names the package once ("scoll: canceled: peer failed: ...").
func Once(s string) string {
	i := strings.Index(s, prefix)
	if i < 0 {
		return s
	}
	i += len(prefix)
	return s[:i] + strings.ReplaceAll(s[i:], prefix, "")
}

// MismatchError is a mismatch found by comparing two ranks' signatures of
// the same call (the Seq-th collective call of a communicator): rank Rank's
// signature Sig and rank Other's OtherSig (a rank < 0: not known). It wraps
// Mismatch.
//
// The transports fill in the ranks and signatures; the communicator, which
// knows what a signature encodes, fills in Theirs (the public name of the
// collective the other rank called, "" when not known) and Same (whether it
// is the caller's collective, called with other arguments).
type MismatchError struct {
	Seq         uint64
	Rank, Other int
	Sig         uint64
	OtherSig    uint64
	Theirs      string
	Same        bool
}

func (e *MismatchError) Error() string {
	who := "another rank"
	if e.Other >= 0 {
		who = fmt.Sprintf("rank %d", e.Other)
	}
	switch {
	case e.Theirs != "" && e.Same:
		return fmt.Sprintf("%v: %s called %s with other arguments (count, root, element type, operator, algorithm or options)", Mismatch, who, e.Theirs)
	case e.Theirs != "":
		return fmt.Sprintf("%v: %s called %s", Mismatch, who, e.Theirs)
	case e.Rank >= 0:
		return fmt.Sprintf("%v: collective #%d: %s called it with other arguments than rank %d", Mismatch, e.Seq, who, e.Rank)
	}
	return fmt.Sprintf("%v: %s called another collective, or this one with other arguments", Mismatch, who)
}

func (e *MismatchError) Unwrap() error { return Mismatch }
