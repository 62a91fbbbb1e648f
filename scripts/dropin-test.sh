#!/usr/bin/env bash
# The drop-in library's own test under mpirun: builds libscollmpi.so and
# cmd/libscollmpi/testdata/collectives.c with MPICC (default mpicc), runs
# the test natively and with the library preloaded and linked, at 1 to 5
# processes, and checks from SCOLL_MPI_REPORT that the library handled the
# calls it should (and forwarded the one it should not: a user operator).
#
#   scripts/dropin-test.sh [MPICC]
set -euo pipefail
cd "$(dirname "$0")/.."
mpicc=${1:-mpicc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags mpi -buildmode=c-shared -o "$tmp/libscollmpi.so" ./cmd/libscollmpi
"$mpicc" -O1 -o "$tmp/native" cmd/libscollmpi/testdata/collectives.c
"$mpicc" -O1 -o "$tmp/linked" cmd/libscollmpi/testdata/collectives.c -L"$tmp" -lscollmpi
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
# want_report FILE NP: every rank handled 312 calls (rank 0 313: it is
# alone in a split's communicator and calls MPI_Barrier there) and
# forwarded 1 (the user operator).
want_report() {
	local lines
	lines=$(grep -cE '^\{"rank":(0,"handled":313|[1-9][0-9]*,"handled":312),"forwarded":1,' "$1" || true)
	if [ "$lines" -ne "$2" ]; then
		echo "dropin: $1: want $2 ranks with 312 handled (rank 0: 313) and 1 forwarded calls, got:" >&2
		cat "$1" >&2
		exit 1
	fi
}
for np in 1 2 3 4 5; do
	timeout 120 mpirun --oversubscribe -np "$np" "$tmp/native" | grep -q '^ok:'
	rm -f "$tmp/report"
	timeout 120 mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$tmp/libscollmpi.so" -x SCOLL_MPI_REPORT="$tmp/report" "$tmp/native" | grep -q '^ok:'
	want_report "$tmp/report" "$np"
	rm -f "$tmp/report"
	timeout 120 mpirun --oversubscribe -np "$np" -x LD_LIBRARY_PATH="$tmp" -x SCOLL_MPI_REPORT="$tmp/report" "$tmp/linked" | grep -q '^ok:'
	want_report "$tmp/report" "$np"
	echo "dropin: ok at $np processes (native, preloaded, linked)"
done
# SCOLL_ALGORITHM_ALLREDUCE=native leaves every MPI_Allreduce to the MPI
# library; an algorithm named for another collective reaches scoll.
rm -f "$tmp/report"
timeout 120 mpirun --oversubscribe -np 3 -x LD_PRELOAD="$tmp/libscollmpi.so" -x SCOLL_MPI_REPORT="$tmp/report" \
	-x SCOLL_ALGORITHM_ALLREDUCE=native -x SCOLL_ALGORITHM_BCAST=binomial "$tmp/native" | grep -q '^ok:'
if [ "$(grep -cE '"allreduce":\{"forwarded":[1-9][0-9]*,"handled":0\}.*"bcast":\{"forwarded":0,' "$tmp/report")" -ne 3 ]; then
	echo "dropin: SCOLL_ALGORITHM_ALLREDUCE=native: want every allreduce forwarded, every bcast handled:" >&2
	cat "$tmp/report" >&2
	exit 1
fi
echo "dropin: ok with SCOLL_ALGORITHM_ALLREDUCE=native"
