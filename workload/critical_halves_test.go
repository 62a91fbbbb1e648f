package workload_test

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
)

// The two halves of the critical path (model.CriticalPath) are two
// consumers of the replay core with different models: the α-β-γ half is a
// rendezvous replay (a message completes at both ends once both ports have
// carried it, α per message in turn on each port), the LogGP half an eager
// event simulation (a send completes once its CPU overhead is paid, the
// receiver's one CPU takes a message when it arrives, posted receive or
// not, and L overlaps between a port's messages). No LogGP parameters turn
// one into the other: with L = α, o = g = 0 and G = β most golden
// schedules get different times (132 of 137 when this was written).
//
// They agree where both reduce to the same thing. With messages free
// (α = β = 0, L = o = g = G = 0) and the same γ, a round ends at the latest
// of its own start and the starts of the rounds its messages come from,
// plus γ per byte it reduces; in α-β-γ also the starts of the rounds its
// messages go to, since a send waits for its receive to be posted, and in
// LogGP not. charged removes that difference and makes every message cost:
// each receive answers its sender with an empty acknowledgement from its
// round (a LogGP sender now waits for its receiver's round, as in the
// rendezvous), and each receive reduces what it receives (every hop of a
// chain costs γ per byte in both). The acknowledgements meet the receives
// meant for them on every schedule the rendezvous replay can run (one that
// crossed a message between the same ranks would deadlock it), so the
// halves must give the same time, exactly: times are sums of quarters,
// exact in the α-β-γ half's floats and in the LogGP half's integer quanta.

// charged is gen's schedule with every receive reducing its message into
// its region and, with acks, answered by an empty message from the
// receiver's round to the sender's. keepEmpty keeps gen's own empty
// messages (a barrier's).
func charged(gen schedule.Generator, keepEmpty, acks bool) schedule.Generator {
	return func(b *schedule.Builder) {
		if acks || keepEmpty {
			b.KeepEmpty()
		}
		var local []schedule.Op
		inner := schedule.NewStream(b.Rank(), b.Size(), func(rd schedule.Round, scratch int) bool {
			if n := scratch - b.ScratchLen(); n > 0 {
				b.Alloc(n)
			}
			local = local[:0]
			for _, o := range rd {
				switch o.Kind {
				case schedule.OpSend:
					b.Send(o.Peer, o.Src)
				case schedule.OpRecv:
					b.RecvReduce(o.Peer, o.Dst, o.Dst, false)
				case schedule.OpRecvReduce:
					b.RecvReduce(o.Peer, o.Dst, o.Src, o.SrcLeft)
				default:
					local = append(local, o)
				}
			}
			for _, o := range rd {
				switch {
				case !acks:
				case o.Kind == schedule.OpSend:
					b.Recv(o.Peer, schedule.RecvBuf(0, 0))
				case o.Kind.IsRecv():
					b.Send(o.Peer, schedule.SendBuf(0, 0))
				}
			}
			for _, o := range local {
				if o.Kind == schedule.OpReduce {
					b.ReduceOrdered(o.Dst, o.Src, o.SrcLeft)
				} else {
					b.Copy(o.Dst, o.Src)
				}
			}
			b.EndRound()
			return b.Err() == nil
		})
		if keepEmpty {
			inner.KeepEmpty()
		}
		gen(inner)
		inner.EndRound()
		if err := inner.Err(); err != nil {
			b.Fail(err)
		}
	}
}

// TestCriticalPathHalvesAgree runs both halves of the critical path on
// every registered algorithm's golden schedule (workload.GoldenParams),
// charged and acknowledged, with messages free and γ = 0.25 s/B, the ranks
// arriving together and staggered: the α-β-γ and the LogGP times must be
// equal, so the halves walk the same messages between the same rounds,
// wait for the same arrivals and charge the same reductions.
// Acknowledgements cost nothing in α-β-γ, so its time must also be that of
// the charged schedule without them.
func TestCriticalPathHalvesAgree(t *testing.T) {
	p := model.Params{Gamma: 0.25}
	n := 0
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			ap, ok := workload.GoldenParams(in)
			if !ok {
				t.Errorf("%s/%s takes none of the golden calls", c, in.Name)
				continue
			}
			size, keep := ap.Size, c == schedule.Barrier
			gen := charged(in.Generator(ap), keep, true)
			cnt, err := model.Count(size, ap.ElemSize, gen)
			if err != nil {
				t.Fatalf("%s/%s: %v", c, in.Name, err)
			}
			together, staggered := make([]float64, size), make([]float64, size)
			for r := range staggered {
				staggered[r] = float64((3*r+1)%size) * 1.5
			}
			for k, arrival := range [][]float64{together, staggered} {
				cp, err := model.CriticalPathArrivals(size, ap.ElemSize, gen, p, arrival)
				if err != nil {
					t.Fatalf("%s/%s: %v", c, in.Name, err)
				}
				n++
				if cp.LogGP != cp.AlphaBetaGamma {
					t.Errorf("%s/%s on %d ranks, arrivals %v: α-β-γ %g, LogGP %g", c, in.Name, size, arrival, cp.AlphaBetaGamma, cp.LogGP)
				}
				// A schedule that moves bytes takes time even when the
				// ranks arrive together: the comparison is not 0 = 0.
				if k == 0 && cnt.Total.BytesRecv > 0 && cp.AlphaBetaGamma == 0 {
					t.Errorf("%s/%s: no time for %d bytes received", c, in.Name, cnt.Total.BytesRecv)
				}
				un, err := model.CriticalPathArrivals(size, ap.ElemSize, charged(in.Generator(ap), keep, false), p, arrival)
				if err != nil {
					t.Fatalf("%s/%s: %v", c, in.Name, err)
				}
				if un.AlphaBetaGamma != cp.AlphaBetaGamma {
					t.Errorf("%s/%s on %d ranks, arrivals %v: α-β-γ %g with acknowledgements, %g without", c, in.Name, size, arrival, cp.AlphaBetaGamma, un.AlphaBetaGamma)
				}
			}
		}
	}
	t.Logf("%d schedules × arrivals compared", n)
}
