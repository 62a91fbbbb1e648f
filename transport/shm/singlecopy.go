//go:build linux

package shm

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// handleCMA takes the first record of a single-copy message x from p:
// the receive posted for it reads it now, else Irecv will; a message of a
// failed call is refused at once, so that its sender is not kept waiting.
func (t *Transport) handleCMA(p int, x *incoming, rec []byte) {
	if len(rec) != hdrLen+8 || !x.sync || t.inMsg[p] != nil {
		t.corrupt(p, ErrCorrupt)
		return
	}
	x.addr = binary.LittleEndian.Uint64(rec[hdrLen:])
	x.got = x.total
	t.mu.Lock()
	if t.aborted[callKey{x.key.Comm, x.key.Seq}] != nil && x.key.Seq != 0 {
		t.mu.Unlock()
		t.ackID(p, x.id, ackFailed)
		return
	}
	done := t.proveLocked(p, x)
	defer func() {
		for _, m := range done {
			m.W.Done()
		}
	}()
	m := t.takePosted(p, x.key)
	if m == nil {
		t.unexp[p] = append(t.unexp[p], x) // Irecv may take it at once
	} else {
		x.m = m
	}
	t.mu.Unlock()
	if m != nil {
		t.read(p, x)
	}
}

// read completes the single-copy message x from p, matched by receive
// x.m: it reads the data from p's memory and then acks, so that p keeps
// its buffer until the copy is done.
func (t *Transport) read(p int, x *incoming) {
	m := x.m
	status := byte(ackOK)
	switch {
	case x.sig != m.Sig:
		m.Err = mismatch(t.global[p])
		status = ackMismatch
	case len(m.Buf) >= x.total && m.Combine == nil:
		if err := t.vmRead(p, m.Buf[:x.total], x.addr); err != nil {
			m.Err, status = err, ackFailed
		} else {
			m.N = x.total
		}
	default:
		data := make([]byte, x.total)
		if err := t.vmRead(p, data, x.addr); err != nil {
			m.Err, status = err, ackFailed
		} else {
			transport.Finish(m, data)
		}
	}
	t.ackID(p, x.id, status)
	m.W.Done()
}

// vmRead copies len(dst) bytes at addr in rank p's process into dst.
func (t *Transport) vmRead(p int, dst []byte, addr uint64) error {
	pid := t.pid(p)
	for len(dst) > 0 {
		local := []unix.Iovec{{Base: &dst[0]}}
		local[0].SetLen(len(dst))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(dst)}}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: shm: reading %d bytes from rank %d (pid %d): %v", errs.PeerFailed, len(dst), t.global[p], pid, err)
		}
		dst, addr = dst[n:], addr+uint64(n)
	}
	return nil
}

// SingleCopy reports whether this endpoint sends the large messages of
// collective calls to the job's rank peer by single copy (Config.CMAMin):
// peer has found that it can read this process's memory. Until the peer's
// endpoint is up and has probed, it reports false.
func (t *Transport) SingleCopy(peer int) bool {
	return t.Local(peer) && t.cfg.cmaMin() > 0 && t.canRead(t.localOf[peer], t.rank)
}

// canRead reports whether rank r has found that it can read rank p's
// memory.
func (t *Transport) canRead(r, p int) bool {
	if p >= maxCMARanks {
		return false
	}
	return u32(t.seg.Bytes(), r*lineSize+slotCanRead+4*(p/32)).Load()&(1<<(p%32)) != 0
}

// probePeers reads the probe word of every peer whose endpoint is up and
// has not been probed, and publishes in this rank's slot those whose
// memory it can read (the same user, and ptrace(2) rules and seccomp
// permitting process_vm_readv). Only the progress goroutine calls it.
func (t *Transport) probePeers() {
	mem := t.seg.Bytes()
	for p := range min(t.size, maxCMARanks) {
		if t.probed[p] || p == t.rank || t.state(p) != stateUp {
			continue
		}
		t.probed[p] = true
		if t.cfg.cmaMin() <= 0 {
			continue
		}
		var v [8]byte
		err := t.vmRead(p, v[:], u64(mem, p*lineSize+slotProbe).Load())
		if err == nil && binary.NativeEndian.Uint64(v[:]) == u64(mem, p*lineSize+slotMagic).Load() {
			u32(mem, t.rank*lineSize+slotCanRead+4*(p/32)).Or(1 << (p % 32))
		}
	}
}
