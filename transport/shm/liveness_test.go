//go:build linux

package shm

import (
	"os"
	"os/exec"
	"testing"
	"time"
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
	cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for w.Alive() {
		if time.Now().After(deadline) {
			t.Fatal("a killed child still reads as alive")
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Wait()
	if _, err := WatchProcess(cmd.Process.Pid); err == nil {
		t.Error("watching a reaped process succeeded")
	}
	if _, err := WatchProcess(0); err == nil {
		t.Error("watching pid 0 succeeded")
	}
}
