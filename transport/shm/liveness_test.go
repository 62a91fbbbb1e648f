//go:build linux

package shm

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWatch watches a child process that exits on demand, and this
// process, which stays alive.
func TestWatch(t *testing.T) {
	self, err := WatchProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	if !self.Alive() {
		t.Fatal("this process reads as dead")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	w, err := WatchProcess(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !w.Alive() {
		t.Fatal("a running child reads as dead")
	}
	// The child is real: Alive asks the kernel. Waiting for its death
	// without reaping it (WNOWAIT) leaves a zombie, which must read as
	// dead at once.
	cmd.Process.Kill()
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if w.Alive() {
		t.Fatal("a killed child, not yet reaped, reads as alive")
	}
	cmd.Wait()
	if w.Alive() {
		t.Fatal("a killed and reaped child reads as alive")
	}
	if _, err := WatchProcess(cmd.Process.Pid); err == nil {
		t.Error("watching a reaped process succeeded")
	}
	if _, err := WatchProcess(0); err == nil {
		t.Error("watching pid 0 succeeded")
	}
}
