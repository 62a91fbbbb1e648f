package bench

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// bigWorld is the number of in-process ranks from which a finished world's
// memory is handed back to the operating system at once (releaseWorld).
const bigWorld = 8192

// releaseWorld returns the memory of a finished in-process world of n
// ranks to the operating system when n is large. Without it, a process
// that runs several configurations of tens of thousands of ranks in a row
// grows by each one's peak (measured at 65,536 ranks: 6.1, 13.2, 19.6,
// 24.5 GB of system memory after four hash splits, almost all of it idle
// heap the next world did not reuse), and the kernel kills it; with it the
// process stays at one world's peak (6.1–6.9 GB).
func releaseWorld(n int) {
	if n >= bigWorld {
		debug.FreeOSMemory()
	}
}

// PeakGCPercent is the garbage collector's default target while a split's
// peak memory is measured (SplitConfig.PeakGCPercent): a collection starts
// whenever the heap has grown by this share of what was live after the
// last one, so the live heap is known at least that often.
const PeakGCPercent = 2

// peakMeter samples the live memory of the process while it runs: the
// heap the last collection found live (runtime/metrics
// /gc/heap/live:bytes) plus the goroutine stacks, every millisecond,
// with the collector running often (gc percent of growth). The largest
// sample less the reading at the start is the peak a measured call added,
// to within gc percent of the live heap (the heap can grow that much
// between two collections).
type peakMeter struct {
	stop, done chan struct{}
	oldGC      int
	base       uint64
	resolution uint64

	mu   sync.Mutex
	peak uint64
}

var peakSamples = []string{"/gc/heap/live:bytes", "/memory/classes/heap/stacks:bytes"}

// newSamples returns the samples liveNow reads.
func newSamples() []metrics.Sample {
	s := make([]metrics.Sample, len(peakSamples))
	for i, n := range peakSamples {
		s[i].Name = n
	}
	return s
}

// liveNow reads live heap and stacks.
func liveNow(s []metrics.Sample) uint64 {
	metrics.Read(s)
	var v uint64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			v += x.Value.Uint64()
		}
	}
	return v
}

// startPeak collects garbage, reads the base and starts sampling.
func startPeak(gc int) *peakMeter {
	m := &peakMeter{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.GC()
	s := newSamples()
	m.base = liveNow(s)
	m.peak = m.base
	m.resolution = m.base * uint64(gc) / 100
	m.oldGC = debug.SetGCPercent(gc)
	go func() {
		defer close(m.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := liveNow(s)
			m.mu.Lock()
			m.peak = max(m.peak, v)
			m.mu.Unlock()
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// end stops sampling, collects once more (the state still live at the end
// counts too) and returns the peak over the base and the resolution.
func (m *peakMeter) end() (peak, resolution uint64) {
	close(m.stop)
	<-m.done
	runtime.GC()
	last := liveNow(newSamples())
	debug.SetGCPercent(m.oldGC)
	m.mu.Lock()
	defer m.mu.Unlock()
	p := max(m.peak, last)
	if p < m.base {
		return 0, m.resolution
	}
	return p - m.base, m.resolution
}
