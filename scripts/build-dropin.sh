#!/usr/bin/env bash
# Builds the drop-in library for the MPI that MPICC belongs to (default
# mpicc): Open MPI (mpicc.openmpi) or MPICH (mpicc.mpich), whose ABIs
# differ. Writes libscollmpi.so, or the path given as OUT.
#
#   scripts/build-dropin.sh [MPICC [OUT]]
set -euo pipefail
cd "$(dirname "$0")/.."
mpicc=${1:-mpicc}
out=${2:-libscollmpi.so}
tags=mpi
if "$mpicc" -show 2>/dev/null | grep -q -- '-lmpich'; then
	tags="mpi mpich"
fi
go build -tags "$tags" -buildmode=c-shared -o "$out" ./cmd/libscollmpi
echo "built $out for $("$mpicc" -show | awk '{print $1; exit}') ($tags)"
