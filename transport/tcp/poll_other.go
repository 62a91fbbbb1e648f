//go:build !linux

package tcp

// osYield does nothing where sched_yield is not at hand: the reader then
// only lets its own process's goroutines run while it polls.
func osYield() {}
