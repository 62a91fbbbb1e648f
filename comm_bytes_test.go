package scoll_test

// (Its standard-library imports match split/items_test.go's and
// comm_tcp_test.go's: tests of splits need the same packages; an import
// list is no logic to share.)
import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll"
)

// bytesRef is the naive reference of SplitBytes with bytes.Compare: for
// each rank, the ranks of its communicator in order (nil: undefined).
func bytesRef(colors, keys [][]byte, noReorder, noSplit bool) [][]int {
	out := make([][]int, len(colors))
	for r := range colors {
		if colors[r] == nil && !noSplit {
			continue
		}
		var mem []int
		for q := range colors {
			if noSplit || (colors[q] != nil && bytes.Equal(colors[q], colors[r])) {
				mem = append(mem, q)
			}
		}
		if !noReorder {
			slices.SortStableFunc(mem, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
		}
		out[r] = mem
	}
	return out
}

// bytePatterns returns colors and keys of bytes for p ranks: mixed
// lengths, undefined ranks, one color, one rank per color.
func bytePatterns(p int, rng *rand.Rand) map[string][2][][]byte {
	mk := func(f func(r int) []byte) [][]byte {
		s := make([][]byte, p)
		for r := range s {
			s[r] = f(r)
		}
		return s
	}
	word := func() []byte {
		w := []byte(strings.Repeat("ab", 2))
		return w[rng.IntN(2) : rng.IntN(3)+2]
	}
	return map[string][2][][]byte{
		"mixed":     {mk(func(int) []byte { return word() }), mk(func(int) []byte { return word() })},
		"undefined": {mk(func(r int) []byte { return [][]byte{nil, []byte("n1")}[r%2] }), mk(func(r int) []byte { return []byte{byte(-r)} })},
		"one":       {mk(func(int) []byte { return []byte("node-0.example") }), mk(func(r int) []byte { return []byte{byte(p - r)} })},
		"unique":    {mk(func(r int) []byte { return []byte(fmt.Sprint(r)) }), mk(func(int) []byte { return nil })},
	}
}

// TestSplitBytesReference runs every split algorithm on byte colors and
// keys in every mode: the generalized ones against the reference, the
// integer-only ones refusing with ErrUnsupported on every rank.
func TestSplitBytesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	sizes := []int{1, 2, 3, 6, 17, 40}
	modes := []struct {
		name               string
		noReorder, noSplit bool
	}{{"both", false, false}, {"no-reorder", true, false}, {"no-split", false, true}}
	for _, alg := range scoll.SplitAlgorithms() {
		for _, p := range sizes {
			for pname, pt := range bytePatterns(p, rng) {
				for _, m := range modes {
					for _, chain := range []bool{false, true} {
						want := bytesRef(pt[0], pt[1], m.noReorder, m.noSplit)
						opts := []scoll.SplitOption{scoll.WithSplitAlgorithm(alg.Name)}
						if m.noReorder {
							opts = append(opts, scoll.WithoutReorder())
						}
						if m.noSplit {
							opts = append(opts, scoll.WithoutSplit())
						}
						if chain {
							opts = append(opts, scoll.WithChainGroup())
						}
						errs := make([]error, p)
						err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
							sub, err := c.SplitBytes(ctx, pt[0][c.Rank()], pt[1][c.Rank()], opts...)
							if err != nil {
								errs[c.Rank()] = err
								return nil
							}
							if err := checkSplit(c, sub, want[c.Rank()]); err != nil {
								return err
							}
							if sub != nil {
								// The new communicator works: a collective on it.
								v := []int64{int64(c.Rank())}
								if err := scoll.Allreduce(ctx, sub, nil, v, scoll.Sum); err != nil {
									return err
								}
								s := 0
								for _, q := range want[c.Rank()] {
									s += q
								}
								if v[0] != int64(s) {
									return fmt.Errorf("allreduce on the new communicator: %d, want %d", v[0], s)
								}
								return sub.Close()
							}
							return nil
						})
						name := fmt.Sprintf("%s P=%d %s %s chain=%v", alg.Name, p, pname, m.name, chain)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						intOnly := alg.Name == "allgather" || alg.Name == "merge" || alg.Name == "cheng" || alg.Name == "radix" || strings.HasPrefix(alg.Name, "cheng-")
						for r, e := range errs {
							if intOnly != (e != nil) || (e != nil && !errors.Is(e, scoll.ErrUnsupported)) {
								t.Fatalf("%s: rank %d: %v", name, r, e)
							}
						}
					}
				}
			}
		}
	}
}

// TestSplitByNode fakes three hosts in one process.
func TestSplitByNode(t *testing.T) {
	hosts := scoll.WithHostsForTest(func(r int) string { return fmt.Sprintf("node%d", r%3) })
	for _, p := range []int{1, 4, 11} {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			node, err := c.SplitByNode(ctx)
			if err != nil {
				return err
			}
			defer node.Close()
			var want []int
			for q := c.Rank() % 3; q < p; q += 3 {
				want = append(want, q)
			}
			return checkSplit(c, node, want)
		}, hosts)
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

