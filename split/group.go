package split

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// Group is one rank's view of a communicator's membership: who the members
// are, by rank, as transport addresses.
type Group interface {
	// Size returns the number of members; Rank this rank's rank.
	Size() int
	Rank() int
	// Addr returns the transport address of rank r when this rank holds
	// it (always for a Table; for a distributed table, the rows it owns,
	// its column and what it has cached).
	Addr(r int) (int32, bool)
	// Resolve sets out[i] to the address of ranks[i], asking the owners of
	// the rows this rank does not hold, all at once (one lookup round).
	Resolve(ctx context.Context, ranks []int, out []int32) error
	// Members returns every member's address in rank order when this rank
	// holds them all, else nil. The slice must not be modified.
	Members() []int32
	// Bytes returns the memory the representation holds.
	Bytes() int
	// Kind names the representation ("table", "distributed:16").
	Kind() string
}

// Table is the replicated representation: every member holds every
// member's address.
type Table struct {
	rank  int
	addrs []int32
}

// NewTable returns rank's view of the group whose members' addresses in
// rank order are addrs (kept, not copied).
func NewTable(rank int, addrs []int32) *Table { return &Table{rank: rank, addrs: addrs} }

// Size implements Group.
func (t *Table) Size() int { return len(t.addrs) }

// Rank implements Group.
func (t *Table) Rank() int { return t.rank }

// Addr implements Group.
func (t *Table) Addr(r int) (int32, bool) {
	if r < 0 || r >= len(t.addrs) {
		return 0, false
	}
	return t.addrs[r], true
}

// Resolve implements Group; a table answers locally.
func (t *Table) Resolve(_ context.Context, ranks []int, out []int32) error {
	for i, r := range ranks {
		if r < 0 || r >= len(t.addrs) {
			return fmt.Errorf("%w: rank %d out of range [0,%d)", errs.InvalidArgument, r, len(t.addrs))
		}
		out[i] = t.addrs[r]
	}
	return nil
}

// Members implements Group.
func (t *Table) Members() []int32 { return t.addrs }

// Bytes implements Group.
func (t *Table) Bytes() int { return 4 * len(t.addrs) }

// Kind implements Group.
func (t *Table) Kind() string { return "table" }
