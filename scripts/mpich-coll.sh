#!/usr/bin/env bash
# The drop-in library under MPICH's own collective test suite
# (test/mpi/coll of the MPICH source). Builds the suite's programs with
# MPICC, without MPICH's configure (the stand-in headers are in
# scripts/mpich-coll/), runs every line of the suite's testlist natively
# and then with libscollmpi.so preloaded, and prints per line and in total
# what passed. It fails (exit 1) if a line that passes natively fails or
# times out with the library, or if the library handled less than
# MIN_HANDLED percent of the collective calls on intracommunicators with
# predefined datatypes and operators (the reports say why each forwarded
# call was).
#
#   scripts/mpich-coll.sh DIR        # DIR: an MPICH source tree, or its test/mpi
#
# DIR is a copy of the public pmodels/mpich repository (only test/mpi is
# read); nothing of it is part of scoll. The preloaded runs set
# SCOLL_MPI_CHOICE=scoll (scoll handles every call it can) and
# SCOLL_MPI_REPORT, whose counts give the handled fraction. Exit status: 0
# all well, 1 a test regression or too few calls handled, 2 a usage or
# build error. Without OUT the logs go with the temporary directory, but
# the first 30 lines of every failing preloaded run are printed.
#
# Environment (defaults in brackets):
#   LIB      the drop-in library to preload [built with scripts/build-dropin.sh MPICC]
#   MPICC    the MPI's compiler wrapper [mpicc]
#   MPIRUN   its launcher, Open MPI's or MPICH's (Hydra) [mpirun]
#   MAX_NP   most ranks a line runs with; a line asking for more runs with MAX_NP [8]
#   MAX_MEM  most memory (GB) a line may declare with mem= [4]
#   TIMEOUT  seconds a run may take unless the line sets timeLimit= [180]
#   MIN_HANDLED  least percentage of calls handled by scoll [80]
#   OUT      directory for the build, logs and reports, kept [a temporary one, removed]
#
# With MPICH: MPICC=mpicc.mpich MPIRUN=mpirun.mpich scripts/mpich-coll.sh DIR
# (LIB, if given, built for MPICH). Lines run one after the other: a line
# oversubscribes the cores already. A full run with Open MPI 4.1 on two
# shared cores takes 7-8 minutes (build included).
set -euo pipefail

die() { echo "mpich-coll: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 DIR (an MPICH source tree or its test/mpi)"
if [ -d "$1/test/mpi/coll" ]; then
	src=$(cd "$1/test/mpi" && pwd)
elif [ -d "$1/coll" ] && [ -d "$1/util" ]; then
	src=$(cd "$1" && pwd)
else
	die "$1: no test/mpi/coll in it"
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
MPICC=${MPICC:-mpicc}
MPIRUN=${MPIRUN:-mpirun}
MAX_NP=${MAX_NP:-8}
MAX_MEM=${MAX_MEM:-4}
TIMEOUT=${TIMEOUT:-180}
MIN_HANDLED=${MIN_HANDLED:-80}
command -v jq >/dev/null || die "needs jq (the reports are JSON)"

if [ -n "${OUT:-}" ]; then
	work=$OUT
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
bin=$work/bin logs=$work/logs reports=$work/reports
rm -rf "$bin" "$logs" "$reports"
mkdir -p "$work/include" "$work/dtp/include" "$work/obj" "$bin" "$logs" "$reports" "$work/run"

# --- the library --------------------------------------------------------
if [ -n "${LIB:-}" ]; then
	[ -f "$LIB" ] || die "LIB=$LIB: no such file"
	lib=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
else
	lib=$work/libscollmpi.so
	"$repo/scripts/build-dropin.sh" "$MPICC" "$lib" >/dev/null
fi

# --- the launcher ---------------------------------------------------------
# launch NP: the launcher's arguments for NP ranks; envarg NAME VALUE: its
# arguments that set a variable in the ranks only (never in the launcher:
# a preloaded mpirun would load the library too).
case "$("$MPIRUN" --version 2>&1)" in
*"Open MPI"* | *OpenRTE*)
	launch() { echo --oversubscribe -np "$1"; }
	envarg() { printf '%s\n' -x "$1=$2"; }
	# We may be root (CI, containers); Open MPI refuses it unless told.
	export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
	export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
	;;
*HYDRA*)
	# MPICH 4.0's device-level MPI_Reduce crashes with MPI_IN_PLACE at a
	# root other than 0 (pmodels/mpich#6540, fixed by 4.1.3): its portable
	# algorithms instead (a documented CVAR), natively and preloaded alike.
	launch() { echo -np "$1" -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0; }
	envarg() { printf '%s\n' -genv "$1" "$2"; }
	;;
*) die "$MPIRUN: neither Open MPI's nor MPICH's (Hydra) launcher" ;;
esac

