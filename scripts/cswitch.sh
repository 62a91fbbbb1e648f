#!/usr/bin/env bash
# cswitch.sh: context switches per call of small collectives, scoll beside
# Open MPI, counted by perf stat over whole jobs (every process, every
# thread). Each configuration runs twice, with N1 and N2 calls per rank,
# and the difference divided by the extra calls and the ranks is the cost
# of a call (start-up, connection and teardown cancel out).
#
#   scripts/cswitch.sh                         # 8-byte allreduce, 2 and 4 processes
#   OPS="allreduce bcast" NPS=2 scripts/cswitch.sh
#
# Needs perf, Go, mpicc and mpirun. Columns: per call and rank, context
# switches (cs) and CPU migrations (mig); shm is scoll's default between
# local processes, vader Open MPI's shared memory, tcp both over TCP.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
NPS=${NPS:-"2 4"}
OPS=${OPS:-"allreduce"}
BYTES=${BYTES:-8}
N1=${N1:-20000}
N2=${N2:-120000}
make_work
build_mpi mpibench
export MPIBENCH_BUDGET=1e9 # exactly the calls asked for

# count N LAUNCH...: context switches and migrations of the job.
count() {
	local n=$1
	shift
	perf stat -x, -e context-switches,cpu-migrations -o "$work/stat" -- "$@" >/dev/null 2>>"$work/errors"
	awk -F, '$3 == "context-switches" { cs = $1 } $3 == "cpu-migrations" { mig = $1 } END { print cs, mig }' "$work/stat"
}

# per KIND NP LAUNCHER...: prints "cs mig" per call and rank.
per() {
	local kind=$1 np=$2
	shift 2
	local a b
	case $kind in
	scoll)
		a=$(count $N1 "$@" bench --world --op "$op" --sizes "$BYTES" --iters $N1 --warmup 1 --time 1h --algorithm auto --progress never)
		b=$(count $N2 "$@" bench --world --op "$op" --sizes "$BYTES" --iters $N2 --warmup 1 --time 1h --algorithm auto --progress never)
		;;
	mpi)
		# mpibench makes as many warm-up calls as timed ones.
		a=$(MPIBENCH_SMALL_ITERS=$((N1 / 2)) count $N1 "$@" "$work/mpibench" "$op" "$BYTES")
		b=$(MPIBENCH_SMALL_ITERS=$((N2 / 2)) count $N2 "$@" "$work/mpibench" "$op" "$BYTES")
		;;
	esac
	echo "$a $b" | awk -v d=$((N2 - N1)) -v np="$np" '{ printf "%.3f %.3f", ($3 - $1) / d / np, ($4 - $2) / d / np }'
}

printf "%-9s %3s | %13s %13s | %13s %13s\n" op np "scoll-shm" "ompi-vader" "scoll-tcp" "ompi-tcp"
printf "%-9s %3s | %6s %6s %6s %6s | %6s %6s %6s %6s\n" "" "" cs mig cs mig cs mig cs mig
for np in $NPS; do
	for op in $OPS; do
		shm=$(per scoll "$np" "$work/scoll" run --np "$np" -- "$work/scoll")
		vader=$(per mpi "$np" mpirun -np "$np" --mca btl self,vader)
		tcp=$(per scoll "$np" env SCOLL_TRANSPORT=tcp "$work/scoll" run --np "$np" -- "$work/scoll")
		otcp=$(per mpi "$np" mpirun -np "$np" --mca btl self,tcp)
		printf "%-9s %3s | %6s %6s %6s %6s | %6s %6s %6s %6s\n" "$op" "$np" $shm $vader $tcp $otcp
	done
done
echo "Per call and rank, $BYTES bytes; (count at $N2 calls - count at $N1) / $((N2 - N1)) / np."
if [ -s "$work/errors" ]; then
	echo "Errors:"
	cat "$work/errors"
fi
