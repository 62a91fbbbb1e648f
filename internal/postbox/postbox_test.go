package postbox

import (
	"context"
	"testing"

	"github.com/scoll/scoll/transport"
)

func TestBox(t *testing.T) {
	var b Box
	// A reply before the wait.
	if !b.Put(1, []byte("a")) || b.Put(1, []byte("b")) {
		t.Fatal("the first Put must succeed and a second one fail")
	}
	w := transport.NewWaiter(0)
	if got, ok := b.Await(1, w); !ok || string(got) != "a" || w.Pending() != 0 {
		t.Fatalf("Await of a posted reply: %q %v, %d pending", got, ok, w.Pending())
	}
	if got, ok := b.Take(1); !ok || string(got) != "a" {
		t.Fatalf("Take: %q %v", got, ok)
	}
	if _, ok := b.Take(1); ok {
		t.Fatal("a taken post is still there")
	}
	// A wait before the reply: Put completes the waiter's operation.
	if _, ok := b.Await(2, w); ok || w.Pending() != 1 {
		t.Fatalf("Await before the reply: ok %v, %d pending", ok, w.Pending())
	}
	go b.Put(2, []byte("c"))
	if err := w.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, ok := b.Take(2); !ok || string(got) != "c" {
		t.Fatalf("Take after the wait: %q %v", got, ok)
	}
}
