//go:build mpi

package scoll

import (
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/mpi"
)

// With the mpi build tag, Init runs over the MPI library when the process
// was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx);
// otherwise (alone, or under scoll run) it takes the TCP path.
func init() {
	mpiInit = func() (transport.Transport, bool, error) {
		if !mpi.Launched() {
			return nil, false, nil
		}
		t, err := mpi.Init()
		if err != nil {
			return nil, true, err
		}
		return t, true, nil
	}
}
