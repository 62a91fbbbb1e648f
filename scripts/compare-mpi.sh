#!/usr/bin/env bash
# compare-mpi.sh: scoll next to the MPI library, in one run, on this host.
#
# Section tcp (NPS processes):
#   1. scoll over its TCP transport (scoll run, one process per rank,
#      SCOLL_TRANSPORT=tcp) next to Open MPI restricted to TCP
#      (--mca btl self,tcp), on loopback;
#   2. scoll's algorithms over the MPI transport (scoll built with -tags mpi,
#      launched by mpirun) next to the MPI library's own MPI_Allreduce,
#      MPI_Allgather and MPI_Bcast, both with the library's default
#      transports.
# Section shm (SHM_NPS processes on this host, 8 oversubscribes 2 cores):
#   scoll's default between local processes (shared memory, transport/shm)
#   next to Open MPI's shared memory (--mca btl self,vader).
# Section nodes (NODES hosts faked with SCOLL_HOSTNAME, PER_NODE ranks each):
#   scoll's default (shared memory inside a host, TCP between hosts, the
#   node-aware hier chosen), flat scoll over TCP only, and Open MPI over TCP
#   only. Open MPI cannot be told that one machine is several hosts, so its
#   column is all-TCP: the same wire as flat scoll, not scoll's mix.
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
#   SECTIONS="shm nodes" scripts/compare-mpi.sh
#
# Columns: scoll-tcp is scoll's default algorithm choice ("auto"), best the
# fastest of the algorithms listed below (median per algorithm first),
# eager the default choice with SCOLL_EAGER_SENDS=1 (scoll.WithEagerSends).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
NPS=${NPS:-"2 4"}
SIZES=${SIZES:-"8 1048576 16777216"}
OPS=${OPS:-"allreduce allgather bcast"} # and barrier
REPS=${REPS:-3}
# Timed and warm-up calls up to 8 KiB (both sides; larger sizes: 100 and
# 10, within TIME): a call of a microsecond or less needs many for a stable
# mean, and the first configuration a process measures runs slower without
# a long warm-up (0.36-0.45 us against 0.25-0.34 us for the same 8 B call).
SMALL_ITERS=${SMALL_ITERS:-20000}
export MPIBENCH_SMALL_ITERS=$SMALL_ITERS
SECTIONS=${SECTIONS:-"tcp shm nodes"}
SHM_NPS=${SHM_NPS:-"2 8"}
NODES=${NODES:-2}
PER_NODE=${PER_NODE:-4}
TIME=${TIME:-300ms}
algs_allreduce=${ALGS_ALLREDUCE:-"auto,ring,rabenseifner,recursive-doubling"}
algs_allgather=${ALGS_ALLGATHER:-"auto,ring,recursive-doubling,bruck,neighbor-exchange"}
algs_bcast=${ALGS_BCAST:-"auto,binomial,pipeline,scatter-allgather,two-tree"}
algs_barrier=${ALGS_BARRIER:-"auto,dissemination,recursive-doubling,tree"}
# The shared-memory section adds the exchange path and the hier algorithm.
shm_allreduce=${SHM_ALLREDUCE:-"auto,exchange,ring,rabenseifner,recursive-doubling,reduce-bcast"}
shm_allgather=${SHM_ALLGATHER:-"auto,exchange,ring,recursive-doubling,bucket3"}
shm_bcast=${SHM_BCAST:-"auto,exchange,binomial,scatter-allgather,scatter-ring-allgather"}
shm_barrier=${SHM_BARRIER:-"auto,exchange,dissemination,recursive-doubling"}
make_work
build_mpi mpibench
nodes_allreduce=auto,hier; nodes_allgather=auto,hier; nodes_bcast=auto,hier; nodes_barrier=auto,hier
flat_allreduce=auto; flat_allgather=auto; flat_bcast=auto; flat_barrier=auto

