//go:build mpi && !mpich

package mpi

// The generic pkg-config name "mpi" follows Debian's alternatives
// (update-alternatives --display mpi): Open MPI's ompi.pc when
// libopenmpi-dev is installed, and it stays so when MPICH is added.

// #cgo pkg-config: mpi
import "C"
