package tcp

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/transporttest"
)

// The tests of timeouts run in synctest bubbles over memNet: time is fake,
// advances only when every goroutine waits, and each timeout is checked to
// happen at its exact fake time and not a nanosecond before.

func closeAll(eps []*Transport) {
	for _, e := range eps {
		e.Close()
	}
}

// pendingAt fails the test unless every m is still pending.
func pendingAt(t *testing.T, when string, ms ...*transport.Msg) {
	t.Helper()
	for i, m := range ms {
		if m.W.Pending() == 0 {
			t.Fatalf("%s: operation %d completed: %v", when, i, m.Err)
		}
	}
}

// failedWith fails the test unless every m has completed with an error
// matching target and containing text.
func failedWith(t *testing.T, target error, text string, ms ...*transport.Msg) {
	t.Helper()
	for i, m := range ms {
		if m.W.Pending() != 0 {
			t.Fatalf("operation %d still pending", i)
		}
		if !errors.Is(m.Err, target) || !strings.Contains(m.Err.Error(), text) {
			t.Errorf("operation %d: %v, want %v with %q", i, m.Err, target, text)
		}
	}
}

// TestSilentPeerFails: a peer that stops sending anything, heartbeats
// included, is declared failed Timeout after the last frame it sent, not
// before; the operations waiting for it fail with ErrPeerFailed, the call
// is aborted on the other ranks, and other calls are not touched.
func TestSilentPeerFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = time.Second
		eps := memGroup(t, 3, Config{Timeout: timeout, Logger: quiet()})
		defer closeAll(eps)
		mute(eps[2]) // it last sent at the handshake, now
		call := transport.Key{Comm: 1, Seq: 5}
		r0 := post(t, eps[0], false, 2, call, make([]byte, 4))         // waits for the silent rank
		r1 := post(t, eps[1], false, 0, tag(call, 1), make([]byte, 4)) // waits for rank 0 in the call
		other := transport.Key{Comm: 1, Seq: 6}
		r2 := post(t, eps[1], false, 0, other, make([]byte, 2))
		time.Sleep(timeout - 1)
		synctest.Wait()
		pendingAt(t, "a nanosecond before the timeout", r0, r1, r2)
		time.Sleep(1)
		synctest.Wait()
		failedWith(t, errs.PeerFailed, "silent for 1s", r0)
		failedWith(t, errs.PeerFailed, "call 5 aborted", r1)
		pendingAt(t, "after the timeout, another call", r2)
		s := post(t, eps[0], true, 1, other, []byte("ok"))
		transporttest.Wait(t, s, r2)
		if s.Err != nil || r2.Err != nil || string(r2.Buf) != "ok" {
			t.Fatalf("survivors after the failure: %v, %v %q", s.Err, r2.Err, r2.Buf)
		}
	})
}

// tickless is the real clock with tickers that never tick: a transport
// on it sends no heartbeats.
type tickless struct{ clock.Real }

func (tickless) NewTicker(time.Duration) clock.Ticker { return stopped{} }

type stopped struct{}

func (stopped) C() <-chan time.Time { return nil }
func (stopped) Stop()               {}

// TestHeartbeat: idle peers stay up for many timeouts because the
// heartbeat, ticked by the transport's clock, keeps their connections busy;
// with a clock whose tickers never tick they are declared silent after
// exactly Timeout.
func TestHeartbeat(t *testing.T) {
	const timeout = time.Second
	t.Run("ticking", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			eps := memGroup(t, 2, Config{Timeout: timeout, Logger: quiet()})
			defer closeAll(eps)
			k := transport.Key{Comm: 1, Seq: 1}
			r := post(t, eps[1], false, 0, k, make([]byte, 2))
			time.Sleep(20 * timeout)
			synctest.Wait()
			pendingAt(t, "idle for 20 timeouts", r)
			s := post(t, eps[0], true, 1, k, []byte("ok"))
			transporttest.Wait(t, s, r)
			if s.Err != nil || r.Err != nil || string(r.Buf) != "ok" {
				t.Fatalf("after the idle time: %v, %v %q", s.Err, r.Err, r.Buf)
			}
		})
	})
	t.Run("tickless clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			eps := memGroup(t, 2, Config{Timeout: timeout, Logger: quiet(), clock: tickless{}})
			defer closeAll(eps)
			k := transport.Key{Comm: 1, Seq: 1}
			r0 := post(t, eps[0], false, 1, k, make([]byte, 2))
			r1 := post(t, eps[1], false, 0, k, make([]byte, 2))
			time.Sleep(timeout - 1)
			synctest.Wait()
			pendingAt(t, "a nanosecond before the timeout", r0, r1)
			time.Sleep(1)
			synctest.Wait()
			// Both ranks fall silent at once: the first to notice closes
			// the connection, which the other may see first.
			failedWith(t, errs.PeerFailed, "", r0, r1)
			if !strings.Contains(r0.Err.Error()+r1.Err.Error(), "silent for 1s") {
				t.Errorf("neither rank found the other silent: %v; %v", r0.Err, r1.Err)
			}
		})
	})
}

