//go:build mpi && !mpich

package main

// The MPI that pkg-config's "mpi" names (Debian: Open MPI when it is
// installed, whatever else is).

// #cgo pkg-config: mpi
import "C"
