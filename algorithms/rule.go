package algorithms

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/scoll/scoll/schedule"
)

// How a call runs: every way is a registry entry (Info). Most entries are
// message schedules (Path Messages); the others are native paths of a
// transport or a communicator (a shared-memory exchange, an in-process
// meeting, the chain collectives). A native entry has a Rule that says,
// from the call's parameters and the capabilities its transport,
// communicator and form offer (Caps), whether it runs natively and whether
// the default choice takes it; where it cannot run natively, its Build is
// the stand-in message schedule of the same data movement, which also is
// what the verifier proves and the simulators and cost models replay.
// Select evaluates the rules first and the costs of the message schedules
// after, so the library's planner and the simulators' default choice are
// one function of (Params, Machine, Caps).

// Cap is one capability a native path may need of a call.
type Cap uint8

const (
	// CapExchange: the transport exchanges small inputs through slots
	// every rank reads (transport.Exchanger); Caps.ExchangeBytes is the
	// largest input per rank a slot holds.
	CapExchange Cap = 1 << iota
	// CapMeet: the transport meets its ranks in shared memory
	// (transport.Meeter, with every member's address known).
	CapMeet
	// CapChain: the communicator keeps its members as a chain (Moody et
	// al.) and has not learnt them: a rank knows its neighbours only.
	CapChain
	// CapOversubscribed: the ranks outnumber the CPUs they share (more
	// in-process ranks than GOMAXPROCS), so waiting ranks park.
	CapOversubscribed
	// CapBlocking: the call is blocking (not I* or *Init): a native path
	// may hold the rank for the whole call.
	CapBlocking

	numCaps = iota
)

// capNames are the capabilities' names in words, in bit order.
var capNames = [numCaps]string{"a transport exchange", "a transport meeting", "a chain communicator",
	"more ranks than CPUs", "a blocking call"}

