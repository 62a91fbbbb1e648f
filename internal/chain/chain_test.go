package chain

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/split"
)

// net carries the messages of a chain's ranks, each (sender, receiver,
// tag) a queue; rank r has transport address addr(r).
type net struct {
	mu    sync.Mutex
	boxes map[[3]int]chan []byte
}

func addr(r int) int32 { return int32(100 + 3*r) }

func (nt *net) box(from, to, tag int) chan []byte {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if nt.boxes == nil {
		nt.boxes = map[[3]int]chan []byte{}
	}
	k := [3]int{from, to, tag}
	if nt.boxes[k] == nil {
		nt.boxes[k] = make(chan []byte, 4)
	}
	return nt.boxes[k]
}

// conn is one rank's Conn on a net.
type conn struct {
	nt *net
	me int32
}

func (c conn) Round(ctx context.Context, sends []split.Send, recvs []split.Recv) error {
	for _, s := range sends {
		if !s.Direct {
			return fmt.Errorf("send to rank %d, not to an address", s.To)
		}
		c.nt.box(int(c.me), s.To, s.Tag) <- append([]byte(nil), s.Data...)
	}
	for i := range recvs {
		r := &recvs[i]
		select {
		case m := <-c.nt.box(r.From, int(c.me), r.Tag):
			r.N = copy(r.Buf, m)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (c conn) Abort(error) {}

// run runs fn on every rank of a chain of n.
func run(t *testing.T, n int, k exec.Kernel, fn func(ctx context.Context, r int, x *Call) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nt := &net{}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		l := split.Links{Rank: r, Size: n, Self: addr(r), First: addr(0), Left: split.None, Right: split.None}
		if r > 0 {
			l.Left = addr(r - 1)
		}
		if r+1 < n {
			l.Right = addr(r + 1)
		}
		wg.Go(func() { errs[r] = fn(ctx, r, New(conn{nt, l.Self}, l, k)) })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("n=%d rank %d: %v", n, r, err)
		}
	}
}

// span is an element of the non-commutative operator the tests use: the
// first and last rank of a run of ranks, a⊕b = (a.first, b.last), which
// tells whether contributions are combined in rank order.
type span struct{ first, last int64 }

const spanSize = 16

func spanBytes(s span) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(s.first))
	return binary.LittleEndian.AppendUint64(b, uint64(s.last))
}

func spanOf(b []byte) span {
	return span{int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))}
}

// spanKernel combines spans.
var spanKernel = exec.Kernel{ElemSize: spanSize,
	Reduce: func(dst, src []byte) { // dst = dst ⊕ src
		copy(dst[8:16], src[8:16])
	},
	ReduceLeft: func(dst, src []byte) { // dst = src ⊕ dst
		copy(dst[:8], src[:8])
	},
}

func TestScan(t *testing.T) {
	for n := 1; n <= 17; n++ {
		run(t, n, spanKernel, func(ctx context.Context, r int, x *Call) error {
			w := Want{LR: true, RL: true, ExL: true, ExR: true}
			accL, accR, exL, exR, err := x.Scan(ctx, spanBytes(span{int64(r), int64(r)}), w)
			if err != nil {
				return err
			}
			if got := spanOf(accL); got != (span{0, int64(r)}) {
				return fmt.Errorf("from the left %v", got)
			}
			if got := spanOf(accR); got != (span{int64(r), int64(n - 1)}) {
				return fmt.Errorf("from the right %v", got)
			}
			if r == 0 && exL != nil || r > 0 && spanOf(exL) != (span{0, int64(r - 1)}) {
				return fmt.Errorf("exclusive from the left %v", exL)
			}
			if r == n-1 && exR != nil || r < n-1 && spanOf(exR) != (span{int64(r + 1), int64(n - 1)}) {
				return fmt.Errorf("exclusive from the right %v", exR)
			}
			return nil
		})
	}
}

func TestRooted(t *testing.T) {
	const m = 3 // bytes per rank's block
	for n := 1; n <= 17; n++ {
		for _, root := range []int{0, n / 2, n - 1} {
			run(t, n, spanKernel, func(ctx context.Context, r int, x *Call) error {
				acc := Msg(spanSize)
				copy(acc[Hdr:], spanBytes(span{int64(r), int64(r)}))
				if err := x.Reduce(ctx, root, acc); err != nil {
					return fmt.Errorf("reduce to %d: %w", root, err)
				}
				if got := spanOf(acc[Hdr:]); r == root && got != (span{0, int64(n - 1)}) {
					return fmt.Errorf("reduce to %d: %v", root, got)
				}
				return nil
			})
			run(t, n, exec.Kernel{ElemSize: 1}, func(ctx context.Context, r int, x *Call) error {
				// Block q holds q+1, q+2, q+3.
				block := func(q int) []byte { return []byte{byte(q + 1), byte(q + 2), byte(q + 3)} }
				var out []byte
				if r == root {
					out = make([]byte, n*m)
					copy(out[root*m:], block(root))
				}
				if err := x.Gather(ctx, root, m, block(r), out); err != nil {
					return fmt.Errorf("gather to %d: %w", root, err)
				}
				for q := 0; r == root && q < n; q++ {
					if string(out[q*m:(q+1)*m]) != string(block(q)) {
						return fmt.Errorf("gather to %d: block %d is %v", root, q, out[q*m:(q+1)*m])
					}
				}
				return nil
			})
			run(t, n, exec.Kernel{ElemSize: 1}, func(ctx context.Context, r int, x *Call) error {
				buf := make([]byte, 5)
				if r == root {
					copy(buf, "hello")
				}
				if err := x.Bcast(ctx, root, buf); err != nil || string(buf) != "hello" {
					return fmt.Errorf("bcast from %d: %q, %v", root, buf, err)
				}
				return nil
			})
			run(t, n, exec.Kernel{ElemSize: 1}, func(ctx context.Context, r int, x *Call) error {
				var send []byte
				recv := make([]byte, m)
				if r == root {
					send = make([]byte, n*m)
					for i := range send {
						send[i] = byte(i)
					}
					copy(recv, send[root*m:])
				}
				if err := x.Scatter(ctx, root, m, send, recv); err != nil {
					return fmt.Errorf("scatter from %d: %w", root, err)
				}
				if want := []byte{byte(r * m), byte(r*m + 1), byte(r*m + 2)}; string(recv) != string(want) {
					return fmt.Errorf("scatter from %d: %v, want %v", root, recv, want)
				}
				return nil
			})
		}
	}
}

// TestLengthMismatch: a message of another length than expected fails
// the call (ranks that disagree about the count).
func TestLengthMismatch(t *testing.T) {
	run(t, 2, exec.Kernel{ElemSize: 1}, func(ctx context.Context, r int, x *Call) error {
		buf := make([]byte, 4+r)
		err := x.Bcast(ctx, 0, buf)
		if r == 1 && err == nil {
			return fmt.Errorf("no error for a short message")
		}
		return nil
	})
}
