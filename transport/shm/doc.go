// Package shm is the shared-memory transport's machinery for processes on
// one host: segments that only the job's processes can map (anonymous
// memory files handed over an authenticated Unix socket, never named in
// /dev/shm, so that nothing leaks however a process ends), lock-free
// single-producer single-consumer rings of records in them, doorbells
// (futexes on shared words) for waiting without spinning, single copies
// with process_vm_readv(2), exchange slots for small collectives, and the
// Transport that joins them (docs/shm.md).
//
// It is Linux-only; on other systems the package is empty and scoll uses
// TCP between local processes.
package shm
