package scoll_test

import (
	"context"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// TestBadInputTCP runs the bad-input cases over the TCP transport, where
// ranks share nothing but messages: no shared context cancels the others
// when one rank fails, so every rank must find out through the protocol
// (aborted calls, signatures carried by messages) and return a typed error
// instead of hanging.
func TestBadInputTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	// Cases whose absent ranks wait for a shared context that a launcher
	// would cancel; their transport side is tested by TestCancelAbortsPeers
	// and the conformance suite's truncation test.
	launcher := map[string]bool{"deadline while a rank is absent": true, "receive buffer too short": true}
	for _, bc := range badCases() {
		if launcher[bc.name] {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			comms := matrix.TCPComms(t, bc.p, tcp.Config{})
			errs := make([]error, bc.p)
			done := make(chan struct{})
			go func() {
				matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
					errs[c.Rank()] = bc.call(ctx, c)
					return c.Close() // the rank's process ends
				})
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("hang: ranks still waiting; errors so far %v", errs)
			}
			failed := false
			for _, err := range errs {
				failed = failed || err != nil
			}
			if !failed {
				t.Fatal("every rank returned nil")
			}
			checkBadErrs(t, bc, errs)
		})
	}
}
