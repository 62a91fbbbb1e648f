package tcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sync"
)

// NewLocalGroup starts n endpoints in this process, connected over loopback
// TCP: a whole job in one process, for tests and benchmarks of the
// transport itself. cfg's Rank and Size are set per endpoint; a missing
// Secret is generated.
func NewLocalGroup(ctx context.Context, n int, cfg Config) ([]*Transport, error) {
	if n < 1 {
		return nil, fmt.Errorf("tcp: group of %d endpoints", n)
	}
	if cfg.Secret == nil {
		cfg.Secret = make([]byte, 32)
		rand.Read(cfg.Secret)
	}
	lns := make([]net.Listener, n)
	addrs := make([]string, n)
	for r := range n {
		ln, err := cfg.net().Listen("127.0.0.1:0")
		if err != nil {
			for _, l := range lns[:r] {
				l.Close()
			}
			return nil, err
		}
		lns[r], addrs[r] = ln, ln.Addr().String()
	}
	eps := make([]*Transport, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			c := cfg
			c.Rank, c.Size = r, n
			eps[r], errs[r] = New(ctx, c, lns[r], addrs)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range eps {
			if e != nil {
				e.Close()
			}
		}
		return nil, err
	}
	return eps, nil
}

// Start listens on every interface at a free port, publishes the port
// through rv, learns the other ranks' addresses and starts rank cfg.Rank's
// endpoint. ctx bounds the whole start (rendezvous and connections).
func Start(ctx context.Context, cfg Config, rv Rendezvous) (*Transport, error) {
	ln, err := cfg.net().Listen(":0")
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	addrs, err := rv.Exchange(ctx, cfg.Rank, cfg.Size, port)
	if err != nil {
		ln.Close()
		return nil, err
	}
	t, err := New(ctx, cfg, ln, addrs)
	if err == nil && !cfg.Lazy {
		// Every peer is connected, so every peer has read the table.
		if f, ok := rv.(interface{ Finish(rank int) }); ok {
			f.Finish(cfg.Rank)
		}
	}
	return t, err
}
