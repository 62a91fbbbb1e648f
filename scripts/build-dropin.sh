#!/usr/bin/env bash
# Builds the drop-in library for the MPI that MPICC belongs to (default
# mpicc): Open MPI (mpicc.openmpi) or MPICH (mpicc.mpich), whose ABIs
# differ. Writes libscollmpi.so, or the path given as OUT.
#
#   scripts/build-dropin.sh [MPICC [OUT]]
#
# The library compiles and links against the MPI that pkg-config names:
# "mpi" (Debian: Open MPI) with build tag mpi, "mpich" (libmpich-dev) with
# build tags "mpi mpich" (cmd/libscollmpi/cgo_*.go).
set -euo pipefail
cd "$(dirname "$0")/.."
mpicc=${1:-mpicc}
out=${2:-libscollmpi.so}
if ! command -v "$mpicc" >/dev/null 2>&1; then
	echo "build-dropin: no $mpicc" >&2
	exit 1
fi
tags=mpi pc=mpi
if "$mpicc" -show 2>/dev/null | grep -q -- '-lmpich'; then
	tags="mpi mpich" pc=mpich
fi
if ! pkg-config --exists "$pc"; then
	echo "build-dropin: $mpicc links $pc, but pkg-config knows no $pc.pc (Debian: libmpich-dev or libopenmpi-dev)" >&2
	exit 1
fi
go build -tags "$tags" -buildmode=c-shared -o "$out" ./cmd/libscollmpi
echo "built $out for $mpicc: $pc $(pkg-config --modversion "$pc") (tags $tags)"
