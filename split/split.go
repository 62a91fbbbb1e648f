// Package split holds scoll's communicator split algorithms and the group
// representations they produce (Sack's thesis, chapter 2).
//
// A split is collective over a parent communicator: every rank brings an
// Entry (its color, its key, its rank in the parent and its transport
// address) and leaves with its new communicator's Group — the ordered
// members of its color, sorted by (key, parent rank) — or with nothing
// when its color is negative (undefined).
//
// The algorithms are ordinary code over the parent's point-to-point layer
// (Conn), not static schedules: how much each rank sends depends on the
// colors and keys. They register in a registry like the collectives' one:
//
//	allgather  every rank gathers every entry (Bruck), keeps its color, sorts
//	           (MPICH, Open MPI): O(n) memory, O(n lg n) time per rank
//	merge      the same gather, each step merging the sorted table received
//	           into the own one (Sack 2.3.1): O(n) time
//	cheng      gather to p sorting ranks, Cheng et al.'s exact splitters,
//	           exchange among the sorters, lg p merge stages, then build the
//	           result (Sack 2.3.1); cheng-M: p = ⌈n/M⌉
//
// The generalized split of Moody, Ahn and de Supinski (2011) takes Items:
// colors and keys of bytes, ordered by comparators, with the options to
// keep the parent's order (NoReorder) or make one group (NoSplit). Its
// algorithms run on the parent seen as a chain (Links: each rank knows
// only its neighbours' addresses, and messages forward addresses to reach
// further, DoubleScan) and can leave the result as a Chain (O(1) memory):
//
//	allgather-chain  allgather along the chain, serial sort
//	gather-scatter   merge during a binomial gather to rank 0, replies
//	                 scattered back down the tree
//	bitonic          Batcher's network for any n along the chain, then the
//	                 finish: boundaries, a segmented double scan and one
//	                 reply to each contributor (Poster)
//	radix            integer colors and keys: chains split by 4 bits at a
//	                 time, most significant first, relinked in order
//	hash, hash64     chains split by hashes of the colors into bins until
//	                 each holds one color; bitonic when reordering
//
// Groups come in two representations: Table (each rank holds every
// member's address) and Distributed (Sack 2.3.2: groups of P' ranks share
// one table, each rank holding n/P' rows and asking the owners of the
// others).
package split

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/names"
)

// Undefined is the color of a rank that joins no new communicator (any
// negative color is).
const Undefined = -1

// Entry is one rank's contribution to a split.
type Entry struct {
	// Color selects the new communicator; negative means none.
	Color int64
	// Key orders the members of a new communicator; ties keep parent order.
	Key int64
	// Rank is the rank in the parent communicator.
	Rank int32
	// Addr is the rank's transport address (its world rank).
	Addr int32
}

// entryBytes is the size of an Entry on the wire (host byte order, as every
// scoll message).
const entryBytes = int(unsafe.Sizeof(Entry{}))

var _ = [1]struct{}{}[entryBytes-24]

// compare orders entries by color, key, then parent rank.
func compare(a, b Entry) int {
	if c := cmp.Compare(a.Color, b.Color); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.Rank, b.Rank)
}

// entryBytesOf views entries as bytes (no copy).
func entryBytesOf(es []Entry) []byte {
	if len(es) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(es))), len(es)*entryBytes)
}

// Send is one message of a round. To is a rank of the parent, or a
// transport address when Direct is set (members of a new communicator
// address each other so before it exists).
type Send struct {
	To, Tag int
	Data    []byte
	Direct  bool
}

// Recv is one receive of a round; Round sets N to the bytes received.
// From is a rank of the parent, or a transport address when Direct is set.
type Recv struct {
	From, Tag int
	Buf       []byte
	N         int
	Direct    bool
}

// Conn is one rank's point-to-point link to the other ranks of the parent
// communicator while a split runs. Ranks are the parent's.
type Conn interface {
	Rank() int
	Size() int
	// Round posts every send and receive and waits until all complete
	// (sends complete when their receiver has taken them). A message
	// longer than its receive buffer is an error. Messages between a pair
	// of ranks with equal tags are received in the order they were sent.
	Round(ctx context.Context, sends []Send, recvs []Recv) error
}

// Options configure a split. The zero value picks defaults.
type Options struct {
	// Algorithm is a registered algorithm's name; "" picks the default.
	Algorithm string
	// Sorters is the number of sorting ranks of cheng (0: the default).
	Sorters int
	// GroupSize is P' of the distributed table: groups of GroupSize ranks
	// share one table. 0 picks the representation by size (DefaultGroup);
	// 1 asks for a replicated table.
	GroupSize int
	// ColorCompare and KeyCompare order colors and keys of a generalized
	// split (nil: bytes.Compare). A custom color comparator may call
	// different byte strings equal, which hashing cannot respect.
	ColorCompare, KeyCompare func(a, b []byte) int
	// NoReorder keeps the parent's order (keys are ignored); NoSplit makes
	// one group of every rank (colors are ignored).
	NoReorder, NoSplit bool
	// Chain asks for the result as a chain (Chain): O(1) memory per rank.
	Chain bool
	// Ints says that the items' colors and keys are IntBytes encodings of
	// integers (Split's), which integer-only algorithms can run on.
	Ints bool
}