// TestChainComm: a communicator kept as a chain is a full communicator:
// point-to-point to far ranks (walks), collectives (learning the members
// once), splits of it (along the chain), Dup.
func TestChainComm(t *testing.T) {
	for _, alg := range []string{"bitonic", "hash", "allgather-chain"} {
		p := 23
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			// Odd ranks in reverse order, as a chain.
			color := []byte(nil)
			if c.Rank()%2 == 1 {
				color = []byte("odd")
			}
			sub, err := c.SplitBytes(ctx, color, []byte{byte(p - c.Rank())}, scoll.WithChainGroup(), scoll.WithSplitAlgorithm(alg))
			if err != nil || sub == nil {
				return err
			}
			defer sub.Close()
			n, r := sub.Size(), sub.Rank()
			if n != p/2 || r != (p-1-c.Rank())/2 {
				return fmt.Errorf("rank %d: chain rank %d of %d", c.Rank(), r, n)
			}
			if c.Rank() == 1 {
				// One rank alone walks the chain to translate ranks
				// into it; the collectives below must still agree.
				got, err := translateAll(c, sub)
				if err != nil {
					return err
				}
				for q, x := range got {
					want := scoll.Undefined
					if q%2 == 1 {
						want = (p - 1 - q) / 2
					}
					if x != want {
						return fmt.Errorf("world rank %d translates to %d in the chain, want %d", q, x, want)
					}
				}
			}
			v := []int32{int32(r)}
			if err := scoll.Allreduce(ctx, sub, nil, v, scoll.Sum); err != nil {
				return err
			}
			if v[0] != int32(n*(n-1)/2) {
				return fmt.Errorf("allreduce on the chain after one rank walked it: %d", v[0])
			}
			// Point-to-point across the chain, then a split of the chain
			// along it.
			half, err := mirrorAndHalve(ctx, sub, 5)
			if err != nil {
				return err
			}
			defer half.Close()
			d, err := sub.Dup(ctx)
			if err != nil {
				return err
			}
			defer d.Close()
			v = []int32{int32(r)}
			if err := scoll.Allreduce(ctx, d, nil, v, scoll.Max); err != nil {
				return err
			}
			if v[0] != int32(n-1) {
				return fmt.Errorf("allreduce on the dup of a chain: %d", v[0])
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
	}
}

// TestSplitBytesBadInput: options that differ between ranks, a panicking
// comparator, an algorithm that refuses the case: errors on every rank.
func TestSplitBytesBadInput(t *testing.T) {
	cases := []struct {
		name string
		opts func(r int) []scoll.SplitOption
		want error
	}{
		{"no-reorder on some ranks", func(r int) []scoll.SplitOption {
			if r%2 == 0 {
				return []scoll.SplitOption{scoll.WithoutReorder()}
			}
			return nil
		}, scoll.ErrMismatch},
		{"panicking comparator", func(int) []scoll.SplitOption {
			return []scoll.SplitOption{scoll.WithSplitAlgorithm("bitonic"), scoll.WithKeyCompare(func(a, b []byte) int { panic("boom") })}
		}, nil},
		{"hash with a color comparator", func(int) []scoll.SplitOption {
			return []scoll.SplitOption{scoll.WithSplitAlgorithm("hash"), scoll.WithColorCompare(bytes.Compare)}
		}, scoll.ErrUnsupported},
		{"merge with byte colors", func(int) []scoll.SplitOption {
			return []scoll.SplitOption{scoll.WithSplitAlgorithm("merge")}
		}, scoll.ErrUnsupported},
	}
	for _, tc := range cases {
		const p = 9
		errs := make([]error, p)
		for r := range errs {
			// A rank whose peers fail first may be stopped before it starts.
			errs[r] = errors.New("did not run")
		}
		scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			_, errs[c.Rank()] = c.SplitBytes(ctx, []byte{byte(c.Rank() % 2)}, []byte{byte(c.Rank())}, tc.opts(c.Rank())...)
			return errs[c.Rank()]
		})
		// Every rank fails; at least one names the cause (the others may
		// see the first one leave).
		named := tc.want == nil
		for r, e := range errs {
			if e == nil {
				t.Fatalf("%s: rank %d succeeded", tc.name, r)
			}
			named = named || errors.Is(e, tc.want)
		}
		if !named {
			t.Fatalf("%s: no rank reports %v: %v", tc.name, tc.want, errs)
		}
	}
}

// mirrorAndHalve checks a communicator of n ranks made by a split: rank r
// sends a byte to rank n−1−r and receives one from it (on a chain, a walk
// beyond the neighbours), then the ranks split it in two by parity along a
// chain. It returns the half, which the caller closes.
func mirrorAndHalve(ctx context.Context, sub *scoll.Comm, tag int) (*scoll.Comm, error) {
	n, r := sub.Size(), sub.Rank()
	peer := n - 1 - r
	sent := make(chan error, 1)
	go func() { sent <- sub.Send(ctx, peer, tag, []byte{byte(r)}) }()
	got := []byte{255}
	if _, err := sub.Recv(ctx, peer, tag, got); err != nil {
		return nil, err
	}
	if err := <-sent; err != nil {
		return nil, err
	}
	if got[0] != byte(peer) {
		return nil, fmt.Errorf("rank %d: got %d from %d", r, got[0], peer)
	}
	half, err := sub.SplitBytes(ctx, []byte{byte(r % 2)}, nil, scoll.WithSplitAlgorithm("hash"), scoll.WithChainGroup())
	if err != nil {
		return nil, err
	}
	if half.Size() != (n+1-r%2)/2 {
		half.Close()
		return nil, fmt.Errorf("rank %d: half of %d", r, half.Size())
	}
	return half, nil
}
