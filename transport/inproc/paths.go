package inproc

import (
	"fmt"

	"github.com/scoll/scoll/transport"
)

func init() {
	transport.RegisterPaths("inproc", []transport.PathInfo{
		{Name: "lanes", Doc: "lock-free per-pair rings: a message of at most 64 bytes is copied into a slot, a longer one is read straight from the sender's buffer",
			When: fmt.Sprintf("the messages of collective calls when the world has 2..%d ranks and no more than GOMAXPROCS (scoll.WithLanes or inproc.Lanes turns them on or off)", laneMaxRanks)},
		{Name: "mailbox", Doc: "per-rank mailbox under a lock: whichever side arrives second copies the data once and wakes the other",
			When: "point-to-point messages, and collective messages when the lanes are off"},
		{Name: "exchange", Doc: "every rank publishes its input in a slot and reads its peers' (the exchange algorithm's native path)",
			When: "blocking calls with algorithm exchange (the default for small calls when ranks ≤ GOMAXPROCS; scoll.WithoutAlgorithm(\"exchange\") keeps a call off it, inproc.Exchanges turns it off)"},
		{Name: "meet", Doc: "the last rank to arrive runs the whole call on every rank's buffers and wakes them (the meet algorithm's native path)",
			When: "calls with algorithm meet (the default for small calls when the ranks outnumber GOMAXPROCS; scoll.WithoutAlgorithm(\"meet\") keeps a call off it)"},
	}...)
}
