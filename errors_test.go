package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// shape is the form of every error of the public API (the package doc's
// Errors section): the rank when known, the public name of the call, then
// the sentinel's text and the details.
var shape = regexp.MustCompile(`^(rank (\d+): )?([A-Z][A-Za-z]*( \(request \d+\))?): scoll: `)

// internalWords must not appear in a public error: the names of the
// paths a call runs on and of the packages below the API.
var internalWords = []string{"/meet", "/exchange", "/chain", "native", "schedule:", "allreduce/", "bcast/"}

// errGaveUp is a rank's own error, not the library's.
var errGaveUp = errors.New("gave up")

// anyRank is checkShape's rank for an error that must name some rank.
const anyRank = -2

// checkShape checks that err, returned to rank r (-1: no rank known;
// anyRank: some rank) by the call named call ("": any), has the public
// error shape.
func checkShape(t *testing.T, r int, call string, err error) {
	t.Helper()
	msg := err.Error()
	m := shape.FindStringSubmatch(msg)
	switch {
	case m == nil:
		t.Errorf("rank %d: %q does not read \"rank R: Call: scoll: ...\"", r, msg)
		return
	case r >= 0 && m[2] != fmt.Sprint(r), r == anyRank && m[1] == "":
		t.Errorf("rank %d: %q does not start with its rank", r, msg)
	case r == -1 && m[1] != "":
		t.Errorf("%q names a rank where none is known", msg)
	case call != "" && m[3] != call:
		t.Errorf("rank %d: %q names the call %q, want %q", r, msg, m[3], call)
	}
	if n := strings.Count(msg, "scoll:"); n != 1 {
		t.Errorf("rank %d: %q says \"scoll:\" %d times", r, msg, n)
	}
	for _, w := range internalWords {
		if strings.Contains(msg, w) {
			t.Errorf("rank %d: %q names the internal %q", r, msg, w)
		}
	}
}