// Stats describe one rank's part of a split.
type Stats struct {
	// Messages and Bytes count what this rank sent.
	Messages, Bytes int64
	// Phases are the wall-clock times of the algorithm's phases on this
	// rank, in the order they ran.
	Phases []Phase
	// GroupBytes is the memory the resulting group representation holds.
	GroupBytes int
	// Clock, when set, is read at every phase boundary and each Phase's
	// CPU gets the difference: for example the calling thread's CPU time
	// (call StartClock first).
	Clock func() time.Duration
	cpu   time.Duration
}

// StartClock reads Clock, where the first phase's CPU time starts.
func (s *Stats) StartClock() {
	if s.Clock != nil {
		s.cpu = s.Clock()
	}
}

// Phase is a named span of a split on one rank.
type Phase struct {
	Name string
	Time time.Duration
	// CPU is the phase's Stats.Clock time (zero without a Clock).
	CPU time.Duration
}

// phase adds the time since *t to the named phase and resets *t.
func (s *Stats) phase(name string, t *time.Time) {
	now := time.Now()
	ph := Phase{Name: name, Time: now.Sub(*t)}
	if s.Clock != nil {
		c := s.Clock()
		ph.CPU, s.cpu = c-s.cpu, c
	}
	s.Phases = append(s.Phases, ph)
	*t = now
}

// split records the time since *t as two phases: second took the part of
// it given, first the rest (work interleaved with messages).
func (s *Stats) split(first, second string, part time.Duration, t *time.Time) {
	now := time.Now()
	s.Phases = append(s.Phases, Phase{Name: first, Time: now.Sub(*t) - part}, Phase{Name: second, Time: part})
	*t = now
}

// Info describes a registered split algorithm.
type Info struct {
	Name, Doc, Source string
	// Phases names the phases the algorithm reports in Stats, in order
	// (a rank reports those it runs; "build" is always last).
	Phases []string
	// Run computes this rank's group (nil for an undefined color) from
	// integer colors and keys; nil when the algorithm runs only on Items.
	Run func(ctx context.Context, c Conn, me Entry, o *Options, st *Stats) (*Sorted, error)
	// Items computes this rank's group from colors and keys of bytes;
	// nil when the algorithm runs only on integers (RunItems then hands it
	// integer splits converted back).
	Items func(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error)
	// Refuse, when set, returns why the algorithm cannot run a split with
	// these options (an error wrapping errs.Unsupported), or nil.
	Refuse func(o *Options) error
}

// Refusal returns why the algorithm name cannot run a split with options
// o, or nil: integer-only algorithms refuse colors and keys of bytes and
// comparators; others say for themselves (Info.Refuse). Every rank finds
// the same, before any message.
func Refusal(name string, o *Options) error {
	in, ok := Lookup(name)
	if !ok {
		return nil // Check reports it
	}
	if in.Items == nil && (!o.Ints || o.ColorCompare != nil || o.KeyCompare != nil) {
		return fmt.Errorf("%w: %s sorts integer colors and keys with their natural order only", errs.Unsupported, name)
	}
	if in.Refuse != nil {
		return in.Refuse(o)
	}
	return nil
}

var registry []*Info

// Register adds an algorithm; it panics on a duplicate or malformed entry
// (a programming error caught by every test run).
func Register(in Info) {
	if in.Name == "" || (in.Run == nil && in.Items == nil) || in.Doc == "" || in.Source == "" || in.Name != strings.ToLower(in.Name) {
		panic(fmt.Sprintf("split: bad registration %q", in.Name))
	}
	if _, ok := Lookup(in.Name); ok {
		panic("split: duplicate " + in.Name)
	}
	p := in
	registry = append(registry, &p)
}

