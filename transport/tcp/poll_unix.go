//go:build unix

package tcp

import "syscall"

// canPoll: the reader polls its socket (pollReader).
const canPoll = true

// readFD makes one read of fd, retried when interrupted.
func readFD(fd uintptr, b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), b)
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}

// writeFD makes one write to fd, retried when interrupted.
func writeFD(fd uintptr, b []byte) (int, error) {
	for {
		n, err := syscall.Write(int(fd), b)
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
