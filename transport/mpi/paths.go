//go:build mpi

package mpi

import "github.com/scoll/scoll/transport"

func init() {
	transport.RegisterPaths("mpi", transport.PathInfo{Name: "point-to-point",
		Doc:  "MPI_Isend and MPI_Irecv of the installed MPI library, progressed by the transport",
		When: "every message (build tag mpi, a job started by mpirun or srun)"},
		transport.PathInfo{Name: "exchange",
			Doc:  "one persistent MPI allgather of fixed-size records per call (transport.Exchanger)",
			When: "blocking calls of the world communicator with up to 96 bytes per rank that the exchange rule takes; WithoutAlgorithm(\"exchange\") turns it off"})
}
