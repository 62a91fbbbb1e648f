package algorithms

import (
	"strings"
	"testing"

	"github.com/scoll/scoll/schedule"
)

// TestRuleTakes: what the exchange, meeting and chain rules decide, and
// that their words name the numbers their decisions use.
func TestRuleTakes(t *testing.T) {
	slot := Caps{Has: CapExchange, ExchangeBytes: 1024}
	for _, tc := range []struct {
		rule  *Rule
		coll  schedule.Collective
		P, n  int
		caps  Caps
		want  Take
		words string
	}{
		{&ExchangeRule, schedule.Allreduce, 2, 8, slot.With(CapBlocking), Default, "2 KiB"},
		{&ExchangeRule, schedule.Allreduce, 2, 8, slot, StandIn, ""},                             // not blocking
		{&ExchangeRule, schedule.Allreduce, 4, 1024, slot.With(CapBlocking), Native, ""},         // reads 4 KiB
		{&ExchangeRule, schedule.Allreduce, 2, 1025, slot.With(CapBlocking), StandIn, "slots"},   // over the slot
		{&ExchangeRule, schedule.Bcast, 64, 1024, slot.With(CapBlocking), Default, ""},           // a bcast reads n
		{&ExchangeRule, schedule.Barrier, 1000, 0, slot.With(CapBlocking), Default, "barrier 0"}, // reads nothing
		{&MeetRule, schedule.Allreduce, 8, 8, Caps{Has: CapMeet}, Native, "more ranks than CPUs"},
		{&MeetRule, schedule.Allreduce, 8, 8, Caps{Has: CapMeet | CapOversubscribed}, Default, "4 KiB"},
		{&MeetRule, schedule.Allreduce, 8, 8192, Caps{Has: CapMeet | CapOversubscribed}, Native, ""},
		{&ChainRule, schedule.Scan, 8, 8, Caps{Has: CapBlocking}, Native, "a chain communicator"},
		{&ChainRule, schedule.Scan, 8, 8, Caps{Has: CapBlocking | CapChain}, Default, ""},
		{&ChainRule, schedule.Scan, 8, 8, Caps{Has: CapChain}, StandIn, "a blocking call"},
	} {
		p := Params{Spec: schedule.Spec{Coll: tc.coll, Size: tc.P, Count: tc.n}, ElemSize: 1}
		if got := tc.rule.Takes(&p, tc.caps); got != tc.want {
			t.Errorf("%s P=%d n=%d under %s: %d, want %d", tc.coll, tc.P, tc.n, tc.caps, got, tc.want)
		}
		if !strings.Contains(tc.rule.String(), tc.words) {
			t.Errorf("%q does not say %q", tc.rule.String(), tc.words)
		}
	}
}

// TestParseCaps: Caps.String and ParseCaps are each other's inverse, and
// bad lists fail.
func TestParseCaps(t *testing.T) {
	for _, c := range []Caps{{}, {Has: CapBlocking}, {Has: CapExchange | CapMeet | CapBlocking, ExchangeBytes: 4096},
		{Has: CapChain | CapOversubscribed | CapMeet}} {
		got, err := ParseCaps(c.String())
		if err != nil || got != c {
			t.Errorf("%s: %v, %v", c, got, err)
		}
	}
	if c, err := ParseCaps("exchange=2K,blocking"); err != nil || c.ExchangeBytes != 2048 {
		t.Errorf("exchange=2K: %v, %v", c, err)
	}
	for _, bad := range []string{"teleport", "meet=3", "exchange", "exchange=-1", ""} {
		if _, err := ParseCaps(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSelectNative: the default choice takes a native path whose rule
// takes the call before any message schedule, skips excluded and explicit
// entries, and falls back on the cheapest message schedule.
func TestSelectNative(t *testing.T) {
	p := Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: 1}, ElemSize: 8, Commutative: true}
	caps := Caps{Has: CapExchange | CapBlocking, ExchangeBytes: 1024}
	if in := Select(&p, InProcess, caps); in == nil || in.Name != Exchange {
		t.Errorf("small blocking call with an exchange: %v", in)
	}
	in := SelectExcept(&p, InProcess, caps, func(n string) bool { return n == Exchange })
	if in == nil || in.Path != Messages {
		t.Errorf("exchange excluded: %v", in)
	}
	if in := Select(&p, InProcess, Caps{}); in == nil || in.Path != Messages {
		t.Errorf("no capabilities: %v", in)
	}
	chain := Caps{Has: CapChain | CapBlocking | CapExchange, ExchangeBytes: 1024}
	if in := Select(&p, InProcess, chain); in == nil || in.Name != Chain {
		t.Errorf("a chain communicator: %v, want the chain (first in Path order)", in)
	}
}
