//go:build linux

package shm

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
)

// Segment is a shared-memory segment mapped into this process: an
// anonymous memory file (memfd) that lives while some process holds its
// descriptor or a mapping, and is never named in /dev/shm. It cannot leak
// after its processes exit, however they exit, and only a process that was
// handed the descriptor (over an authenticated Unix socket, see
// SendFD/RecvFD) can map it.
type Segment struct {
	fd  int
	mem []byte
}

// lineSize is the cache-line size every shared counter is aligned to, so
// that a producer's and a consumer's counters never share a line.
const lineSize = 64

// CreateSegment makes a segment of size bytes (rounded up to whole pages)
// and maps it. name is for debugging only (/proc/PID/fd shows it).
func CreateSegment(name string, size int) (*Segment, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%w: shm: segment of %d bytes", errs.InvalidArgument, size)
	}
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	fd, err := unix.MemfdCreate("scoll-"+name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shm: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm: segment of %d bytes: %w", size, err)
	}
	return mapSegment(fd, size)
}

// AttachSegment maps the segment behind fd, which the caller hands over:
// the Segment owns it from then on, also on error. The segment must hold at
// least min bytes.
func AttachSegment(fd, min int) (*Segment, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm: attach: %w", err)
	}
	if st.Size < int64(min) || st.Size <= 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: shm: segment of %d bytes, need %d", errs.InvalidArgument, st.Size, min)
	}
	return mapSegment(fd, int(st.Size))
}

func mapSegment(fd, size int) (*Segment, error) {
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm: mmap of %d bytes: %w", size, err)
	}
	return &Segment{fd: fd, mem: mem}, nil
}

// Bytes returns the mapped memory.
func (s *Segment) Bytes() []byte { return s.mem }

// FD returns the segment's descriptor, to hand to another process.
func (s *Segment) FD() int { return s.fd }

// Close unmaps the segment and closes its descriptor. The memory is freed
// when the last process has done so (or exited).
func (s *Segment) Close() error {
	if s.mem == nil {
		return nil
	}
	err := unix.Munmap(s.mem)
	s.mem = nil
	if cerr := unix.Close(s.fd); err == nil {
		err = cerr
	}
	return err
}

// u64 returns the shared 64-bit counter at offset off of mem, which must be
// 8-byte aligned.
func u64(mem []byte, off int) *atomic.Uint64 {
	_ = mem[off+7]
	return (*atomic.Uint64)(unsafe.Pointer(&mem[off]))
}

// u32 returns the shared 32-bit word at offset off of mem, 4-byte aligned.
func u32(mem []byte, off int) *atomic.Uint32 {
	_ = mem[off+3]
	return (*atomic.Uint32)(unsafe.Pointer(&mem[off]))
}
