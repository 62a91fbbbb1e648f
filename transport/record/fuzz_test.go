package record_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/record"
)

// FuzzRead feeds arbitrary bytes to the decoder: it must return a valid
// trace or an error wrapping ErrFormat or ErrInconsistent, never panic,
// and a trace it returns must write and read back to itself and replay as
// schedules. The seed corpus is testdata/fuzz/FuzzRead and
// testdata/exchange.trace.
func FuzzRead(f *testing.F) {
	if b, err := os.ReadFile("testdata/exchange.trace"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("scoll-trace 1\nranks 1\nrank 0\nend\n"))
	f.Add([]byte("scoll-trace 1\nranks 2\nrank 0\ns1:3 r1:0\nrank 1\nr0:3 s0:0\nend\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := record.Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, record.ErrFormat) && !errors.Is(err, record.ErrInconsistent) {
				t.Fatalf("error wraps neither ErrFormat nor ErrInconsistent: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if _, err := tr.WriteTo(&buf); err != nil {
			t.Fatalf("a trace Read accepted does not write: %v", err)
		}
		again, err := record.Read(&buf)
		if err != nil {
			t.Fatalf("a trace WriteTo wrote does not read: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(again, tr) {
			t.Fatalf("round trip changed the trace: %v -> %v", tr.Ranks, again.Ranks)
		}
		if tr.Size > 64 {
			return
		}
		gen := tr.Generator()
		for rk := range tr.Size {
			b := schedule.NewBuilder(rk, tr.Size)
			gen(b)
			if _, err := b.Schedule(); err != nil {
				t.Fatalf("a valid trace does not replay: %v", err)
			}
		}
	})
}
