//go:build !unix

package tcp

import "syscall"

// canPoll: outside Unix the reader blocks in the network poller.
const canPoll = false

func readFD(fd uintptr, b []byte) (int, error) { return 0, syscall.EINVAL }

func writeFD(fd uintptr, b []byte) (int, error) { return 0, syscall.EINVAL }
