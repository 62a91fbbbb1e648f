package sim

import "github.com/scoll/scoll/schedule"

// fastBuild configures the builders of a simulation's schedule streams:
// the algorithms are verified elsewhere, and this is the hot path.
func fastBuild(b *schedule.Builder) { b.SkipOverlapCheck() }
