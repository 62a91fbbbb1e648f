#!/usr/bin/env bash
# compare-mpi.sh: scoll next to the MPI library, in one run, on this host.
#
#   1. scoll over its TCP transport (scoll run, one process per rank) next
#      to Open MPI restricted to TCP (--mca btl self,tcp), on loopback;
#   2. scoll's algorithms over the MPI transport (scoll built with -tags mpi,
#      launched by mpirun) next to the MPI library's own MPI_Allreduce,
#      MPI_Allgather and MPI_Bcast, both with the library's default
#      transports.
#
# Same sizes, same timing method (warm-up, barrier, back-to-back calls; the
# mean over ranks of each rank's average per call). Every measurement is
# repeated REPS times, the four kinds interleaved, and the median is shown,
# since one run on a shared machine can be off by tens of percent.
# Needs Go, mpicc and mpirun (Debian: apt-get install openmpi-bin
# libopenmpi-dev).
#
#   scripts/compare-mpi.sh
#   NPS="2" SIZES="1048576 16777216" OPS="allreduce allgather" REPS=5 scripts/compare-mpi.sh
#
# Columns: scoll-tcp is scoll's default algorithm choice ("auto"), best the
# fastest of the algorithms listed below (median per algorithm first).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
NPS=${NPS:-"2 4"}
SIZES=${SIZES:-"8 1048576 16777216"}
OPS=${OPS:-"allreduce allgather bcast"}
REPS=${REPS:-3}
TIME=${TIME:-300ms}
algs_allreduce=${ALGS_ALLREDUCE:-"auto,ring,rabenseifner,recursive-doubling"}
algs_allgather=${ALGS_ALLGATHER:-"auto,ring,recursive-doubling,bruck,neighbor-exchange"}
algs_bcast=${ALGS_BCAST:-"auto,binomial,pipeline,scatter-allgather,two-tree"}
make_work
build_mpi mpibench
sizes_csv=$(echo $SIZES | tr ' ' ',')

# scoll bench --world under a launcher; appends "bytes,algorithm,us" lines.
scoll_run() { # out launcher...
	local out=$1
	shift
	"$@" bench --world --op "$op" --type float64 --sizes "$sizes_csv" --time "$TIME" \
		--algorithm "$(eval echo \$algs_$op)" --format csv --progress never 2>>"$work/errors" |
		sed 's/^\[0\] //' | awk -F, -v op="$op" '$1 == op { print $5 "," $2 "," $9 }' >>"$out" ||
		echo "scoll bench $op np=$np failed (see below)" >>"$work/errors"
}

# mpibench under mpirun; appends "bytes,native,us" lines.
mpi_run() { # out mpirun-options...
	local out=$1
	shift
	mpirun "$@" -np "$np" "$work/mpibench" "$op" $SIZES 2>>"$work/errors" |
		awk -F, '{ print $3 ",native," $5 }' >>"$out"
}

# median of the values per (bytes, algorithm): prints "bytes,algorithm,median"
median_us() { medians "$1" -k1,1n -k2,2 -k3,3g; }

printf "\n%-9s %3s %9s | %10s %10s %-20s %10s %6s | %10s %10s %6s\n" \
	op np bytes "scoll-tcp" "best" "(algorithm)" "ompi-tcp" "ratio" "scoll-mpi" "mpi-native" "ratio"
for np in $NPS; do
	for op in $OPS; do
		: >"$work/tcp"; : >"$work/ompi"; : >"$work/smpi"; : >"$work/native"
		for _ in $(seq "$REPS"); do
			scoll_run "$work/tcp" "$work/scoll" run --np "$np" -- "$work/scoll"
			mpi_run "$work/ompi" --mca btl self,tcp
			scoll_run "$work/smpi" mpirun -np "$np" "$work/scoll-mpi"
			mpi_run "$work/native"
		done
		for size in $SIZES; do
			median_us "$work/tcp" | awk -F, -v b="$size" '$1 == b' >"$work/t"
			auto=$(awk -F, '$2 == "auto" { print $3 }' "$work/t")
			best=$(sort -t, -k3,3g "$work/t" | head -1)
			ompi=$(median_us "$work/ompi" | awk -F, -v b="$size" '$1 == b { print $3 }')
			smpi=$(median_us "$work/smpi" | awk -F, -v b="$size" '$1 == b && $2 == "auto" { print $3 }')
			native=$(median_us "$work/native" | awk -F, -v b="$size" '$1 == b { print $3 }')
			awk -v op="$op" -v np="$np" -v b="$size" -v auto="$auto" -v best="$best" -v ompi="$ompi" \
				-v smpi="$smpi" -v native="$native" 'BEGIN {
				split(best, x, ",")
				r1 = (ompi > 0 && x[3] > 0) ? sprintf("%6.2f", x[3] / ompi) : "     -"
				r2 = (native > 0 && smpi > 0) ? sprintf("%6.2f", smpi / native) : "     -"
				printf "%-9s %3s %9s | %10.1f %10.1f %-20s %10.1f %s | %10.1f %10.1f %s\n",
					op, np, b, auto, x[3], "(" x[2] ")", ompi, r1, smpi, native, r2 }'
		done
	done
done
echo
echo "Times in µs per call, medians of $REPS runs. ratio = best / ompi-tcp and scoll-mpi / mpi-native (below 1: scoll faster)."
if [ -s "$work/errors" ]; then
	echo "Errors:"
	cat "$work/errors"
fi
