package transport_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/transport"
	_ "github.com/scoll/scoll/transport/inproc"
	_ "github.com/scoll/scoll/transport/tcp"
)

// TestPaths: the transports linked in register their paths, each with a
// description and its conditions, listed by transport then name.
func TestPaths(t *testing.T) {
	ps := transport.Paths()
	var names []string
	for _, p := range ps {
		names = append(names, p.Transport+"/"+p.Name)
		if p.Doc == "" || p.When == "" {
			t.Errorf("%s/%s lacks Doc or When", p.Transport, p.Name)
		}
	}
	for _, want := range []string{"inproc/exchange", "inproc/lanes", "inproc/mailbox", "inproc/meet", "tcp/eager", "tcp/rendezvous"} {
		if !slices.Contains(names, want) {
			t.Errorf("no path %s in %v", want, names)
		}
	}
	if !slices.IsSortedFunc(names, strings.Compare) {
		t.Errorf("paths not sorted: %v", names)
	}
}
