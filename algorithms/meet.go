package algorithms

import "github.com/scoll/scoll/schedule"

// Meet: the transport's shared-memory meeting (transport.Meeter;
// in-process ranks), registered for allreduce, reduce, bcast and barrier.
// Every rank brings its buffers to the meeting and parks; the last to
// arrive combines every input in rank order, writes every rank's result and
// wakes them: each rank wakes once, where a message schedule wakes it once
// per message, which is what matters when ranks outnumber the CPUs.
//
// The schedule below is the same data movement as messages, for the
// verifier, the simulators and the cost model, and for transports without
// meetings: a combiner (the root; rank 0 for allreduce and barrier) receives
// every input and folds them in rank order, then sends every rank its
// result.
//
// Cost of the native path: two hand-offs (arrive, wake) and, on the
// combiner, (P−1)·n bytes read and reduced and (P−1)·n written.

// meetSchedule builds the meeting's messages.
func meetSchedule(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	c := 0
	if p.Coll.Rooted() {
		c = p.Root
	}
	buf, in := schedule.RecvBuf(0, n), p.input()
	if p.Coll == schedule.Barrier {
		buf, in = barrierToken, barrierToken
	}
	if P == 1 {
		if p.Coll != schedule.Barrier && p.Coll != schedule.Bcast {
			b.Copy(buf, in)
			b.EndRound()
		}
		return
	}
	if p.Coll != schedule.Bcast { // everyone's input to the combiner
		if r != c {
			b.Send(c, in)
		} else {
			slots := b.Alloc((P - 1) * n)
			slot := func(q int) schedule.Region {
				if q > c {
					q--
				}
				return slots.Sub(q*n, n)
			}
			if p.Coll == schedule.Barrier {
				slot = func(int) schedule.Region { return barrierToken }
			}
			for q := range P {
				if q != c {
					b.Recv(q, slot(q))
				}
			}
			if p.Coll != schedule.Barrier {
				foldInOrder(b, buf, in, c, P, slot)
			}
		}
		b.EndRound()
	}
	if p.Coll == schedule.Reduce {
		return
	}
	for q := range P { // the result from the combiner to everyone
		if r == c && q != c {
			b.Send(q, buf)
		}
	}
	if r != c {
		b.Recv(c, buf)
	}
	b.EndRound()
}

func meetCost(p *Params) Cost {
	// The combiner reads the P−1 inputs it reduces (none in bcast) and
	// writes the P−1 results it hands out (none in reduce).
	k, nb := float64(p.Size-1), p.bytes(p.Count)
	var in, out float64
	if p.Coll != schedule.Bcast {
		in = k * nb
	}
	if p.Coll != schedule.Reduce {
		out = k * nb
	}
	c := Cost{Alpha: 2, Beta: in + out}
	if p.Coll.Reduces() {
		c.Gamma = in
	}
	return c
}

// meetWhen is the meeting's entry in scoll algorithms.
const meetWhen = "native on a transport with meetings (in-process ranks); the default there when the ranks " +
	"outnumber GOMAXPROCS and n ≤ 4 KiB; elsewhere its messages"

func init() {
	register(Info{Name: Meet, Path: MeetPath, When: meetWhen, Linear: true, Build: meetSchedule, Cost: meetCost,
		Doc:    "shared-memory meeting: the last rank to arrive combines every input and writes every result",
		Source: "scoll (in-process path for more ranks than CPUs)"},
		schedule.Allreduce, schedule.Reduce, schedule.Bcast, schedule.Barrier)
}
