//go:build linux

package tcp

import "syscall"

// osYield gives the CPU to another runnable thread, if any.
func osYield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
