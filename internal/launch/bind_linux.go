package launch

import (
	"syscall"
	"unsafe"
)

// cpuMask is an affinity mask in the layout of sched_getaffinity(2): bit i
// of the words is CPU i.
type cpuMask [1024 / 64]uint64

// allowedCPUs returns the CPUs the calling thread may run on, in
// increasing order, or nil if the kernel will not tell.
func allowedCPUs() []int {
	var m cpuMask
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
		return nil
	}
	var cpus []int
	for i := range len(m) * 64 {
		if m[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// bindThread restricts the calling thread, and so the processes it forks
// from now on, to cpus. The caller has locked its goroutine to the thread.
func bindThread(cpus []int) error {
	var m cpuMask
	for _, c := range cpus {
		if c < 0 || c >= len(m)*64 {
			return syscall.EINVAL
		}
		m[c/64] |= 1 << (c % 64)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
		return e
	}
	return nil
}