// TestConnectTimeout: New gives up on a peer whose address accepts the
// connection but never answers the handshake exactly ConnectTimeout after
// it started, and on an address nobody listens at at once; both with
// ErrPeerFailed. (The handshake's deadline and New's own end at the same
// time; either may report it.)
func TestConnectTimeout(t *testing.T) {
	const connect = 5 * time.Second
	for _, c := range []struct {
		name   string
		listen bool // rank 0's address accepts (and never answers)
		took   time.Duration
		text   string
	}{
		{"unanswered", true, connect, ""},
		{"refused", false, 0, "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newMemNet()
				ln0, _ := n.Listen("127.0.0.1:0")
				addr0 := ln0.Addr().String()
				if !c.listen {
					ln0.Close()
				}
				defer ln0.Close()
				ln1, _ := n.Listen("127.0.0.1:0")
				start := time.Now()
				cfg := Config{Rank: 1, Size: 2, Secret: secret("a"), ConnectTimeout: connect, Logger: quiet(), network: n}
				tr, err := New(context.Background(), cfg, ln1, []string{addr0, ln1.Addr().String()})
				if err == nil {
					tr.Close()
					t.Fatal("New connected to nobody")
				}
				if d := time.Since(start); d != c.took {
					t.Errorf("New failed after %v, want %v", d, c.took)
				}
				if !errors.Is(err, errs.PeerFailed) || !strings.Contains(err.Error(), c.text) {
					t.Errorf("New: %v, want PeerFailed with %q", err, c.text)
				}
			})
		})
	}
}

// TestCloseWaitsForSilentPeer: Close sends its goodbye and waits for the
// peer to close its side, but no longer than Timeout for a peer that never
// does; what was pending fails with ErrClosed.
func TestCloseWaitsForSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 3 * time.Second
		t0, _, _ := startRank0(t, Config{Secret: secret("a"), Timeout: timeout, network: newMemNet()})
		// Rank 1 connects, reads everything, says nothing and never closes.
		conn, err := t0.cfg.network.Dial(context.Background(), t0.Addr().String(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if v, err := dialHandshake(conn, secret("a"), 2, 1, 0, time.Now().Add(time.Second)); err != nil || v != verdictAccept {
			t.Fatalf("handshake: %v verdict %d", err, v)
		}
		go io.Copy(io.Discard, conn)
		synctest.Wait()
		r := post(t, t0, false, 1, transport.Key{Comm: 1, Seq: 1}, make([]byte, 4))
		start := time.Now()
		took := make(chan time.Duration, 1)
		go func() {
			t0.Close()
			took <- time.Since(start)
		}()
		time.Sleep(timeout - 1)
		synctest.Wait()
		select {
		case d := <-took:
			t.Fatalf("Close returned after %v, before the timeout", d)
		default:
		}
		failedWith(t, errs.Closed, "", r)
		time.Sleep(1)
		synctest.Wait()
		select {
		case d := <-took:
			if d != timeout {
				t.Fatalf("Close returned after %v, want %v", d, timeout)
			}
		default:
			t.Fatal("Close still waits after the timeout")
		}
	})
}

