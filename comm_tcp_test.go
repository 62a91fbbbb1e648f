package scoll_test

// The same standard packages as comm_bytes_test.go (both test splits): an import list is no logic to share.
import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// TestSplitTCP runs every split algorithm with replicated and distributed
// tables and with chain results over the TCP transport, checks the result against the reference
// and runs collectives and point-to-point messages on the new
// communicators (which makes distributed tables answer lookups).
func TestSplitTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	const p = 7
	comms := matrix.TCPComms(t, p, tcp.Config{})
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
		for _, gs := range []int{1, 2, 0} { // 0: WithChainGroup
			err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
				var st scoll.SplitStats
				opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg.Name), scoll.WithSplitStats(&st)}
				if gs > 0 {
					opts = append(opts, scoll.WithDistributedGroup(gs))
				} else {
					opts = append(opts, scoll.WithChainGroup())
				}
				if alg.Name == "cheng" {
					opts = append(opts, scoll.WithSorters(3))
				}
				sub, err := c.Split(ctx, colors[c.Rank()], keys[c.Rank()], opts...)
				if err != nil {
					return err
				}
				if sub == nil {
					return checkSplit(c, sub, want[c.Rank()])
				}
				defer sub.Close()
				// checkSplit translates the new ranks to the world (a
				// lookup round for a distributed table); translate the
				// world into it too.
				if err := checkSplit(c, sub, want[c.Rank()]); err != nil {
					return err
				}
				back, err := c.TranslateRanks(want[c.Rank()], sub)
				if err != nil {
					return err
				}
				for i, r := range back {
					if r != i {
						return fmt.Errorf("rank %d: member %d translates back to %d", c.Rank(), i, r)
					}
				}
				if wantKind := map[int]string{0: "chain", 1: "table", 2: "distributed:2"}[gs]; st.Group != wantKind || st.GroupBytes <= 0 {
					return fmt.Errorf("stats: group %q (%d bytes), want %q", st.Group, st.GroupBytes, wantKind)
				}
				oc := matrix.OpCases[int32]()[0]
				for _, coll := range []string{"allreduce", "allgather", "bcast", "alltoall"} {
					if err := matrix.CheckCase(ctx, sub, nil, coll, "", 5, 0, false, oc); err != nil {
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

// TestSplitBytesTCP runs the generalized algorithms over TCP with byte
// colors, replies to contributors through the responders, and uses the
// resulting chains: collectives, point-to-point to a far rank (a walk of
// lookups), a split of the chain.
func TestSplitBytesTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	const p = 9
	comms := matrix.TCPComms(t, p, tcp.Config{})
	colors := make([][]byte, p)
	keys := make([][]byte, p)
	for r := range colors {
		colors[r] = []byte([]string{"north", "s", "north"}[r%3])
		keys[r] = []byte{byte(p - r)}
	}
	colors[4] = nil
	want := bytesRef(colors, keys, false, false)
	for _, alg := range scoll.SplitAlgorithms() {
		if !slices.Contains(strings.Fields("allgather-chain bitonic hash hash64 gather-scatter"), alg.Name) {
			continue
		}
		for _, chain := range []bool{false, true} {
			err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
				opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg.Name)}
				if chain {
					opts = append(opts, scoll.WithChainGroup())
				}
				sub, err := c.SplitBytes(ctx, colors[c.Rank()], keys[c.Rank()], opts...)
				if err != nil || sub == nil {
					return errors.Join(err, checkSplit(c, sub, want[c.Rank()]))
				}
				defer sub.Close()
				if err := checkSplit(c, sub, want[c.Rank()]); err != nil {
					return err
				}
				v := []int32{int32(c.Rank())}
				if err := scoll.Allreduce(ctx, sub, nil, v, scoll.Max); err != nil {
					return err
				}
				if v[0] != int32(want[c.Rank()][0]) {
					return fmt.Errorf("rank %d: max %d, want %d", c.Rank(), v[0], want[c.Rank()][0])
				}
				half, err := mirrorAndHalve(ctx, sub, 1)
				if err != nil {
					return err
				}
				return half.Close()
			})
			if err != nil {
				t.Fatalf("%s chain=%v: %v", alg.Name, chain, err)
			}
		}
	}
}

