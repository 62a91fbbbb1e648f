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
# mean over ranks of each rank's average per call). Needs Go, mpicc and
# mpirun (Debian: apt-get install openmpi-bin libopenmpi-dev).
#
#   scripts/compare-mpi.sh                  # np 2 and 4; 8 B, 64 KiB, 1 MiB, 16 MiB
#   NPS="2" SIZES="1048576 16777216" OPS="allreduce" scripts/compare-mpi.sh
#
# scoll rows use scoll's default algorithm choice ("auto", column scoll-tcp)
# and, in the column "best", the fastest of the algorithms listed below.
set -euo pipefail
cd "$(dirname "$0")/.."
NPS=${NPS:-"2 4"}
SIZES=${SIZES:-"8 65536 1048576 16777216"}
OPS=${OPS:-"allreduce allgather bcast"}
# Algorithms tried per collective (the "best" column); auto is scoll's choice.
algs_allreduce=${ALGS_ALLREDUCE:-"auto,ring,rabenseifner,recursive-doubling"}
algs_allgather=${ALGS_ALLGATHER:-"auto,ring,recursive-doubling,bruck,neighbor-exchange"}
algs_bcast=${ALGS_BCAST:-"auto,binomial,pipeline,scatter-allgather,two-tree"}
TIME=${TIME:-1s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

go build -o "$work/scoll" ./cmd/scoll
go build -tags mpi -o "$work/scoll-mpi" ./cmd/scoll
mpicc -O2 -o "$work/mpibench" scripts/mpibench.c
mpirun --version | head -1

sizes_csv=$(echo $SIZES | tr ' ' ',')

# scoll bench --world under a launcher; prints op,np,bytes,auto_us,best_us,best_alg
scoll_rows() { # launcher... -- binary
	"$@" bench --world --op "$op" --type float64 --sizes "$sizes_csv" --time "$TIME" \
		--algorithm "$(eval echo \$algs_$op)" --format csv --progress never 2>/dev/null |
		sed 's/^\[0\] //' | awk -F, -v op="$op" -v np="$np" '
			$1 == op { us = $9 + 0
				if ($2 == "auto") auto[$5] = us
				if (!($5 in best) || us < best[$5]) { best[$5] = us; alg[$5] = $2 } }
			END { for (b in best) printf "%s,%s,%s,%.2f,%.2f,%s\n", op, np, b, auto[b], best[b], alg[b] }'
}

mpi_rows() { # mpirun options...
	mpirun "$@" -np "$np" "$work/mpibench" "$op" $SIZES
}

printf "\n%-9s %3s %9s | %12s %12s %-20s %12s %6s | %12s %12s %6s\n" \
	op np bytes "scoll-tcp" "scoll-best" "(algorithm)" "ompi-tcp" "ratio" "scoll-mpi" "mpi-native" "ratio"
for np in $NPS; do
	for op in $OPS; do
		scoll_rows "$work/scoll" run --np "$np" -- "$work/scoll" | sort -t, -k3n >"$work/tcp"
		mpi_rows --mca btl self,tcp >"$work/ompi"
		scoll_rows mpirun -np "$np" "$work/scoll-mpi" | sort -t, -k3n >"$work/smpi"
		mpi_rows >"$work/native"
		join -t, -j1 <(awk -F, '{print $3","$4","$5","$6}' "$work/tcp" | sort -t, -k1,1) \
			<(awk -F, '{print $3","$5}' "$work/ompi" | sort -t, -k1,1) |
			join -t, -j1 - <(awk -F, '{print $3","$4}' "$work/smpi" | sort -t, -k1,1) |
			join -t, -j1 - <(awk -F, '{print $3","$5}' "$work/native" | sort -t, -k1,1) |
			sort -t, -k1n | awk -F, -v op="$op" -v np="$np" '{
				printf "%-9s %3s %9s | %12.1f %12.1f %-20s %12.1f %6.2f | %12.1f %12.1f %6.2f\n",
					op, np, $1, $2, $3, "(" $4 ")", $5, $3 / $5, $6, $7, $6 / $7 }'
	done
done
echo
echo "Times in µs per call. ratio = scoll-best / ompi-tcp and scoll-mpi / mpi-native (below 1: scoll faster)."
