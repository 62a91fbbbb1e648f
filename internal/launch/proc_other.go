//go:build !unix

package launch

import (
	"os"
	"os/exec"
)

// stopSignal stands for the two signals of the Unix version; both kill here.
type stopSignal int

const (
	sigTerm stopSignal = iota
	sigKill
)

// setProcAttr does nothing: there are no process groups to set up.
func setProcAttr(*exec.Cmd) {}

// signalGroup kills the child itself: without process groups or SIGTERM,
// stopping a rank kills it at once.
func signalGroup(p *os.Process, _ stopSignal) {
	p.Kill()
}

// exitStatus returns the exit status of a reaped child.
func exitStatus(st *os.ProcessState) (status, sig int) {
	return st.ExitCode(), 0
}