# op_sizes prints the sizes of $op: SIZES, or 0 for a barrier (OPS may
# name barrier; it moves no data).
op_sizes() { if [ "$op" = barrier ]; then echo 0; else echo $SIZES; fi; }
sizes_csv=$(echo $SIZES | tr ' ' ',')

# scoll bench --world under a launcher, with the algorithms of list
# (algs or shm); appends "bytes,algorithm,us" lines.
scoll_run() { # out list launcher...
	local out=$1 list=$2
	shift 2
	"$@" bench --world --op "$op" --type float64 --sizes "$sizes_csv" --time "$TIME" --iters "$SMALL_ITERS" --warmup "$SMALL_ITERS" \
		--algorithm "$(eval echo \$${list}_$op)" --format csv --progress never 2>>"$work/errors" |
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

# cell FILE BYTES [ALGORITHM]: the median µs of BYTES (and ALGORITHM) in FILE.
cell() { median_us "$1" | awk -F, -v b="$2" -v a="${3:-}" '$1 == b && (a == "" || $2 == a) { print $3 }'; }

if [[ " $SECTIONS " == *" tcp "* ]]; then
printf "\n%-9s %3s %9s | %10s %10s %-20s %10s %6s | %10s %6s | %10s %10s %6s\n" \
	op np bytes "scoll-tcp" "best" "(algorithm)" "ompi-tcp" "ratio" "eager" "ratio" "scoll-mpi" "mpi-native" "ratio"
for np in $NPS; do
	for op in $OPS; do
		: >"$work/tcp"; : >"$work/eager"; : >"$work/ompi"; : >"$work/smpi"; : >"$work/native"
		for _ in $(seq "$REPS"); do
			scoll_run "$work/tcp" algs env SCOLL_TRANSPORT=tcp "$work/scoll" run --np "$np" -- "$work/scoll"
			scoll_run "$work/eager" flat env SCOLL_TRANSPORT=tcp SCOLL_EAGER_SENDS=1 "$work/scoll" run --np "$np" -- "$work/scoll"
			mpi_run "$work/ompi" --mca btl self,tcp
			scoll_run "$work/smpi" algs mpirun -np "$np" "$work/scoll-mpi"
			mpi_run "$work/native"
		done
		for size in $(op_sizes); do
			median_us "$work/tcp" | awk -F, -v b="$size" '$1 == b' >"$work/t"
			auto=$(awk -F, '$2 == "auto" { print $3 }' "$work/t")
			best=$(sort -t, -k3,3g "$work/t" | head -1)
			ompi=$(cell "$work/ompi" "$size")
			eager=$(cell "$work/eager" "$size" auto)
			smpi=$(cell "$work/smpi" "$size" auto)
			native=$(cell "$work/native" "$size")
			awk -v op="$op" -v np="$np" -v b="$size" -v auto="$auto" -v best="$best" -v ompi="$ompi" \
				-v eager="$eager" -v smpi="$smpi" -v native="$native" 'BEGIN {
				split(best, x, ",")
				r1 = (ompi > 0 && x[3] > 0) ? sprintf("%6.2f", x[3] / ompi) : "     -"
				r3 = (ompi > 0 && eager > 0) ? sprintf("%6.2f", eager / ompi) : "     -"
				r2 = (native > 0 && smpi > 0) ? sprintf("%6.2f", smpi / native) : "     -"
				printf "%-9s %3s %9s | %10.1f %10.1f %-20s %10.1f %s | %10.1f %s | %10.1f %10.1f %s\n",
					op, np, b, auto, x[3], "(" x[2] ")", ompi, r1, eager, r3, smpi, native, r2 }'
		done
	done
done
echo
echo "Times in µs per call, medians of $REPS runs. ratio = best / ompi-tcp, eager / ompi-tcp and scoll-mpi / mpi-native (below 1: scoll faster)."
echo "eager: scoll-tcp's default choice with SCOLL_EAGER_SENDS=1 (small sends of collective calls complete once written)."
fi

