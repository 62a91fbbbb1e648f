//go:build mpi && mpich

package main

// With the extra build tag mpich the library builds against MPICH's
// mpich.pc (libmpich-dev): MPICH's ABI differs from Open MPI's, so each
// MPI needs its own build (scripts/build-dropin.sh).

// #cgo pkg-config: mpich
import "C"
