#!/usr/bin/env bash
# Runs examples/dropin/imbalance.c natively and under scoll's drop-in
# library, with the clairvoyant reduce and with a described network, and
# shows from SCOLL_MPI_REPORT which algorithms scoll ran. Open MPI's mpirun.
#
#   examples/dropin/run.sh [NP [STEPS [DELAY_US]]]     (default 8 50 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
np=${1:-8} steps=${2:-50} delay=${3:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
go build -tags mpi -buildmode=c-shared -o "$tmp/libscollmpi.so" ./cmd/libscollmpi
mpicc -O2 -o "$tmp/imbalance" examples/dropin/imbalance.c
run() { # run NAME [VAR=VALUE...]: the program with the drop-in and the variables
	local name=$1 vars=()
	shift
	for v in "$@"; do vars+=(-x "$v"); done
	rm -f "$tmp/report"
	printf '%-28s ' "$name"
	mpirun --oversubscribe -np "$np" "${vars[@]}" "$tmp/imbalance" "$steps" "$delay"
	if [ -f "$tmp/report" ]; then
		printf '%-28s scoll ran: %s\n' "" "$(head -1 "$tmp/report" | grep -o '"algorithms":{[^}]*}' | tr '\n' ' ')"
	fi
}
run native
run "clairvoyant reduce" LD_PRELOAD="$tmp/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_ALGORITHM_REDUCE=clairvoyant
side=$(awk -v n="$np" 'BEGIN { s = 1; while ((s + 1) ^ 3 <= n) s++; print s }')
if [ $((side * side * side)) -eq "$np" ]; then
	run "torus:${side}x${side}x${side}" LD_PRELOAD="$tmp/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_TOPOLOGY="torus:${side}x${side}x${side}"
else
	run "torus:${np}" LD_PRELOAD="$tmp/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_TOPOLOGY="torus:${np}"
fi
