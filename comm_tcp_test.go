package scoll_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport/tcp"
)

// TestSplitTCP runs every split algorithm with replicated and distributed
// tables over the TCP transport, checks the result against the reference
// and runs collectives and point-to-point messages on the new
// communicators (which makes distributed tables answer lookups).
func TestSplitTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	const p = 7
	comms := tcpComms(t, p, tcp.Config{})
	rng := rand.New(rand.NewPCG(5, 6))
	colors := make([]int, p)
	keys := make([]int, p)
	for r := range colors {
		colors[r] = rng.IntN(2)
		keys[r] = rng.IntN(3)
	}
	colors[3] = scoll.Undefined
	want := splitRef(colors, keys)
	for _, alg := range scoll.SplitAlgorithms() {
		for _, gs := range []int{1, 2} {
			err := onAll(comms, func(ctx context.Context, c *scoll.Comm) error {
				var st scoll.SplitStats
				sub, err := c.Split(ctx, colors[c.Rank()], keys[c.Rank()], scoll.WithSplitAlgorithm(alg.Name), scoll.WithDistributedGroup(gs), scoll.WithSplitStats(&st), scoll.WithSorters(3))
				if err != nil {
					return err
				}
				if sub == nil {
					return checkSplit(c, sub, want[c.Rank()])
				}
				defer sub.Close()
				if gs == 1 {
					if err := checkSplit(c, sub, want[c.Rank()]); err != nil {
						return err
					}
				}
				if wantKind := map[int]string{1: "table", 2: "distributed:2"}[gs]; st.Group != wantKind || st.GroupBytes <= 0 {
					return fmt.Errorf("stats: group %q (%d bytes), want %q", st.Group, st.GroupBytes, wantKind)
				}
				oc := opCases[int32]()[0]
				for _, coll := range []string{"allreduce", "allgather", "bcast", "alltoall"} {
					if err := checkCase(ctx, sub, nil, coll, "", 5, 0, false, oc); err != nil {
						return fmt.Errorf("%s: %w", coll, err)
					}
				}
				return ringSendRecv(ctx, sub)
			})
			if err != nil {
				t.Fatalf("%s P'=%d: %v", alg.Name, gs, err)
			}
		}
	}
}

// ringSendRecv passes each rank's number to the next rank of c with Send
// and Recv and checks what arrives.
func ringSendRecv(ctx context.Context, c *scoll.Comm) error {
	n, r := c.Size(), c.Rank()
	if n == 1 {
		return nil
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Send(ctx, (r+1)%n, 3, []byte{byte(r)}) }()
	buf := make([]byte, 1)
	if _, err := c.Recv(ctx, (r+n-1)%n, 3, buf); err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	if int(buf[0]) != (r+n-1)%n {
		return fmt.Errorf("rank %d: received %d from the previous rank", r, buf[0])
	}
	return nil
}
