//go:build linux

package shm

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

// TestHandoff hands a segment to clients that know the secret and checks
// that they map the same memory; a client with another secret is refused
// and does not use up the server's count, and a server with another
// secret cannot hand a client its segment.
func TestHandoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	secret := []byte("the job's secret")
	name := SocketName(secret, fmt.Sprintf("test-%d", time.Now().UnixNano()))
	if SocketName([]byte("other"), "job") == SocketName(secret, "job") {
		t.Fatal("socket names do not depend on the secret")
	}
	seg, err := CreateSegment("handoff", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	seg.Bytes()[7] = 99
	ln, err := Listen(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() { served <- ServeFD(ctx, ln, seg.FD(), secret, 2) }()

	if _, err := FetchFD(ctx, name, []byte("another job's secret")); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("wrong secret: %v, want a refusal", err)
	}
	for range 2 {
		fd, err := FetchFD(ctx, name, secret)
		if err != nil {
			t.Fatal(err)
		}
		s, err := AttachSegment(fd, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if s.Bytes()[7] != 99 {
			t.Error("the fetched segment is not the server's")
		}
		s.Close()
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}

	// An impostor server (another secret) gets no proof from the client and
	// gives it no segment.
	ln2, err := Listen(name + "-2")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	go ServeFD(ctx, ln2, seg.FD(), []byte("impostor"), 1)
	if fd, err := FetchFD(ctx, name+"-2", secret); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("impostor server: fd %d, %v", fd, err)
	}

	// A server whose context ends returns.
	ln3, _ := Listen(name + "-3")
	defer ln3.Close()
	short, cancel3 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel3()
	if err := ServeFD(short, ln3, seg.FD(), secret, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("server past its deadline: %v", err)
	}
}