// TestErrorShape provokes each kind of public error on in-process ranks
// and checks its sentinel and its text: every rank's error has the shape,
// and the rank at fault (or, for a mismatch, some rank) reports the wanted
// sentinel with the wanted words.
func TestErrorShape(t *testing.T) {
	f64 := func(n int) []float64 { return make([]float64, n) }
	noNative := scoll.WithoutAlgorithm("meet", "exchange")
	type errCase struct {
		name string
		p    int
		want error
		// who is the rank whose error must match want and words (-1:
		// some rank's must).
		who   int
		call  string   // the call's public name in who's error ("" any)
		words []string // what who's error must say
		fn    func(ctx context.Context, c *scoll.Comm) error
	}
	cases := []errCase{
		{"bad argument", 3, scoll.ErrInvalidArgument, 1, "Allreduce", []string{"len(send)=2 != len(recv)=3"},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 1 {
					return scoll.Allreduce(ctx, c, f64(2), f64(3), scoll.Sum)
				}
				return scoll.Allreduce(ctx, c, f64(3), f64(3), scoll.Sum)
			}},
		{"bad root, started", 2, scoll.ErrInvalidArgument, 0, "IBcast", []string{"root 5 out of range"},
			func(ctx context.Context, c *scoll.Comm) error {
				_, err := scoll.IBcast(ctx, c, f64(1), 5)
				return err
			}},
		{"bad operator, persistent", 2, scoll.ErrInvalidArgument, 0, "ReduceInit", []string{"operator band"},
			func(ctx context.Context, c *scoll.Comm) error {
				_, err := scoll.ReduceInit(ctx, c, f64(1), f64(1), scoll.Band, 0)
				return err
			}},
		{"unsupported", 3, scoll.ErrUnsupported, 0, "Allgather", []string{"power-of-two"},
			func(ctx context.Context, c *scoll.Comm) error {
				return scoll.Allgather(ctx, c, f64(1), f64(3), scoll.WithAlgorithm(powerOfTwoOnly()))
			}},
		{"unknown algorithm", 2, scoll.ErrInvalidArgument, 0, "Allreduce", []string{`unknown algorithm "rign" for allreduce; did you mean "ring"?`, "(valid: "},
			func(ctx context.Context, c *scoll.Comm) error {
				return scoll.Allreduce(ctx, c, f64(1), f64(1), scoll.Sum, scoll.WithAlgorithm("rign"))
			}},
		{"unknown knob", 2, scoll.ErrInvalidArgument, 0, "Bcast", []string{`unknown knob "radx"; did you mean "radix"?`},
			func(ctx context.Context, c *scoll.Comm) error {
				return scoll.Bcast(ctx, c, f64(1), 0, scoll.WithKnob("radx", 2))
			}},
		{"unknown split algorithm", 2, scoll.ErrInvalidArgument, 0, "Split", []string{`unknown split algorithm "chneg"; did you mean "cheng"?`},
			func(ctx context.Context, c *scoll.Comm) error {
				_, err := c.Split(ctx, 0, 0, scoll.WithSplitAlgorithm("chneg"))
				return err
			}},
		{"mismatched collectives, meeting", 3, scoll.ErrMismatch, -1, "", []string{"Allreduce", "Bcast", " called "},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 0 {
					return scoll.Bcast(ctx, c, f64(1), 0, scoll.WithAlgorithm("meet"))
				}
				return scoll.Allreduce(ctx, c, f64(1), f64(1), scoll.Sum, scoll.WithAlgorithm("meet"))
			}},
		{"mismatched collectives, messages", 2, scoll.ErrMismatch, -1, "", []string{"Allreduce", "Bcast", " called "},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 0 {
					return scoll.Bcast(ctx, c, f64(4), 0, noNative)
				}
				return scoll.Allreduce(ctx, c, f64(4), f64(4), scoll.Sum, noNative)
			}},
		{"mismatched arguments", 3, scoll.ErrMismatch, -1, "Allreduce", []string{"called Allreduce with other arguments"},
			func(ctx context.Context, c *scoll.Comm) error {
				n := 2
				if c.Rank() == 2 {
					n = 3
				}
				return scoll.Allreduce(ctx, c, f64(n), f64(n), scoll.Sum, scoll.WithAlgorithm("meet"))
			}},
		{"canceled", 2, scoll.ErrCanceled, 1, "Allreduce", []string{"canceled"},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 1 {
					cctx, cancel := context.WithCancel(ctx)
					cancel()
					ctx = cctx
				}
				return scoll.Allreduce(ctx, c, f64(1), f64(1), scoll.Sum)
			}},
		{"closed", 2, scoll.ErrClosed, 0, "Barrier", []string{"communicator closed"},
			func(ctx context.Context, c *scoll.Comm) error {
				d, err := c.Dup(ctx)
				if err != nil {
					return err
				}
				d.Close()
				return scoll.Barrier(ctx, d)
			}},
		{"split against a collective", 2, scoll.ErrMismatch, -1, "", []string{"Allreduce", "Split", " called "},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 1 {
					_, err := c.Split(ctx, 0, 0)
					return err
				}
				return scoll.Allreduce(ctx, c, f64(5), f64(5), scoll.Sum, noNative)
			}},
		{"peer failed", 2, scoll.ErrPeerFailed, 0, "Allreduce", []string{"peer failed", "rank 1: gave up"},
			func(ctx context.Context, c *scoll.Comm) error {
				if c.Rank() == 1 {
					return errGaveUp
				}
				return scoll.Allreduce(ctx, c, f64(1), f64(1), scoll.Sum)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			errs := make([]error, tc.p)
			runErr := scoll.Run(ctx, tc.p, func(ctx context.Context, c *scoll.Comm) error {
				err := tc.fn(ctx, c)
				errs[c.Rank()] = err
				return err
			})
			if runErr == nil {
				t.Fatal("Run returned nil")
			}
			if !errors.Is(runErr, errGaveUp) {
				checkShape(t, anyRank, "", runErr)
			}
			found := false
			for r, err := range errs {
				if err == nil || err == errGaveUp {
					continue
				}
				if (tc.who < 0 || r == tc.who) && errors.Is(err, tc.want) && !found {
					found = true
					t.Logf("rank %d: %v", r, err)
					checkShape(t, r, tc.call, err)
					for _, w := range tc.words {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("rank %d: %q does not say %q", r, err, w)
						}
					}
				} else {
					checkShape(t, r, "", err)
				}
			}
			if !found {
				t.Errorf("no rank (want %d) returned an error matching %v: %v", tc.who, tc.want, errs)
			}
		})
	}
}

// TestErrorShapeOutsideRanks checks the errors of calls made where no rank
// is known: Run's and Init's own checks, a nil request, an environment
// override naming an unknown algorithm.
func TestErrorShapeOutsideRanks(t *testing.T) {
	noop := func(context.Context, *scoll.Comm) error { return nil }
	err := scoll.Run(context.Background(), 0, noop)
	checkShape(t, -1, "Run", err)
	if !errors.Is(err, scoll.ErrInvalidArgument) {
		t.Errorf("Run with 0 ranks: %v", err)
	}
	var r *scoll.Request
	err = r.Wait(context.Background())
	checkShape(t, -1, "Wait", err)

	for _, env := range []struct{ name, val, says string }{
		{"SCOLL_ALGORITHM_ALLREDUCE", "rign", `SCOLL_ALGORITHM_ALLREDUCE=rign: unknown algorithm "rign" for allreduce; did you mean "ring"?`},
		{"SCOLL_ALGORITHM_ALLREDUCX", "ring", `unknown collective "allreducx"; did you mean "allreduce"?`},
	} {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv(env.name, env.val)
			err := scoll.Run(context.Background(), 2, noop)
			checkShape(t, -1, "Run", err)
			if !errors.Is(err, scoll.ErrInvalidArgument) || !strings.Contains(err.Error(), env.says) {
				t.Errorf("%s=%s: %v, want it to say %s", env.name, env.val, err, env.says)
			}
		})
	}
	t.Run("Init", func(t *testing.T) {
		t.Setenv(scoll.EnvTransport, "carrier-pigeon")
		_, err := scoll.Init(context.Background())
		checkShape(t, -1, "Init", err)
		if !errors.Is(err, scoll.ErrInvalidArgument) {
			t.Errorf("%s=carrier-pigeon: %v", scoll.EnvTransport, err)
		}
	})
}

