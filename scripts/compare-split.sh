#!/usr/bin/env bash
# compare-split.sh: scoll's Comm.Split next to the MPI library's
# MPI_Comm_split, in one run, on this host.
#
#   scoll-tcp   scoll split --world under scoll run (one process per rank,
#               scoll's TCP transport), per split algorithm
#   ompi-tcp    mpisplit under mpirun --mca btl self,tcp
#   scoll-mpi   scoll split --world built with -tags mpi under mpirun (scoll
#               over the MPI library), per split algorithm
#   ompi        mpisplit under mpirun with the library's default transports
#               (shared memory between the processes of one host)
#
# Timing is the same on both sides: per repetition a barrier, one split, its
# free; the repetition's time is the slowest rank's. Each tool reports the
# median of SPLITS repetitions; the four kinds are interleaved REPS times
# and the median of those medians is shown.
#
#   scripts/compare-split.sh
#   NPS="2 4 8" COLORS=1 KEYS=random REPS=3 scripts/compare-split.sh
#
# Needs Go, mpicc and mpirun (Debian: apt-get install openmpi-bin
# libopenmpi-dev).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
NPS=${NPS:-"2 4 8 16 32 64"}
COLORS=${COLORS:-1}
KEYS=${KEYS:-random}
REPS=${REPS:-3}
SPLITS=${SPLITS:-21}
ALGS=${ALGS:-"allgather,merge,cheng"}
make_work
build_mpi mpisplit
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, colors=$COLORS keys=$KEYS, $SPLITS splits per measurement, medians of $REPS"

# scoll split --world under a launcher; appends "algorithm,median_ms" lines.
scoll_run() { # out launcher...
	local out=$1
	shift
	"$@" split --world --algorithm "$ALGS" --group table --colors "$COLORS" --keys "$KEYS" \
		--reps "$SPLITS" --format csv --progress off 2>>"$work/errors" |
		sed 's/^\[0\] //' | awk -F, '$1 ~ /^[0-9]+$/ { print $2 "," $8 }' >>"$out" ||
		echo "scoll split np=$np failed" >>"$work/errors"
}

# mpisplit under mpirun; appends "native,median_ms" lines.
mpi_run() { # out mpirun-options...
	local out=$1
	shift
	mpirun "$@" -np "$np" "$work/mpisplit" "$COLORS" "$KEYS" "$SPLITS" 2>>"$work/errors" |
		awk -F, '{ print "native," $5 }' >>"$out"
}

# median per algorithm: prints "algorithm,median"
median_ms() { medians "$1" -k1,1 -k2,2g; }

printf "\n%3s | %-9s %10s %10s %6s | %10s %10s %6s   (ms per split)\n" np algorithm scoll-tcp ompi-tcp ratio scoll-mpi ompi ratio
for np in $NPS; do
	: >"$work/tcp"; : >"$work/ompi-tcp"; : >"$work/smpi"; : >"$work/ompi"
	for _ in $(seq "$REPS"); do
		scoll_run "$work/tcp" "$work/scoll" run --np "$np" --timeout 10m -- "$work/scoll"
		mpi_run "$work/ompi-tcp" --mca btl self,tcp
		scoll_run "$work/smpi" mpirun -np "$np" "$work/scoll-mpi"
		mpi_run "$work/ompi"
	done
	otcp=$(median_ms "$work/ompi-tcp" | awk -F, '{ print $2 }')
	ompi=$(median_ms "$work/ompi" | awk -F, '{ print $2 }')
	median_ms "$work/tcp" >"$work/tcp.m"
	median_ms "$work/smpi" >"$work/smpi.m"
	for alg in $(echo "$ALGS" | tr , ' '); do
		t=$(awk -F, -v a="$alg" '$1 == a { print $2 }' "$work/tcp.m")
		m=$(awk -F, -v a="$alg" '$1 == a { print $2 }' "$work/smpi.m")
		printf "%3s | %-9s %10s %10s %6s | %10s %10s %6s\n" "$np" "$alg" "${t:--}" "${otcp:--}" \
			"$(awk -v a="$t" -v b="$otcp" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }')" \
			"${m:--}" "${ompi:--}" \
			"$(awk -v a="$m" -v b="$ompi" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }')"
	done
done
if [ -s "$work/errors" ]; then
	echo
	echo "errors:"
	sort -u "$work/errors" | head -20
fi
