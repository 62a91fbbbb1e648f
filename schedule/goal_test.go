package schedule_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

func gen(t *testing.T, coll schedule.Collective, name string, size, count int) schedule.Generator {
	t.Helper()
	in, ok := algorithms.Lookup(coll, name)
	if !ok {
		t.Fatalf("no %s/%s", coll, name)
	}
	return in.Generator(algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: count}, Commutative: true, ElemSize: 4})
}

var (
	goalOp  = regexp.MustCompile(`^l(\d+): (send|recv) (\d+)b (to|from) (\d+) tag 0$`)
	goalCal = regexp.MustCompile(`^l(\d+): calc (\d+)$`)
	goalReq = regexp.MustCompile(`^l(\d+) requires l(\d+)$`)
)

// TestGOAL parses the output: every send has a receive of the same size in
// the same order, labels are defined before they are required.
func TestGOAL(t *testing.T) {
	for _, tc := range []struct {
		coll      schedule.Collective
		name      string
		size, cnt int
	}{
		{schedule.Allgather, "ring", 5, 3},
		{schedule.Allreduce, "rabenseifner", 6, 12},
		{schedule.Bcast, "binomial", 8, 2},
	} {
		var buf bytes.Buffer
		if err := schedule.WriteGOAL(&buf, tc.size, 4, 0, gen(t, tc.coll, tc.name, tc.size, tc.cnt)); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if !strings.HasPrefix(lines[0], "// ") || lines[1] != fmt.Sprintf("num_ranks %d", tc.size) {
			t.Fatalf("first lines %q", lines[:2])
		}
		lines = lines[1:]
		sends := map[[2]int][]int{}
		recvs := map[[2]int][]int{}
		rank, ranks := -1, 0
		defined := map[int]bool{}
		for _, l := range lines[1:] {
			switch {
			case l == "" || l == "}":
			case strings.HasPrefix(l, "rank "):
				rank, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "rank "), " {"))
				ranks++
				defined = map[int]bool{}
			case goalOp.MatchString(l):
				m := goalOp.FindStringSubmatch(l)
				lab, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[3])
				peer, _ := strconv.Atoi(m[5])
				defined[lab] = true
				if m[2] == "send" {
					sends[[2]int{rank, peer}] = append(sends[[2]int{rank, peer}], n)
				} else {
					recvs[[2]int{peer, rank}] = append(recvs[[2]int{peer, rank}], n)
				}
			case goalCal.MatchString(l):
				lab, _ := strconv.Atoi(goalCal.FindStringSubmatch(l)[1])
				defined[lab] = true
			case goalReq.MatchString(l):
				m := goalReq.FindStringSubmatch(l)
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				if !defined[a] || !defined[b] || b >= a {
					t.Fatalf("%s/%s: %q refers to an undefined or later label", tc.coll, tc.name, l)
				}
			default:
				t.Fatalf("%s/%s: unparsable line %q", tc.coll, tc.name, l)
			}
		}
		if ranks != tc.size || len(sends) == 0 {
			t.Fatalf("%s/%s: %d rank blocks, %d send pairs", tc.coll, tc.name, ranks, len(sends))
		}
		if fmt.Sprint(sends) != fmt.Sprint(recvs) {
			t.Fatalf("%s/%s: sends %v do not match receives %v", tc.coll, tc.name, sends, recvs)
		}
	}
}

// TestGOALCalc checks that a round's reductions are one calc of γ·bytes in
// nanoseconds (LogGOPSim's unit), copies none, and that γ is stated.
func TestGOALCalc(t *testing.T) {
	// Rabenseifner's allreduce of 12 four-byte elements on 4 ranks reduces
	// 24 bytes in its first round and 12 in its second; 1.5 ns/B.
	const gamma = 1.5e-9
	var buf bytes.Buffer
	if err := schedule.WriteGOAL(&buf, 4, 4, gamma, gen(t, schedule.Allreduce, "rabenseifner", 4, 12)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "// calc N is N ns of computation: gamma = 1.5e-09 s/B") {
		t.Fatalf("no gamma comment:\n%.200s", out)
	}
	rank0 := out[strings.Index(out, "rank 0 {"):strings.Index(out, "rank 1 {")]
	var calcs []string
	for _, l := range strings.Split(rank0, "\n") {
		if m := goalCal.FindStringSubmatch(l); m != nil && m[2] != "0" {
			calcs = append(calcs, m[2])
		}
	}
	if want := []string{"36", "18"}; fmt.Sprint(calcs) != fmt.Sprint(want) {
		t.Errorf("rank 0's calcs %v ns, want %v (γ·bytes reduced per round)\n%s", calcs, want, rank0)
	}
	if got := schedule.GOALCalc(1000, 2.5e-10); got != 250 {
		t.Errorf("GOALCalc(1000 B, 0.25 ns/B) = %d ns, want 250", got)
	}
	if err := schedule.WriteGOAL(io.Discard, 4, 4, -1, gen(t, schedule.Allreduce, "ring", 4, 12)); err == nil {
		t.Error("negative gamma accepted")
	}
}

// TestGOALBarrier checks a barrier's empty messages are written.
func TestGOALBarrier(t *testing.T) {
	in, _ := algorithms.Lookup(schedule.Barrier, "dissemination")
	g := in.Generator(algorithms.Params{Spec: schedule.Spec{Coll: schedule.Barrier, Size: 4}})
	var buf bytes.Buffer
	err := schedule.WriteGOAL(&buf, 4, 1, 0, func(b *schedule.Builder) {
		b.KeepEmpty()
		g(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "send 0b to"); n != 8 {
		t.Errorf("%d empty sends, want 8 (2 rounds of 4 ranks):\n%s", n, buf.String())
	}
}

// TestSVG checks the timeline is well-formed XML with a label per rank and
// an arrowhead per message.
func TestSVG(t *testing.T) {
	const size = 6
	g := gen(t, schedule.Allgather, "bruck", size, 2)
	var buf bytes.Buffer
	if err := schedule.WriteSVG(&buf, size, g); err != nil {
		t.Fatal(err)
	}
	msgs := 0
	for r := range size {
		b := schedule.NewBuilder(r, size)
		g(b)
		s, err := b.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		msgs += s.Messages()
	}
	lines, ranks := 0, 0
	eachToken(t, &buf, func(tok xml.Token) {
		switch e := tok.(type) {
		case xml.StartElement:
			for _, a := range e.Attr {
				if e.Name.Local == "line" && a.Name.Local == "marker-end" {
					lines++
				}
			}
		case xml.CharData:
			if strings.HasPrefix(string(e), "rank ") {
				ranks++
			}
		}
	})
	if lines != msgs || ranks != size {
		t.Fatalf("%d lines for %d messages, %d rank labels for %d ranks", lines, msgs, ranks, size)
	}
	if err := schedule.WriteSVG(io.Discard, schedule.MaxSVGRanks+1, g); err == nil {
		t.Fatal("a timeline of too many ranks was drawn")
	}
}
