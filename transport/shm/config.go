//go:build linux

package shm

import (
	"time"

	"github.com/scoll/scoll/internal/clock"
)

// Config configures an endpoint.
type Config struct {
	// RingBytes is the data capacity of each ring, a power of two (default
	// 64 KiB).
	RingBytes int
	// Poll is how often a sleeping endpoint checks its peers' liveness
	// (default 10 ms).
	Poll time.Duration
	// Ranks, when set, places the segment's ranks in a larger job: Ranks[i]
	// is the job's rank of the segment's rank i, JobSize the job's size.
	// The endpoint then speaks the job's ranks (Rank, Size, Msg.Peer), and
	// a peer off the segment is an invalid argument. Without them the
	// segment's ranks are the job.
	Ranks   []int
	JobSize int
	// CMAMin is the size from which a message of a collective call (not
	// Eager) goes by single copy: its receiver reads it from the sender's
	// memory with process_vm_readv(2) where the system permits (default
	// 64 KiB; negative: never). Smaller messages, eager ones and those to
	// ranks that cannot read this process go through the ring.
	CMAMin int
	// Spin is how long an idle progress goroutine polls its rings before
	// it sleeps on its doorbell (default 50 µs when the segment's ranks
	// have a core each, else none; negative: never polls).
	Spin time.Duration
	// BellSocket, when set, makes the progress goroutine sleep in the Go
	// runtime's network poller, on a datagram socket in the abstract
	// namespace named BellSocket + "." + the segment rank (its doorbell:
	// producers send it a byte), instead of in futex(2), which holds the
	// runtime's processor: set it when the process also waits on network
	// connections (the mixed transport), whose readers must run while the
	// rings are idle. It must be the same for every rank of the segment
	// and unique on the host (derive it from the job's secret).
	BellSocket string
	// MachineRanks is how many ranks of the job share this machine's CPUs,
	// when more than the segment's (several pretended hosts on one
	// machine): the endpoint then counts them when it decides whether the
	// ranks have a core each. 0: the segment's ranks.
	MachineRanks int

	// clock is where the endpoint takes time from: its peer checks, the
	// progress goroutine's timer and spinning (default clock.Real). Tests
	// set it (timeout_test.go); in a testing/synctest bubble clock.Real
	// tells the bubble's time.
	clock clock.Clock
}

// spin returns how long the progress goroutine of a segment of size ranks
// polls before it sleeps.
func (c Config) spin(size int) time.Duration {
	if c.Spin == 0 {
		if oversubscribed(size) {
			return 0
		}
		return 50 * time.Microsecond
	}
	return max(c.Spin, 0)
}

// cmaMin, ringBytes and poll return CMAMin, RingBytes and Poll, or their
// defaults.
func (c Config) cmaMin() int {
	if c.CMAMin == 0 {
		return 64 << 10
	}
	return c.CMAMin
}

func (c Config) ringBytes() int {
	if c.RingBytes == 0 {
		return 64 << 10
	}
	return c.RingBytes
}

func (c Config) poll() time.Duration {
	if c.Poll == 0 {
		return 10 * time.Millisecond
	}
	return c.Poll
}