// TestWrongSecretRejected: a peer with another secret cannot connect, its
// attempt is logged, and a message it tries to send is never delivered.
func TestWrongSecretRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, addrs, logs := startRank0(t, Config{Secret: secret("a"), network: newMemNet()})
		recv := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Tag: 0}, Buf: make([]byte, 8), W: transport.NewWaiter(0)}
		recv.W.Add(1)
		if err := t0.Irecv(recv); err != nil {
			t.Fatal(err)
		}
		// The impostor dials rank 0 as rank 1 with the wrong secret.
		conn, err := t0.cfg.network.Dial(context.Background(), addrs[0], time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = dialHandshake(conn, secret("b"), 2, 1, 0, time.Now().Add(5*time.Second))
		if !errors.Is(err, errAuth) {
			t.Fatalf("handshake with the wrong secret: %v", err)
		}
		// Whatever it sends afterwards is not read as a frame.
		var hb [headerLen]byte
		h := header{kind: kindEager, len: 8, key: recv.Key}
		h.encode(hb[:])
		conn.Write(append(hb[:], "intruder"...))
		synctest.Wait()
		if recv.W.Pending() == 0 {
			t.Fatalf("receive completed with %q from an unauthenticated peer", recv.Buf[:recv.N])
		}
		if !t0.Cancel(recv) {
			t.Fatal("receive not cancellable")
		}
		if !strings.Contains(logs.String(), "rejected connection") {
			t.Fatalf("rejection not logged; log: %s", logs.String())
		}
	})
}

// memRendezvous parses spec and, for a tcp rendezvous, puts it on n.
func memRendezvous(t *testing.T, spec string, key string, n *memNet) Rendezvous {
	t.Helper()
	rv, err := ParseRendezvous(spec, secret(key), "job")
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := rv.(*tcpRendezvous); ok {
		tr.network = n
	}
	return rv
}

// TestRendezvousTimeouts: a rank with the wrong secret is never admitted,
// and the ranks waiting for it give up with ErrPeerFailed exactly when
// their context ends.
func TestRendezvousTimeouts(t *testing.T) {
	for _, kind := range []string{"file", "tcp"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const wait = 700 * time.Millisecond
				n := newMemNet()
				spec := "tcp:127.0.0.1:7000"
				if kind == "file" {
					spec = "file:" + t.TempDir()
				}
				good, bad := memRendezvous(t, spec, "k", n), memRendezvous(t, spec, "x", n)
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				start := time.Now()
				badErr := make(chan error, 1)
				go func() {
					_, err := bad.Exchange(ctx, 1, 2, "1")
					badErr <- err
				}()
				_, err := good.Exchange(ctx, 0, 2, "2")
				if d := time.Since(start); d != wait {
					t.Errorf("rank 0 gave up after %v, want %v", d, wait)
				}
				if !errors.Is(err, errs.PeerFailed) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("rank 0 admitted a wrong secret or failed otherwise: %v", err)
				}
				if err := <-badErr; !errors.Is(err, errs.PeerFailed) {
					t.Errorf("rank with the wrong secret: %v", err)
				}
			})
		})
	}
}

// TestRendezvousRetries: a rank that finds no tcp rendezvous server yet
// retries, backing off to 500 ms between attempts, and joins once rank 0
// serves.
func TestRendezvousRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const late = 2 * time.Second
		n := newMemNet()
		spec := "tcp:127.0.0.1:7000"
		start := time.Now()
		type result struct {
			addrs []string
			err   error
			at    time.Duration
		}
		res := make(chan result, 2)
		for r := range 2 {
			go func() {
				if r == 0 {
					time.Sleep(late)
				}
				addrs, err := memRendezvous(t, spec, "k", n).Exchange(context.Background(), r, 2, "100"+string(rune('0'+r)))
				res <- result{addrs, err, time.Since(start)}
			}()
		}
		a, b := <-res, <-res
		for _, x := range []result{a, b} {
			if x.err != nil {
				t.Fatal(x.err)
			}
			if x.at < late || x.at > late+500*time.Millisecond {
				t.Errorf("joined after %v, want within 500 ms of rank 0's start at %v", x.at, late)
			}
		}
		if strings.Join(a.addrs, " ") != strings.Join(b.addrs, " ") || !strings.HasSuffix(a.addrs[1], ":1001") {
			t.Fatalf("tables differ: %v and %v", a.addrs, b.addrs)
		}
	})
}

// TestTimeFromClock: the transport's code takes time only from its clock;
// a direct call of package time's clock functions would escape the clock
// that Config selects.
func TestTimeFromClock(t *testing.T) {
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true,
		"NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && banned[sel.Sel.Name] {
				t.Errorf("%s: time.%s: take time from the transport's clock", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d files; the test looks in the wrong place", checked)
	}
}

var _ net.Conn = (*memConn)(nil)
