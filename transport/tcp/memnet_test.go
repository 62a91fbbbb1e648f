package tcp

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// memNet is an in-memory network: listeners by port, every connection a
// net.Pipe. A goroutine blocked on it is durably blocked in a
// testing/synctest bubble (real sockets never are), so the bubble's fake
// time advances and timeouts happen at exact fake times.
//
// Pipes are unbuffered: a write waits for the peer's reader. The transport
// always has a reader on every connection, so only handlers that answer
// requests from the reader (Responder) could wait on each other; the tests
// over memNet use none.
type memNet struct {
	mu   sync.Mutex
	lns  map[int]*memListener
	next int // last port handed out
}

func newMemNet() *memNet { return &memNet{lns: map[int]*memListener{}, next: 40000} }

// Listen listens at the port of addr (host:port); port 0 picks a free one.
func (n *memNet) Listen(addr string) (net.Listener, error) {
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if port == 0 {
		n.next++
		port = n.next
	}
	if n.lns[port] != nil {
		return nil, &net.OpError{Op: "listen", Net: "mem", Err: os.NewSyscallError("bind", syscall.EADDRINUSE)}
	}
	l := &memListener{n: n, port: port, conns: make(chan net.Conn, 16), done: make(chan struct{})}
	n.lns[port] = l
	return l, nil
}

// Dial connects to the listener at addr's port; with none it is refused
// at once, as a closed TCP port refuses.
func (n *memNet) Dial(ctx context.Context, addr string, deadline time.Time) (net.Conn, error) {
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(ps)
	n.mu.Lock()
	l := n.lns[port]
	n.next++
	local := n.next
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: "mem", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if l == nil {
		return nil, refused
	}
	a, b := net.Pipe()
	client := &memConn{Conn: a, local: memAddr(local), remote: memAddr(port)}
	server := &memConn{Conn: b, local: memAddr(port), remote: memAddr(local)}
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, refused
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// memAddr is the address of a port of memNet, as the TCP address
// 127.0.0.1:port (the tcp rendezvous reads its connections' IP).
func memAddr(port int) *net.TCPAddr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port} }

type memListener struct {
	n     *memNet
	port  int
	conns chan net.Conn // dialed, not accepted yet (the backlog)
	done  chan struct{}
	once  sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections dialed but not accepted are closed.
func (l *memListener) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		delete(l.n.lns, l.port)
		l.n.mu.Unlock()
		close(l.done)
		for {
			select {
			case c := <-l.conns:
				c.Close()
			default:
				return
			}
		}
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr(l.port) }

// memConn is one end of a pipe with TCP-like addresses. When muted it
// swallows what is written to it, as the connection of a hung process
// that still reads but sends nothing.
type memConn struct {
	net.Conn
	local, remote net.Addr
	muted         atomic.Bool
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) Write(b []byte) (int, error) {
	if c.muted.Load() {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// mute makes every connection of t swallow what t writes from now on: its
// peers hear nothing more from it, not even heartbeats, while t still
// hears them.
func mute(t *Transport) {
	for _, p := range t.peers {
		p.mu.Lock()
		if c, ok := p.conn.(*memConn); ok {
			c.muted.Store(true)
		}
		p.mu.Unlock()
	}
}

// memGroup starts n endpoints connected over a new memNet, as
// NewLocalGroup does over loopback; the test closes them.
func memGroup(t *testing.T, n int, cfg Config) []*Transport {
	t.Helper()
	cfg.network = newMemNet()
	if cfg.Secret == nil {
		cfg.Secret = make([]byte, 32)
		rand.Read(cfg.Secret)
	}
	eps, err := NewLocalGroup(context.Background(), n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// TestMemNet: the in-memory network refuses ports nobody listens on,
// delivers both ways, and gives connections the addresses of their ends.
func TestMemNet(t *testing.T) {
	n := newMemNet()
	if _, err := n.Dial(context.Background(), "127.0.0.1:1", time.Time{}); !isRefused(err) {
		t.Fatalf("dial without a listener: %v", err)
	}
	ln, err := n.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Listen(ln.Addr().String()); err == nil {
		t.Fatal("second listener on one port")
	}
	c, err := n.Dial(context.Background(), ln.Addr().String(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if c.RemoteAddr().String() != ln.Addr().String() || s.RemoteAddr().String() != c.LocalAddr().String() {
		t.Fatalf("addresses: client %v → %v, server %v → %v", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr(), s.RemoteAddr())
	}
	go c.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := s.Read(buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
	ln.Close()
	if _, err := ln.Accept(); err == nil {
		t.Fatal("accept on a closed listener")
	}
	if _, err := n.Dial(context.Background(), ln.Addr().String(), time.Time{}); !isRefused(err) {
		t.Fatalf("dial after close: %v", err)
	}
	c.Close()
	s.Close()
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