// TestSplitPeerDiesTCP: a rank whose process ends in the middle of a split
// (its transport closes) makes the splits of the ranks that still need it
// fail with ErrPeerFailed instead of hanging; a rank whose own part was
// complete may return its communicator, on which a receive from the dead
// rank fails with ErrPeerFailed.
func TestSplitPeerDiesTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	for _, alg := range []string{"merge", "cheng", "bitonic", "hash"} {
		ats := []int{0, 2}
		switch alg {
		// In the sort, and before the last round of the finish, after
		// which the replies are posted (then builds the table: 3 rounds).
		case "bitonic":
			ats = append(ats, 8, 10)
		case "hash":
			ats = append(ats, 8, 19)
		}
		for _, at := range ats {
			comms := matrix.TCPComms(t, 5, tcp.Config{})
			scoll.SetSplitHookForTest(comms[3], func(round int) {
				if round == at {
					comms[3].Close()
				}
			})
			errs := make([]error, len(comms))
			later := make([]error, len(comms))
			done := make(chan struct{})
			go func() {
				matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
					// Reversed keys: the sorts move items, so that replies
					// cross ranks.
					sub, err := c.Split(ctx, 0, -c.Rank(), scoll.WithSplitAlgorithm(alg), scoll.WithSorters(2))
					errs[c.Rank()] = err
					if sub != nil {
						// A message from the dead rank fails at once. (A
						// collective could wait instead for a live rank
						// whose split failed and that will never call it.)
						dead, err := c.TranslateRanks([]int{3}, sub)
						if err == nil {
							_, err = sub.Recv(ctx, dead[0], 0, make([]byte, 1))
						}
						later[c.Rank()] = err
						sub.Close()
					}
					return nil
				})
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s, death at round %d: hang; errors so far %v", alg, at, errs)
			}
			failed := 0
			for r, err := range errs {
				switch {
				case r == 3:
					if !errors.Is(err, scoll.ErrClosed) {
						t.Errorf("%s, death at round %d: the dead rank: %v, want ErrClosed", alg, at, err)
					}
				case err == nil:
					if !errors.Is(later[r], scoll.ErrPeerFailed) {
						t.Errorf("%s, death at round %d: rank %d: receive from the dead rank: %v, want ErrPeerFailed", alg, at, r, later[r])
					}
				case errors.Is(err, scoll.ErrPeerFailed):
					failed++
				default:
					t.Errorf("%s, death at round %d: rank %d: %v, want ErrPeerFailed or a communicator", alg, at, r, err)
				}
			}
			if failed == 0 {
				t.Errorf("%s, death at round %d: no rank noticed the death: %v", alg, at, errs)
			}
		}
	}
}

// TestMatrixSubCommTCP runs every algorithm of every collective on derived
// communicators over TCP: a split of 5 of 9 ranks with reversed keys
// (replicated table) and the other 4 in a distributed table.
func TestMatrixSubCommTCP(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	for _, coll := range scoll.Collectives() {
		t.Run(coll, func(t *testing.T) {
			t.Parallel()
			comms := matrix.TCPComms(t, 9, tcp.Config{EagerLimit: 1024})
			subs := make([]*scoll.Comm, len(comms))
			err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
				color, key := 0, -c.Rank()
				if c.Rank() >= 5 {
					color, key = 1, c.Rank()
				}
				table, err := c.Split(ctx, color, key, scoll.WithDistributedGroup(1))
				if err != nil {
					return err
				}
				dist, err := c.Split(ctx, color, key, scoll.WithDistributedGroup(2))
				if err != nil {
					return err
				}
				if color == 0 {
					subs[c.Rank()] = table
					return dist.Close()
				}
				subs[c.Rank()] = dist
				return table.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, alg := range append([]scoll.AlgorithmInfo{{Name: ""}}, scoll.Algorithms(coll)...) {
				err := matrix.OnAll(subs, func(ctx context.Context, sub *scoll.Comm) error {
					if alg.PowerOfTwo && sub.Size()&(sub.Size()-1) != 0 {
						return nil
					}
					return matrix.ForCases(coll, alg, sub.Size(), []int{0, 1, 3, 1000}, func(n, root int, inPlace bool, oc matrix.OpCase[int32]) error {
						return matrix.CheckCase(ctx, sub, nil, coll, alg.Name, n, root, inPlace, oc)
					})
				})
				if err != nil {
					t.Fatalf("%s: %v", alg.Name, err)
				}
			}
		})
	}
}

// TestChainBadArgsTCP: a rank whose arguments are bad at the first
// collective that learns a chain's members fails, and so do the others,
// which are learning along the chain meanwhile, instead of waiting.
func TestChainBadArgsTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	comms := matrix.TCPComms(t, 5, tcp.Config{})
	errs := make([]error, len(comms))
	done := make(chan struct{})
	go func() {
		matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
			ch, err := c.SplitBytes(ctx, []byte("x"), []byte{byte(9 - c.Rank())}, scoll.WithChainGroup())
			if err != nil {
				errs[c.Rank()] = err
				return nil
			}
			defer ch.Close()
			n := ch.Size()
			if c.Rank() == 2 {
				n++ // bad: recv of the wrong length
			}
			errs[c.Rank()] = scoll.Allgather(ctx, ch, []int32{1}, make([]int32, n))
			return nil
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("hang; errors so far %v", errs)
	}
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error", r)
		}
	}
}
