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
// combiner, (P−1)·n bytes read and reduced and (P−1)·n written. Its
// registered Cost is the stand-in schedule's.

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

// meetCost is the cost of the stand-in schedule: the combiner's P−1
// receives serialise on its port, it folds them, and its P−1 sends of the
// result serialise again (reduce ends after the fold, bcast has only the
// sends).
func meetCost(p *Params) Cost {
	k, nb := float64(p.Size-1), p.bytes(p.Count)
	var c Cost
	if p.Coll != schedule.Bcast {
		c = Cost{Alpha: k, Beta: k * nb}
		if p.Coll.Reduces() {
			c.Gamma = k * nb
		}
	}
	if p.Coll != schedule.Reduce {
		c.Alpha += k
		c.Beta += k * nb
	}
	return c
}

// meetBytes is the largest input per rank with which the default choice
// takes a meeting.
const meetBytes = 4096

// MeetRule is when the meeting runs natively: on a transport that meets;
// by default when the ranks outnumber the CPUs (message schedules then pay
// a goroutine wake-up per message, a meeting wakes each rank once) and the
// input is at most meetBytes.
var MeetRule = Rule{Needs: CapMeet, Prefers: CapOversubscribed, MaxBytes: meetBytes, Measure: Input}

func init() {
	register(Info{Name: Meet, Path: MeetPath, Rule: &MeetRule, Linear: true, Build: meetSchedule, Cost: meetCost,
		Doc:    "shared-memory meeting: the last rank to arrive combines every input and writes every result",
		Source: "scoll (in-process path for more ranks than CPUs)"},
		schedule.Allreduce, schedule.Reduce, schedule.Bcast, schedule.Barrier)
}
