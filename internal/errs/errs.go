// Package errs holds scoll's sentinel errors so that every package can wrap
// them without import cycles; package scoll re-exports them.
package errs

import "errors"

// The sentinels. Their texts carry the "scoll:" prefix of the public package.
var (
	InvalidArgument = errors.New("scoll: invalid argument")
	Unsupported     = errors.New("scoll: unsupported")
	PeerFailed      = errors.New("scoll: peer failed")
	Canceled        = errors.New("scoll: canceled")
	Mismatch        = errors.New("scoll: ranks called mismatched collectives")
	Closed          = errors.New("scoll: communicator closed")
)
