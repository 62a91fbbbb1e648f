package exec_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
)

// plain hides the inproc endpoint's Combiner so the executor emulates
// combining receives.
type plain struct{ *inproc.Endpoint }

func (plain) CanCombine() {} // shadows the method with another signature

// chain builds a chain allreduce with combining receives: rank r receives the
// prefix of ranks < r combined with its input, then the total comes back.
func chain(b *schedule.Builder, n int) {
	P, r := b.Size(), b.Rank()
	buf := schedule.RecvBuf(0, n)
	if r == 0 {
		b.Copy(buf, schedule.SendBuf(0, n))
	} else {
		b.RecvReduce(r-1, buf, schedule.SendBuf(0, n), false)
	}
	// The same chain as the verifier's ordered-reduction test: the executor
	// runs it on data, the verifier proves it; no test helper spans both.
	b.EndRound()
	if r < P-1 {
		b.Send(r+1, buf)
		b.EndRound()
		b.Recv(r+1, buf)
		b.EndRound()
	}
	if r > 0 {
		b.Send(r-1, buf)
		b.EndRound()
	}
}

func runChain(t *testing.T, p, n int, wrap bool) {
	w := inproc.NewWorld(p)
	f := kernels.Get(kernels.KindOf[int64](), kernels.Sum)
	k := exec.Kernel{ElemSize: 8, Reduce: f, ReduceLeft: f, Combine: kernels.Get3(kernels.KindOf[int64](), kernels.Sum)}
	var wg sync.WaitGroup
	errs := make([]error, p)
	for r := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := schedule.NewBuilder(r, p)
			chain(b, n)
			s, err := b.Schedule()
			if err != nil {
				errs[r] = err
				return
			}
			send := make([]int64, n)
			recv := make([]int64, n)
			for i := range send {
				send[i] = int64(r*1000 + i)
			}
			var tr transport.Transport = w.Endpoint(r)
			if wrap {
				tr = plain{w.Endpoint(r)}
			}
			c := &exec.Call{T: tr, Comm: 1, Seq: 1, Plan: exec.NewPlan(s), Send: kernels.Bytes(send), Recv: kernels.Bytes(recv), Kernel: k}
			if err := exec.Run(context.Background(), c); err != nil {
				errs[r] = err
				return
			}
			for i := range recv {
				want := int64(1000*p*(p-1)/2 + p*i)
				if recv[i] != want {
					errs[r] = fmt.Errorf("rank %d: recv[%d] = %d, want %d", r, i, recv[i], want)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecvReduce(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		for _, n := range []int{1, 7, 5000} { // 5000 int64 exceed the deferral size
			for _, p := range []int{1, 2, 5} {
				t.Run(fmt.Sprintf("emulated=%v/n=%d/p=%d", wrap, n, p), func(t *testing.T) { runChain(t, p, n, wrap) })
			}
		}
	}
}
