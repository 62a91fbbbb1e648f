//go:build unix

package launch

import (
	"os"
	"os/exec"
	"syscall"
)

// stopSignal is a signal the launcher sends to a child's process group.
type stopSignal = syscall.Signal

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcAttr puts the child in a process group of its own, so that
// signals to the group reach what it starts and a Ctrl-C at the terminal
// reaches only the launcher, which forwards it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// signalGroup sends sig to the process group led by p. Errors (the group
// is gone) are ignored. The group id is the leader's pid, which the kernel
// does not reuse while the group has members, nor soon after.
func signalGroup(p *os.Process, sig stopSignal) {
	syscall.Kill(-p.Pid, sig)
}

// exitStatus returns the exit status of a reaped child, or -1 and the
// signal that killed it.
func exitStatus(st *os.ProcessState) (status, sig int) {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, int(ws.Signal())
	}
	return st.ExitCode(), 0
}