# --- building the suite -------------------------------------------------
# The test utilities (mtest and friends) and the datatype pool library
# (dtpools) go into one archive. dtpools includes "../dtpoolsconf.h" from
# its include directory, so the stand-in sits one level above an include
# directory of ours that the compiler searches.
cp "$repo/scripts/mpich-coll/mpitestconf.h" "$repo/scripts/mpich-coll/mtest_mpix.h" "$work/include/"
cp "$repo/scripts/mpich-coll/dtpoolsconf.h" "$work/dtp/"
cflags=(-O1 -I"$work/include" -I"$src/include" -I"$src/dtpools/include" -I"$work/dtp/include")
for f in "$src"/util/{mtest,mtest_common,mtest_single,dtypes}.c "$src"/dtpools/src/*.c "$src"/util/run_mpitests.c; do
	o=$work/obj/$(basename "$f" .c).o
	"$MPICC" "${cflags[@]}" -c "$f" -o "$o" 2>"$logs/build-$(basename "$f" .c).log" ||
		die "$f does not build: see $logs/build-$(basename "$f" .c).log"
	[[ "$f" == */run_mpitests.c ]] || ar rcs "$work/libmtest.a" "$o"
done
# Every coll/*.c is one program. Newer tests define run() instead of
# main(); util/run_mpitests.c is their main (it prints "No Errors"). A
# program that does not build (MPI-4 functions the MPI lacks: persistent
# collectives, large counts) is reported and its lines skipped.
built=0 unbuilt=()
for f in "$src"/coll/*.c; do
	p=$(basename "$f" .c)
	main=()
	grep -q '^int run(const char' "$f" && main=("$work/obj/run_mpitests.o")
	if "$MPICC" "${cflags[@]}" "$f" "${main[@]}" -o "$bin/$p" "$work/libmtest.a" -lm -pthread >"$logs/build-$p.log" 2>&1; then
		built=$((built + 1))
	else
		unbuilt+=("$p")
	fi
done
echo "mpich-coll: built $built of $(ls "$src"/coll/*.c | wc -l) programs with $MPICC; not built: ${unbuilt[*]:-none}"

# --- the test list --------------------------------------------------------
# A configured tree has coll/testlist; a source tree testlist.in (or, in
# older releases, testlist.def).
list=
for f in testlist testlist.in testlist.def; do
	if [ -f "$src/coll/$f" ]; then list=$src/coll/$f; break; fi
done
[ -n "$list" ] || die "$src/coll: no testlist"

# run MODE NP LIMIT LOG PROG ARG... (MODE native or preloaded; with
# preloaded, REPORT names the report file): sets $verdict to pass, fail or
# timeout. A test passes when it exits 0 and prints "No Errors".
run() {
	local mode=$1 np=$2 limit=$3 log=$4 prog=$5
	shift 5
	local cmd=("$MPIRUN" $(launch "$np"))
	local e
	for e in "${envs[@]}"; do
		mapfile -t -O "${#cmd[@]}" cmd < <(envarg "${e%%=*}" "${e#*=}")
	done
	if [ "$mode" = preloaded ]; then
		mapfile -t -O "${#cmd[@]}" cmd < <(envarg LD_PRELOAD "$lib"; envarg SCOLL_MPI_REPORT "$report"; envarg SCOLL_MPI_CHOICE scoll)
	fi
	local rc=0
	(cd "$work/run" && timeout -k 10 "$limit" "${cmd[@]}" "$bin/$prog" "$@" </dev/null >"$log" 2>&1) || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		verdict=timeout
	elif [ "$rc" -eq 0 ] && grep -Eq '^ *No Errors *$' "$log"; then
		verdict=pass
	else
		verdict=fail
	fi
}

# Each line: PROG NPROCS then keys: arg=A (a program argument), env=N=V
# (a variable for the ranks), mem=GB (memory it needs), timeLimit=S;
# other keys (xfail=, strict=, mpiversion=, ...) are not needed here and
# ignored.
n=0 ran=0 skipped=0 native_pass=0 pre_pass=0
regressions=() seen=" "
started=$SECONDS
while read -r prog np rest; do
	case "$prog" in '' | '#'*) continue ;; esac
	n=$((n + 1))
	args=() envs=() mem=0 limit=$TIMEOUT why=
	for kv in $rest; do
		case "$kv" in
		arg=*) args+=("${kv#arg=}") ;;
		env=*) envs+=("${kv#env=}") ;;
		mem=*) mem=${kv#mem=} ;;
		timeLimit=*) limit=${kv#timeLimit=} ;;
		esac
	done
	label="$prog $np${args[*]:+ ${args[*]}}"
	# Skipped classes:
	# - lines with configure substitutions (@NAME@): features that MPICH's
	#   configure turns on or off, unknown without it;
	# - env=MPIR_CVAR_...: MPICH's control variables choose MPICH's own
	#   algorithms (topology-aware broadcast trees); another MPI ignores
	#   them and with the library preloaded the call never reaches them, so
	#   the line would only repeat a plain one (and it wants 16-32 ranks);
	# - mem= above MAX_MEM GB: gather_big (20 GB), coll_large with counts
	#   above 2^31 (80-100 GB): more memory than the machine has;
	# - programs that did not build (MPI-4 functions missing in this MPI).
	if [[ "$prog $np $rest" == *@*@* ]]; then
		why="configure substitution"
	elif [[ " $rest" == *" env=MPIR_CVAR_"* ]]; then
		why="MPICH control variables"
	elif awk -v m="$mem" -v max="$MAX_MEM" 'BEGIN { exit !(m > max) }'; then
		why="needs ${mem} GB"
	elif [ ! -x "$bin/$prog" ]; then
		why="not built"
	fi
	# A line asking for more than MAX_NP ranks runs with MAX_NP, unless
	# that repeats a line already run.
	if [ -z "$why" ] && [ "$np" -gt "$MAX_NP" ]; then
		label="$prog $np->$MAX_NP${args[*]:+ ${args[*]}}"
		np=$MAX_NP
	fi
	key="$prog $np ${args[*]} ${envs[*]}"
	if [ -z "$why" ] && [[ "$seen" == *"|$key|"* ]]; then
		why="same as an earlier line at $MAX_NP ranks"
	fi
	if [ -n "$why" ]; then
		skipped=$((skipped + 1))
		printf '%-44s skipped: %s\n' "$label" "$why"
		continue
	fi
	seen+="|$key|"
	ran=$((ran + 1))
	run native "$np" "$limit" "$logs/$n-native.log" "$prog" "${args[@]}"
	native=$verdict
	report=$reports/$n.json
	run preloaded "$np" "$limit" "$logs/$n-preloaded.log" "$prog" "${args[@]}"
	pre=$verdict
	[ "$native" = pass ] && native_pass=$((native_pass + 1))
	[ "$pre" = pass ] && pre_pass=$((pre_pass + 1))
	if [ "$native" = pass ] && [ "$pre" != pass ]; then
		regressions+=("$n|$label")
	fi
	counts=$(jq -rs '"handled \(map(.handled) | add // 0), forwarded \(map(.forwarded) | add // 0)"' "$report" 2>/dev/null || echo "no report")
	printf '%-44s native %-7s preloaded %-7s %s\n' "$label" "$native" "$pre" "$counts"
done <"$list"

# --- totals -------------------------------------------------------------
echo
echo "mpich-coll: $n lines in $(basename "$list"): $ran run (at most $MAX_NP ranks), $skipped skipped; $native_pass pass natively, $pre_pass preloaded ($((SECONDS - started)) s)"
status=0
if [ ${#regressions[@]} -gt 0 ]; then
	status=1
	echo "mpich-coll: ${#regressions[@]} lines pass natively but not with the library:"
	for r in "${regressions[@]}"; do
		echo "--- ${r#*|} (log: $logs/${r%%|*}-preloaded.log)"
		head -n 30 "$logs/${r%%|*}-preloaded.log"
	done
fi

# The handled fraction over every rank's report of every line: of the
# collective calls (not the communicator constructors and frees) that use
# predefined datatypes and operators on intracommunicators — the calls
# the reports do not count as forwarded for an intercommunicator, an
# operator or a datatype scoll does not run — the share scoll ran. Calls
# forwarded for an intracommunicator scoll has none for (one made by
# MPI_Comm_create_group, say), by a rule, or for their size count against
# it.
if ! ls "$reports"/*.json >/dev/null 2>&1; then
	echo "mpich-coll: no reports: the library never reached MPI_Finalize" >&2
	exit 1
fi
fraction='
	def pct(a; b): if b > 0 then (a * 1000 / b | floor) / 10 else 0 end;
	[.[].calls | to_entries[] | select(.key | startswith("comm_") | not) | .value] as $c |
	($c | map(.handled) | add // 0) as $h | ($c | map(.forwarded) | add // 0) as $f |
	($c | map(.forwarded_by // {} | (.intercommunicator // 0) + (.operator // 0) + (.datatype // 0)) | add // 0) as $x |
	{h: $h, f: $f, x: $x, d: ($h + $f - $x), pct: pct($h; $h + $f - $x), all: pct($h; $h + $f)}'
cat "$reports"/*.json | jq -rs --argjson min "$MIN_HANDLED" "$fraction"' as $r |
	"mpich-coll: of \($r.h + $r.f) collective calls, \($r.x) use an intercommunicator, operator or datatype scoll does not run; of the other \($r.d), scoll handled \($r.h) (\($r.pct)%, least \($min)%; \($r.all)% of all)",
	"mpich-coll: per call, most forwarded first (forwarded by reason):",
	([.[].calls | to_entries[]] | group_by(.key)
	 | map({k: .[0].key, h: (map(.value.handled) | add), f: (map(.value.forwarded) | add),
	        by: (map(.value.forwarded_by // {} | to_entries[]) | group_by(.key) | map("\(.[0].key) \(map(.value) | add)") | join(", "))})
	 | sort_by(-.f, .k)[]
	 | "  \(.k): handled \(.h), forwarded \(.f)\(if .by != "" then " (\(.by))" else "" end)")'
if ! cat "$reports"/*.json | jq -es --argjson min "$MIN_HANDLED" "$fraction"' | .d > 0 and .h * 100 >= $min * .d' >/dev/null; then
	echo "mpich-coll: the library handled less than $MIN_HANDLED% of those calls"
	status=1
fi
exit "$status"
