package launch

import "syscall"

// setPdeathsig has the kernel kill the child when the launcher dies.
//
// The kernel sends it when the thread that forked the child exits; the Go
// runtime does not end threads except those of goroutines that return while
// locked with runtime.LockOSThread, and the locked thread Run starts bound
// children from lives until they are reaped.
func setPdeathsig(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}
