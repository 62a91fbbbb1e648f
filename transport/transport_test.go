package transport_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
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

// TestPost: Post counts a message on its waiter and posts it; a refused
// message leaves the count as it was.
func TestPost(t *testing.T) {
	w := inproc.NewWorld(2)
	a, b := w.Endpoint(0), w.Endpoint(1)
	wa, wb := transport.NewWaiter(0), transport.NewWaiter(0)
	send := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Tag: 1}, Buf: []byte{7}, W: wa}
	recv := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 1, Tag: 1}, Buf: make([]byte, 1), W: wb}
	if err := transport.Post(a, send, true); err != nil {
		t.Fatal(err)
	}
	if err := transport.Post(b, recv, false); err != nil {
		t.Fatal(err)
	}
	if err := wa.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := wb.Wait(context.Background()); err != nil || recv.Buf[0] != 7 {
		t.Fatalf("received %v, %v", recv.Buf, err)
	}
	bad := &transport.Msg{Peer: 5, Key: transport.Key{Comm: 1, Tag: 2}, Buf: []byte{1}, W: wa}
	if err := transport.Post(a, bad, true); err == nil {
		t.Fatal("a send to rank 5 of 2 was accepted")
	}
	if wa.Pending() != 0 {
		t.Fatalf("a refused send left %d pending", wa.Pending())
	}
}
