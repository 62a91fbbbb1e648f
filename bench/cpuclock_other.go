//go:build !linux

package bench

import "time"

var clockStart = time.Now()

// threadCPU falls back to the wall clock where thread CPU time is not
// available.
func threadCPU() time.Duration { return time.Since(clockStart) }

// HaveThreadCPU reports whether phases can be timed as thread CPU time.
const HaveThreadCPU = false
