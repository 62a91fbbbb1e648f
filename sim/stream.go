package sim

import (
	"fmt"
	"iter"

	"github.com/scoll/scoll/schedule"
)

// ranks streams every rank's schedule round by round, so that a simulation
// holds one round per rank at a time, never the whole O(P²) schedule.
type ranks struct {
	next []func() (schedule.Round, bool)
	stop []func()
	errs []error
}

// newRanks starts the per-rank streams of gen for size ranks.
func newRanks(size int, gen schedule.Generator) *ranks {
	rs := &ranks{next: make([]func() (schedule.Round, bool), size), stop: make([]func(), size), errs: make([]error, size)}
	for r := range size {
		rs.next[r], rs.stop[r] = iter.Pull(func(yield func(schedule.Round) bool) {
			b := schedule.NewStream(r, size, func(rd schedule.Round, _ int) bool { return yield(rd) })
			b.SkipOverlapCheck() // the algorithms are verified elsewhere; this is the hot path
			gen(b)
			b.EndRound()
			if err := b.Err(); err != nil {
				rs.errs[r] = err
			}
		})
	}
	return rs
}

// round returns rank r's next round (valid until the next call for r) and
// false when r has no more rounds.
func (rs *ranks) round(r int) (schedule.Round, bool, error) {
	if rs.next[r] == nil {
		return nil, false, nil
	}
	rd, ok := rs.next[r]()
	if !ok {
		rs.next[r] = nil
		if err := rs.errs[r]; err != nil {
			return nil, false, fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return rd, ok, nil
}

func (rs *ranks) size() int { return len(rs.next) }

// close stops every stream.
func (rs *ranks) close() {
	for _, s := range rs.stop {
		if s != nil {
			s()
		}
	}
}
