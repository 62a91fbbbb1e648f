//go:build unix

package tcp

import (
	"syscall"
	"unsafe"
)

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

// peekFD looks at fd's next byte without taking it or waiting: n is 1
// when there is data, 0 at the end of the stream; err is EAGAIN when
// there is nothing yet.
func peekFD(fd uintptr) (int, error) {
	var b [1]byte
	for {
		n, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, errno
	}
}
