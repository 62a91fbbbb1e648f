package schedule_test

import (
	"fmt"

	"github.com/scoll/scoll/schedule"
)

// counter is a replay consumer that completes both ends of every message
// when they meet (rendezvous) and counts rounds and messages.
type counter struct {
	e            *schedule.Replay
	rounds, msgs int
}

func (c *counter) Start(r, index int, rd schedule.Round, scratch int) error { c.rounds++; return nil }
func (c *counter) Finish(r int) error                                       { return nil }
func (c *counter) Match(send, recv schedule.Ref) error {
	c.msgs++
	c.e.Complete(int(send.Rank))
	c.e.Complete(int(recv.Rank))
	return nil
}

// A replay drives every rank's schedule in dependency order and lets its
// consumer decide what a round, a match and a finished round mean: here,
// counting a ring's rounds and messages.
func ExampleNewReplay() {
	ring := func(b *schedule.Builder) {
		r, p := b.Rank(), b.Size()
		for k := range p - 1 {
			b.Send((r+1)%p, schedule.RecvBuf(k, 1))
			b.Recv((r+p-1)%p, schedule.RecvBuf(k+1, 1))
			b.EndRound()
		}
	}
	c := &counter{}
	c.e = schedule.NewReplay(5, ring, c, schedule.ReplayOptions{})
	defer c.e.Close()
	if err := c.e.Run(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c.rounds, "rounds,", c.msgs, "messages")
	// Output: 20 rounds, 20 messages
}
