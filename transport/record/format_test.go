package record_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/record"
)

// exchange is the trace of testdata/exchange.trace.
var exchange = &record.Trace{Size: 3, Ranks: [][]record.Round{
	{rd(s(1, 4096), r(1, 4096))},
	{rd(r(0, 4096), s(0, 4096)), rd(s(2, 0))},
	{rd(r(1, 0))},
}}

func TestReadFile(t *testing.T) {
	got, err := record.ReadFile("testdata/exchange.trace")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exchange) {
		t.Fatalf("got %v, want %v", got.Ranks, exchange.Ranks)
	}
}

// TestRoundTrip writes traces and reads them back.
func TestRoundTrip(t *testing.T) {
	big := &record.Trace{Size: 4, Ranks: make([][]record.Round, 4)}
	for k := range 5 {
		for i := range 4 {
			big.Ranks[i] = append(big.Ranks[i], rd(s((i+1)%4, int64(k)<<40), r((i+3)%4, int64(k)<<40)))
		}
	}
	for _, tr := range []*record.Trace{exchange, big, {Size: 1, Ranks: [][]record.Round{nil}}} {
		var buf bytes.Buffer
		n, err := tr.WriteTo(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(buf.Len()) {
			t.Errorf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
		}
		got, err := record.Read(&buf)
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(got, tr) {
			t.Fatalf("got %v, want %v", got.Ranks, tr.Ranks)
		}
	}
	var buf bytes.Buffer
	exchange.WriteTo(&buf)
	want := "scoll-trace 1\nranks 3\nrank 0\ns1:4096 r1:4096\nrank 1\nr0:4096 s0:4096\ns2:0\nrank 2\nr1:0\nend\n"
	if buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestBadFiles: every malformed or inconsistent file is an error, never a
// panic.
func TestBadFiles(t *testing.T) {
	const h = "scoll-trace 1\n"
	for _, c := range []struct {
		name, text string
		want       error
	}{
		{"empty", "", record.ErrFormat},
		{"not a trace", "hello\n", record.ErrFormat},
		{"version", "scoll-trace 2\nranks 1\nrank 0\nend\n", record.ErrFormat},
		{"no ranks", h, record.ErrFormat},
		{"zero ranks", h + "ranks 0\nend\n", record.ErrFormat},
		{"too many ranks", h + "ranks 1048577\nrank 0\nend\n", record.ErrFormat},
		{"huge ranks", h + "ranks 99999999999999999999999\nrank 0\nend\n", record.ErrFormat},
		{"negative ranks", h + "ranks -1\nrank 0\nend\n", record.ErrFormat},
		{"no rank line", h + "ranks 1\ns0:1\nend\n", record.ErrFormat},
		{"rank order", h + "ranks 3\nrank 0\nrank 2\nrank 1\nend\n", record.ErrFormat},
		{"rank beyond", h + "ranks 1\nrank 0\nrank 1\nend\n", record.ErrFormat},
		{"missing ranks", h + "ranks 3\nrank 0\nrank 1\nend\n", record.ErrFormat},
		{"truncated", h + "ranks 2\nrank 0\ns1:4\nrank 1\nr0:4\n", record.ErrFormat},
		{"after end", h + "ranks 1\nrank 0\nend\nrank 1\n", record.ErrFormat},
		{"end args", h + "ranks 1\nrank 0\nend now\n", record.ErrFormat},
		{"bad op", h + "ranks 2\nrank 0\nx1:4\nrank 1\nend\n", record.ErrFormat},
		{"no size", h + "ranks 2\nrank 0\ns1\nrank 1\nend\n", record.ErrFormat},
		{"no peer", h + "ranks 2\nrank 0\ns:4\nrank 1\nend\n", record.ErrFormat},
		{"empty size", h + "ranks 2\nrank 0\ns1:\nrank 1\nend\n", record.ErrFormat},
		{"negative size", h + "ranks 2\nrank 0\ns1:-4\nrank 1\nend\n", record.ErrFormat},
		{"huge size", h + "ranks 2\nrank 0\ns1:281474976710657\nrank 1\nr0:281474976710657\nend\n", record.ErrFormat},
		{"peer out of range", h + "ranks 2\nrank 0\ns2:4\nrank 1\nend\n", record.ErrFormat},
		{"self", h + "ranks 2\nrank 0\ns0:4\nrank 1\nend\n", record.ErrFormat},
		{"size mismatch", h + "ranks 2\nrank 0\ns1:4\nrank 1\nr0:8\nend\n", record.ErrInconsistent},
		{"unreceived send", h + "ranks 2\nrank 0\ns1:4\nrank 1\nend\n", record.ErrInconsistent},
		{"unmatched receive", h + "ranks 2\nrank 0\nrank 1\nr0:4\nend\n", record.ErrInconsistent},
		{"cycle", h + "ranks 2\nrank 0\nr1:4\ns1:4\nrank 1\nr0:4\ns0:4\nend\n", record.ErrInconsistent},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := record.Read(strings.NewReader(c.text))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, %v; want an error wrapping %v", tr, err, c.want)
			}
			t.Log(err)
		})
	}
	if _, err := record.ReadFile("testdata/no-such.trace"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestValidate: traces built in code are checked field by field.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   *record.Trace
	}{
		{"no ranks", &record.Trace{}},
		{"rank lists", &record.Trace{Size: 2, Ranks: make([][]record.Round, 1)}},
		{"empty round", &record.Trace{Size: 1, Ranks: [][]record.Round{{{}}}}},
		{"peer", &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(-1, 1))}, nil}}},
		{"self", &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(0, 1))}, nil}}},
		{"bytes", &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(1, -1))}, {rd(r(0, -1))}}}},
		{"mismatch", &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(1, 1))}, {rd(r(0, 2))}}}},
		{"order", &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(1, 1), s(1, 2))}, {rd(r(0, 2), r(0, 1))}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.tr.Validate(); !errors.Is(err, record.ErrInconsistent) {
				t.Fatalf("got %v", err)
			}
			if _, err := c.tr.WriteTo(new(bytes.Buffer)); err == nil {
				t.Fatal("WriteTo wrote an invalid trace")
			}
		})
	}
	// Eager sends: both ranks send before they receive.
	ok := &record.Trace{Size: 2, Ranks: [][]record.Round{{rd(s(1, 1)), rd(r(1, 1))}, {rd(s(0, 1)), rd(r(0, 1))}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestGenerator replays a trace as schedules.
func TestGenerator(t *testing.T) {
	gen := exchange.Generator()
	want := []string{
		"round 0: send send[0:4096] -> 1; recv recv[0:4096] <- 1",
		"round 0: recv recv[0:4096] <- 0; send send[0:4096] -> 0 | round 1: send send[0:0] -> 2",
		"round 0: recv recv[0:0] <- 1",
	}
	for rk := range 3 {
		b := schedule.NewBuilder(rk, 3)
		gen(b)
		sc, err := b.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		var rounds []string
		for i, round := range sc.Rounds {
			var ops []string
			for _, o := range round {
				ops = append(ops, o.String())
			}
			rounds = append(rounds, "round "+string(rune('0'+i))+": "+strings.Join(ops, "; "))
		}
		if got := strings.Join(rounds, " | "); got != want[rk] {
			t.Errorf("rank %d: got %s, want %s", rk, got, want[rk])
		}
	}
	// Receives of one round go to disjoint regions.
	two := &record.Trace{Size: 3, Ranks: [][]record.Round{{rd(r(1, 5), r(2, 7))}, {rd(s(0, 5))}, {rd(s(0, 7))}}}
	b := schedule.NewBuilder(0, 3)
	two.Generator()(b)
	sc, err := b.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Rounds[0][1].Dst != schedule.RecvBuf(5, 7) {
		t.Errorf("second receive into %s", sc.Rounds[0][1].Dst)
	}
	b = schedule.NewBuilder(0, 4)
	exchange.Generator()(b)
	if _, err := b.Schedule(); err == nil {
		t.Error("a trace of 3 ranks replayed on 4")
	}
}