// TestMismatchTCPNamesCollectives: over TCP, a rank that calls Bcast while
// another calls Allreduce gets a mismatch that names both collectives.
func TestMismatchTCPNamesCollectives(t *testing.T) {
	comms := matrix.TCPComms(t, 2, tcp.Config{})
	errs := make([]error, 2)
	matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
		buf := make([]float64, 4)
		noNative := scoll.WithoutAlgorithm("meet", "exchange")
		if c.Rank() == 0 {
			errs[0] = scoll.Bcast(ctx, c, buf, 0, noNative)
		} else {
			errs[1] = scoll.Allreduce(ctx, c, buf, make([]float64, 4), scoll.Sum, noNative)
		}
		return nil
	})
	named := false
	for r, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, scoll.ErrMismatch) {
			t.Errorf("rank %d: %v, want ErrMismatch", r, err)
			continue
		}
		checkShape(t, r, "", err)
		s := err.Error()
		named = named || strings.Contains(s, "Allreduce") && strings.Contains(s, "Bcast") && strings.Contains(s, " called ")
		t.Logf("rank %d: %v", r, err)
	}
	if !named {
		t.Errorf("no rank's mismatch names both collectives: %v", errs)
	}
}

// TestEagerMismatchTCP: with eager sends over TCP, a mismatched bcast
// (the root passes 4 elements, the others 5) fails at every receiver; the
// root, whose part is only sends, fails in it too or learns of it no later
// than its next call on the communicator (allreduce; messages: one that
// runs a message schedule) or its Close (close), which fails with
// ErrMismatch naming the earlier call.
func TestEagerMismatchTCP(t *testing.T) {
	testRootRunsAhead(t, scoll.WithoutAlgorithm("meet", "exchange"), func(t *testing.T, p int) []*scoll.Comm {
		return matrix.TCPComms(t, p, tcp.Config{DetachedSends: true})
	})
}

// testRootRunsAhead is TestEagerMismatchTCP's test on the communicators
// comms makes, the bcast with option opt.
func testRootRunsAhead(t *testing.T, opt scoll.CallOption, comms func(*testing.T, int) []*scoll.Comm) {
	noNative := opt
	for _, p := range []int{2, 3} {
		for _, then := range []string{"allreduce", "messages", "close"} {
			t.Run(fmt.Sprintf("p%d-%s", p, then), func(t *testing.T) {
				comms := comms(t, p)
				first := make([]error, p)
				second := make([]error, p)
				matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
					n := 5
					if c.Rank() == 0 {
						n = 4
					}
					first[c.Rank()] = scoll.Bcast(ctx, c, make([]float64, n), 0, noNative)
					switch then {
					case "allreduce":
						second[c.Rank()] = scoll.Allreduce(ctx, c, []float64{1}, make([]float64, 1), scoll.Sum, noNative)
					case "messages": // a message schedule, whatever the bcast took
						second[c.Rank()] = scoll.Allreduce(ctx, c, []float64{1}, make([]float64, 1), scoll.Sum, scoll.WithoutAlgorithm("meet", "exchange"))
					default:
						second[c.Rank()] = c.Close()
					}
					return nil
				})
				for r := 1; r < p; r++ {
					if !errors.Is(first[r], scoll.ErrMismatch) {
						t.Errorf("receiver %d: %v, want ErrMismatch", r, first[r])
					}
				}
				switch {
				case errors.Is(first[0], scoll.ErrMismatch):
					t.Logf("the root failed in the call: %v", first[0])
				case first[0] != nil:
					t.Errorf("root: %v, want nil or ErrMismatch", first[0])
				case !errors.Is(second[0], scoll.ErrMismatch) || !strings.Contains(second[0].Error(), "earlier call (number 1 ") && !strings.Contains(second[0].Error(), "earlier collective (#1)") && !strings.Contains(second[0].Error(), "called Bcast"):
					// Either the ledger names call 1, or the call check,
					// comparing the ranks' records, names its Bcast.
					t.Errorf("root's %s after the mismatched bcast: %v, want ErrMismatch naming call 1", then, second[0])
				default:
					t.Logf("root's %s: %v", then, second[0])
				}
			})
		}
	}
}