// List returns the registered algorithms sorted by name.
func List() []*Info {
	out := slices.Clone(registry)
	slices.SortFunc(out, func(a, b *Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the algorithm called name.
func Lookup(name string) (*Info, bool) {
	for _, in := range registry {
		if in.Name == name {
			return in, true
		}
	}
	return nil, false
}

// Names lists the registered names, sorted.
func Names() []string {
	var out []string
	for _, in := range List() {
		out = append(out, in.Name)
	}
	return out
}

// DefaultAlgorithm is the algorithm a split of n ranks uses without an
// Algorithm option: merge below 4,096 ranks, cheng from there on, where
// the default representation turns distributed (DefaultGroupSize) and only
// cheng builds it without gathering whole tables (merge would hold n
// entries on every rank: n² in all).
func DefaultAlgorithm(n int) string {
	if n < 4096 {
		return "merge"
	}
	return "cheng"
}

// Check validates options for a parent of n ranks; every rank must pass the
// same.
func (o *Options) Check(n int) error {
	if o.Algorithm != "" {
		if _, ok := Lookup(o.Algorithm); !ok {
			return fmt.Errorf("%w: %w", errs.InvalidArgument, names.Unknown("split algorithm", o.Algorithm, "", Names()))
		}
	}
	if o.Sorters < 0 {
		return fmt.Errorf("%w: %d sorters", errs.InvalidArgument, o.Sorters)
	}
	if o.GroupSize < 0 {
		return fmt.Errorf("%w: distributed group of %d ranks", errs.InvalidArgument, o.GroupSize)
	}
	return nil
}

// Result is one rank's outcome of a split.
type Result struct {
	// Group is the rank's new communicator, nil for an undefined color.
	Group Group
	Stats Stats
}

// Run runs the split algorithm o.Algorithm (or the default) on this rank
// and builds the group representation.
func Run(ctx context.Context, c Conn, me Entry, o Options) (*Result, error) {
	if err := o.Check(c.Size()); err != nil {
		return nil, err
	}
	name := o.Algorithm
	if name == "" {
		name = DefaultAlgorithm(c.Size())
	}
	in, _ := Lookup(name)
	if in.Run == nil {
		// An algorithm of generalized splits, on the parent as a chain.
		l, err := LinksOf(ctx, c, me.Addr)
		if err != nil {
			return nil, err
		}
		o.Ints = true
		return RunItems(ctx, c, ItemOf(me), l, Shape{ColorLen: 8, KeyLen: 8}, o)
	}
	res := &Result{}
	s, err := in.Run(ctx, c, me, &o, &res.Stats)
	if err != nil {
		return nil, err
	}
	return res.build(ctx, c, &o, s)
}

// build builds the group representation of s (nil: an undefined color,
// no group) as res's group, timed as the phase "build".
func (res *Result) build(ctx context.Context, c Conn, o *Options, s *Sorted) (*Result, error) {
	if s == nil {
		return res, nil
	}
	start := time.Now()
	g, err := s.build(ctx, c, o, &res.Stats)
	if err != nil {
		return nil, err
	}
	res.Group = g
	res.Stats.phase("build", &start)
	res.Stats.GroupBytes = g.Bytes()
	return res, nil
}

// Sorted is what an algorithm leaves on a rank whose color is defined: its
// new rank and size and its color's members' addresses in new-rank order,
// or the group representation already built.
type Sorted struct {
	Rank, Size int
	table      []int32
	group      Group
	links      *Links // the result as a chain, when an algorithm made one
}

// build makes the group representation: a replicated table, or a
// distributed one when the split asks for groups of more than one rank.
func (s *Sorted) build(ctx context.Context, c Conn, o *Options, st *Stats) (Group, error) {
	if s.group != nil {
		return s.group, nil
	}
	if s.links != nil {
		if o.Chain || (o.GroupSize == 0 && DefaultGroupSize(c.Size()) > 1) {
			return NewChain(*s.links), nil
		}
		// The members' addresses, gathered along the new chain.
		all, err := chainAllgather(ctx, c, st, *s.links, tagChainTable, binary.LittleEndian.AppendUint32(nil, uint32(s.links.Self)))
		if err != nil {
			return nil, err
		}
		s.table = make([]int32, s.Size)
		for i := range s.table {
			s.table[i] = int32(binary.LittleEndian.Uint32(all[4*i:]))
		}
	}
	if o.Chain {
		return NewChain(chainOf(s.Rank, s.table)), nil
	}
	if p := o.GroupFor(c.Size()); p > 1 {
		return DistributedFromTable(s.Rank, s.table, p), nil
	}
	return NewTable(s.Rank, s.table), nil
}

// GroupFor returns P' for a split of a parent of n ranks: the option, or
// DefaultGroupSize(n). 1 means a replicated table.
func (o *Options) GroupFor(n int) int {
	if o.Chain {
		return 1 // a table, cut down to a chain by build
	}
	if o.GroupSize > 0 {
		return o.GroupSize
	}
	return DefaultGroupSize(n)
}

// sortedOf returns the result of a rank whose color's entries, sorted, are
// seg, or nil for an undefined color.
func sortedOf(me Entry, seg []Entry) *Sorted {
	if me.Color < 0 {
		return nil
	}
	return sortedTable(len(seg), me.Rank, func(i int) (int32, int32) { return seg[i].Addr, seg[i].Rank })
}

// sortedTable returns the result of the rank me of a group of n members in
// split order, member i's address and parent rank being member(i).
func sortedTable(n int, me int32, member func(i int) (addr, rank int32)) *Sorted {
	s := &Sorted{Size: n, table: make([]int32, n)}
	for i := range n {
		addr, rank := member(i)
		s.table[i] = addr
		if rank == me {
			s.Rank = i
		}
	}
	return s
}

// colorRange returns the entries of color col in the sorted table.
func colorRange(sorted []Entry, col int64) []Entry {
	lo := sort.Search(len(sorted), func(i int) bool { return sorted[i].Color >= col })
	hi := sort.Search(len(sorted), func(i int) bool { return sorted[i].Color > col })
	return sorted[lo:hi]
}