if [[ " $SECTIONS " == *" shm "* ]]; then
printf "\n%-9s %3s %9s | %10s %10s %-24s %10s %6s %6s\n" \
	op np bytes "scoll-shm" "best" "(algorithm)" "ompi-vader" "auto" "best"
for np in $SHM_NPS; do
	for op in $OPS; do
		: >"$work/shm"; : >"$work/vader"
		for _ in $(seq "$REPS"); do
			scoll_run "$work/shm" shm "$work/scoll" run --np "$np" -- "$work/scoll"
			mpi_run "$work/vader" --mca btl self,vader
		done
		for size in $(op_sizes); do
			median_us "$work/shm" | awk -F, -v b="$size" '$1 == b' >"$work/t"
			auto=$(awk -F, '$2 == "auto" { print $3 }' "$work/t")
			best=$(sort -t, -k3,3g "$work/t" | head -1)
			vader=$(cell "$work/vader" "$size")
			awk -v op="$op" -v np="$np" -v b="$size" -v auto="$auto" -v best="$best" -v vader="$vader" 'BEGIN {
				split(best, x, ",")
				r1 = (vader > 0 && auto > 0) ? sprintf("%6.2f", auto / vader) : "     -"
				r2 = (vader > 0 && x[3] > 0) ? sprintf("%6.2f", x[3] / vader) : "     -"
				printf "%-9s %3s %9s | %10.2f %10.2f %-24s %10.2f %s %s\n", op, np, b, auto, x[3], "(" x[2] ")", vader, r1, r2 }'
		done
	done
done
echo
echo "Times in µs per call, medians of $REPS runs; ratios scoll / ompi-vader (auto: scoll's default choice; best: the fastest listed)."
fi

if [[ " $SECTIONS " == *" nodes "* ]]; then
np=$((NODES * PER_NODE))
printf "\n%d hosts x %d processes (faked)\n%-9s %3s %9s | %10s %10s %10s %10s | %7s %7s\n" "$NODES" "$PER_NODE" \
	op np bytes "scoll" "hier" "flat-tcp" "ompi-tcp" "s/flat" "s/ompi"
for op in $OPS; do
	: >"$work/node"; : >"$work/flat"; : >"$work/otcp"
	for _ in $(seq "$REPS"); do
		scoll_run "$work/node" nodes "$work/scoll" run --np "$np" --ranks-per-node "$PER_NODE" -- "$work/scoll"
		scoll_run "$work/flat" flat env SCOLL_TRANSPORT=tcp "$work/scoll" run --np "$np" -- "$work/scoll"
		mpi_run "$work/otcp" --mca btl self,tcp
	done
	for size in $(op_sizes); do
		node=$(cell "$work/node" "$size" auto)
		hier=$(cell "$work/node" "$size" hier)
		flat=$(cell "$work/flat" "$size" auto)
		otcp=$(cell "$work/otcp" "$size")
		awk -v op="$op" -v np="$np" -v b="$size" -v node="$node" -v hier="$hier" -v flat="$flat" -v otcp="$otcp" 'BEGIN {
			r1 = (flat > 0 && node > 0) ? sprintf("%7.2f", node / flat) : "      -"
			r2 = (otcp > 0 && node > 0) ? sprintf("%7.2f", node / otcp) : "      -"
			printf "%-9s %3s %9s | %10.1f %10.1f %10.1f %10.1f | %s %s\n", op, np, b, node, hier, flat, otcp, r1, r2 }'
	done
done
echo
echo "Times in µs per call, medians of $REPS runs. scoll: the default (shared memory inside a host, TCP between, hier chosen);"
echo "hier: named; flat-tcp: scoll's default over TCP only (no host knowledge); ompi-tcp: Open MPI with --mca btl self,tcp."
fi
if [ -s "$work/errors" ]; then
	echo "Errors:"
	cat "$work/errors"
fi
