//go:build linux

package shm

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// oversubscribed reports whether size ranks of a segment have fewer cores
// than ranks between them, so that a rank spinning takes a peer's core.
// It counts the host's online CPUs, not this process's share (a launcher
// that binds each rank to a core leaves it one).
func oversubscribed(size int) bool { return size > hostCPUs() }

// hostCPUs returns the number of online CPUs of the host.
var hostCPUs = sync.OnceValue(func() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n := countCPUs(strings.TrimSpace(string(b))); n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
})

// countCPUs counts the CPUs of a Linux CPU list ("0-3,6,8-9"), or returns
// 0 when it cannot parse it.
func countCPUs(list string) int {
	n := 0
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
