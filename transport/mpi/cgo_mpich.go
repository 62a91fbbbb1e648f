//go:build mpi && mpich

package mpi

// With the extra build tag mpich the package builds against MPICH's
// mpich.pc (libmpich-dev) whatever the mpi alternative points to.

// #cgo pkg-config: mpich
import "C"
