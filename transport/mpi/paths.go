//go:build mpi

package mpi

import "github.com/scoll/scoll/transport"

func init() {
	transport.RegisterPaths("mpi", transport.PathInfo{Name: "point-to-point",
		Doc:  "MPI_Isend and MPI_Irecv of the installed MPI library, progressed by the transport",
		When: "every message (build tag mpi, a job started by mpirun or srun)"})
}