// String lists the capabilities in words, joined by "and" ("-" for none).
func (c Cap) String() string {
	var s []string
	for i, name := range capNames {
		if c&(1<<i) != 0 {
			s = append(s, name)
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, " and ")
}

// Caps are what a call's transport, communicator and form offer the native
// paths. The zero Caps (a non-blocking call over plain messages) offers
// nothing: every entry runs its message schedule.
type Caps struct {
	// Has is the set of capabilities.
	Has Cap
	// ExchangeBytes is the largest input per rank the exchange's slots
	// hold, with CapExchange.
	ExchangeBytes int
}

// With returns c with the capabilities more.
func (c Caps) With(more Cap) Caps {
	c.Has |= more
	return c
}

// Take is how an entry runs a call (Info.Takes).
type Take uint8

const (
	// StandIn: the entry runs its message schedule (Build).
	StandIn Take = iota
	// Native: the entry runs natively when it is named (WithAlgorithm, an
	// override or a tuning file).
	Native
	// Default: the entry runs natively and the default choice takes it.
	Default
)

// Measure is what a Rule's byte bound measures.
type Measure uint8

const (
	// Input: the call's input per rank (n bytes).
	Input Measure = iota
	// Read: the bytes one rank reads from the others in an exchange: all P
	// inputs (P·n) for allreduce, reduce and allgather, the root's n for
	// bcast, none for barrier.
	Read
)

// Bytes returns what m measures for call p.
func (m Measure) Bytes(p *Params) int {
	n := p.bytesInt(p.Count)
	if m == Input {
		return n
	}
	switch p.Coll {
	case schedule.Barrier:
		return 0
	case schedule.Bcast:
		return n
	}
	return n * p.Size
}

// String describes m in the words of the algorithm table.
func (m Measure) String() string {
	if m == Read {
		return "a rank reads P·n (bcast n, barrier 0)"
	}
	return "n"
}

// A Rule says when a native path runs natively and when the default choice
// takes it. It is data, so that the text of scoll algorithms (Rule.String)
// and the planner's decision (Rule.Takes) come from the same fields.
type Rule struct {
	// Needs are the capabilities without which the path runs its stand-in
	// schedule.
	Needs Cap
	// FitSlots: the input per rank must also fit the exchange's slots
	// (Caps.ExchangeBytes).
	FitSlots bool
	// Prefers are the further capabilities with which the default choice
	// takes the path.
	Prefers Cap
	// MaxBytes bounds, for the default choice, what Measure measures (0:
	// no bound).
	MaxBytes int
	Measure  Measure
}

// Takes returns how the path runs call p under c.
func (r *Rule) Takes(p *Params, c Caps) Take {
	if c.Has&r.Needs != r.Needs || r.FitSlots && p.bytesInt(p.Count) > c.ExchangeBytes {
		return StandIn
	}
	if c.Has&r.Prefers != r.Prefers || r.MaxBytes > 0 && r.Measure.Bytes(p) > r.MaxBytes {
		return Native
	}
	return Default
}

// String states the rule in words: when the path runs natively, when the
// default takes it, and that it runs its messages otherwise.
func (r *Rule) String() string {
	s := "native with " + r.Needs.String()
	if r.FitSlots {
		s += " whose slots hold the input"
	}
	s += "; the default choice"
	if r.Prefers != 0 || r.MaxBytes > 0 {
		s += " there"
	}
	var when []string
	if r.Prefers != 0 {
		when = append(when, "with "+r.Prefers.String())
	}
	if r.MaxBytes > 0 {
		when = append(when, fmt.Sprintf("when %s ≤ %s", r.Measure, sizeWords(r.MaxBytes)))
	}
	if len(when) > 0 {
		s += " " + strings.Join(when, " ")
	}
	return s + "; elsewhere its message schedule"
}

// sizeWords writes a byte count as the tables do (2048: "2 KiB").
func sizeWords(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// Takes returns how in runs call p under c: StandIn for a message schedule
// and for a native path its Rule does not let run.
func (in *Info) Takes(p *Params, c Caps) Take {
	if in.Path == Messages || in.Rule == nil {
		return StandIn
	}
	return in.Rule.Takes(p, c)
}

// When states when a native path runs natively and when the default choice
// takes it ("" for a message schedule, which the default choice takes by
// cost). It is the Rule in words.
func (in *Info) When() string {
	if in.Path == Messages || in.Rule == nil {
		return ""
	}
	return in.Rule.String()
}

// RunsAs returns the path a call p under c runs on when in runs it: in's
// own path where its rule lets it run natively, else Messages.
func (in *Info) RunsAs(p *Params, c Caps) Path {
	if in.Takes(p, c) == StandIn {
		return Messages
	}
	return in.Path
}

// capFlags are the capabilities' names in ParseCaps and Caps.String, in bit
// order.
var capFlags = [numCaps]string{"exchange", "meet", "chain", "oversubscribed", "blocking"}

// String writes c as ParseCaps reads it: the capabilities' names, the
// exchange's slot size after "exchange=", comma-separated; "none" for none.
func (c Caps) String() string {
	var s []string
	for i, name := range capFlags {
		if c.Has&(1<<i) == 0 {
			continue
		}
		if Cap(1<<i) == CapExchange {
			name += "=" + strconv.Itoa(c.ExchangeBytes)
		}
		s = append(s, name)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// ParseCaps reads capabilities as Caps.String writes them: a
// comma-separated list of exchange=<bytes> (a size like 4K too), meet,
// chain, oversubscribed and blocking, or none.
func ParseCaps(s string) (Caps, error) {
	var c Caps
	if strings.TrimSpace(s) == "none" {
		return c, nil
	}
	for _, f := range strings.Split(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(f), "=")
		i := slices.Index(capFlags[:], name)
		if i < 0 {
			return Caps{}, fmt.Errorf("unknown capability %q (have %s, or none)", name, strings.Join(capFlags[:], ", "))
		}
		bit := Cap(1 << i)
		if hasVal != (bit == CapExchange) {
			return Caps{}, fmt.Errorf("capability %q: only exchange takes a value (exchange=<bytes per rank>)", f)
		}
		if bit == CapExchange {
			n, err := ParseBytes(val)
			if err != nil || n < 0 {
				return Caps{}, fmt.Errorf("capability %q: want exchange=<bytes per rank>", f)
			}
			c.ExchangeBytes = n
		}
		c.Has |= bit
	}
	return c, nil
}
