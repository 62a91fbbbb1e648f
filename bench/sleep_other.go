//go:build !linux

package bench

import "time"

// blockFor blocks the calling goroutine for about d without spinning
// (time.Sleep: its wake-up may be a millisecond or more late).
func blockFor(d time.Duration) { time.Sleep(d) }
