#!/usr/bin/env bash
# The drop-in library against the MPI library's own collectives: builds
# libscollmpi.so, cmd/libscollmpi/testdata/bench.c (with MPICC, default
# mpicc) and the scoll command, then runs the benchmark natively and with
# the library preloaded, side by side: for each process count and
# collective, REPEAT rounds, each round running every variant once, one
# mpirun per variant with all the sizes. It prints a markdown table of the
# medians over the rounds to stdout (progress to stderr) and writes every
# measurement to the CSV file OUT.
#
#   scripts/dropin-bench.sh [MODE...]
#
# Modes (default colls):
#   colls    COLLS at NP processes and SIZES
#   latency  8-byte MPI_Allreduce at 2 processes
#   forward  a call the drop-in forwards (MPI_Allreduce with MPI_BAND) at
#            2 processes and FORWARD_SIZES: the cost of passing through it
#   split    MPI_Comm_split of MPI_COMM_WORLD at SPLIT_NP processes; more
#            processes than cores: oversubscribed, and the notes say so
#   all      all four
#
# Variants:
#   native   no preload: the MPI library's collectives
#   default  preloaded, no settings: the drop-in's own choice per call
#   scoll    preloaded, SCOLL_MPI_CHOICE=scoll: scoll wherever it can
#   alg      preloaded, SCOLL_MPI_CHOICE=scoll and SCOLL_ALGORITHM_<COLL>=alg,
#            for every algorithm `scoll algorithms <coll>` lists (colls
#            mode, ALGS=all; algorithms that need a power-of-two process
#            count are skipped at other counts)
#
# Environment (defaults in brackets):
#   NP             process counts of colls mode ["2 4"]
#   COLLS          ["allreduce bcast allgather reduce_scatter_block alltoall"]
#   SIZES          bytes, K and M suffixes ["8 32 128 512 2K 8K 32K 128K 512K 2M 8M 16M"];
#                  allgather, alltoall: the block per rank; reduce_scatter_block:
#                  the block each rank receives (bench.c's comment says how
#                  this compares with OSU's numbers)
#   FORWARD_SIZES  ["8 512 32K"]
#   SPLIT_NP       ["8 16 32 64"]
#   REPEAT         rounds [5]
#   ALGS           all | default-only [all]
#   TARGET_MS      time of one timed batch of calls [100]
#   TIMEOUT        seconds per mpirun [30 + 10 per size]
#   OUT            the CSV file [${TMPDIR:-/tmp}/dropin-bench.csv]
#   WORK           build directory [a new temporary one, removed at the end
#                  unless a run failed: then the commands to repeat the
#                  failures use it]
#   MPIRUN_ARGS    more mpirun arguments, for every variant alike [""]
#   LIB            a libscollmpi.so built before, instead of building one [""]
#
# The CSV's columns: mode,variant,alg,coll,np,size,round,usec,status,handled,forwarded,algorithms,secs
# (usec "-": no result, see status: wrong (bench.c's check failed), error
# (an MPI error; the ranks went on), aborted (an MPI error on some ranks
# while others waited: bench.c aborts), exit=N, timeout or missing; ok
# otherwise; handled, forwarded and algorithms: rank 0's counts of the
# collective's calls for the whole mpirun, from SCOLL_MPI_REPORT, empty
# natively (algorithms: name:calls;... as scoll ran them, so a named
# algorithm that fell back shows); secs: the mpirun's wall time, all its
# sizes).
set -euo pipefail
cd "$(dirname "$0")/.."
mpicc=${MPICC:-mpicc}
NP=${NP:-"2 4"}
COLLS=${COLLS:-"allreduce bcast allgather reduce_scatter_block alltoall"}
SIZES=${SIZES:-"8 32 128 512 2K 8K 32K 128K 512K 2M 8M 16M"}
FORWARD_SIZES=${FORWARD_SIZES:-"8 512 32K"}
SPLIT_NP=${SPLIT_NP:-"8 16 32 64"}
REPEAT=${REPEAT:-5}
ALGS=${ALGS:-all}
TARGET_MS=${TARGET_MS:-100}
TIMEOUT=${TIMEOUT:-}
OUT=${OUT:-${TMPDIR:-/tmp}/dropin-bench.csv}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
modes=${*:-colls}
if [ "$modes" = all ]; then modes="colls latency forward split"; fi
case $ALGS in all | default-only) ;; *) echo "dropin-bench: ALGS is all or default-only" >&2; exit 2 ;; esac

# The variants' settings come from the script alone: none inherited.
unset LD_PRELOAD SCOLL_MPI_CHOICE SCOLL_MPI_REPORT
for v in $(compgen -e | grep '^SCOLL_ALGORITHM_' || true); do unset "$v"; done
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}

if [ -n "${WORK:-}" ]; then
	mkdir -p "$WORK"
	work=$(cd "$WORK" && pwd)
	keep=1
else
	work=$(mktemp -d)
	keep=0
fi
failed=0
trap '[ "$keep" = 1 ] || [ "$failed" != 0 ] || rm -rf "$work"' EXIT
lib=${LIB:-$work/libscollmpi.so} bench=$work/bench
log() { echo "dropin-bench: $*" >&2; }

command -v jq >/dev/null || { echo "dropin-bench: needs jq (to read scoll algorithms --format json)" >&2; exit 2; }
log "building in $work"
if [ -n "${LIB:-}" ]; then
	lib=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
else
	go build -tags mpi -buildmode=c-shared -o "$lib" ./cmd/libscollmpi
fi
"$mpicc" -O2 -o "$bench" cmd/libscollmpi/testdata/bench.c -lm
go build -o "$work/scoll" ./cmd/scoll

# bytes SIZE: SIZE (K, M suffixes) in bytes.
bytes() {
	case $1 in
	*[kK]) echo $((${1%[kK]} * 1024)) ;;
	*[mM]) echo $((${1%[mM]} * 1048576)) ;;
	*) echo $(($1)) ;;
	esac
}

# sizes COLL LIST: LIST in bytes, comma-separated; a reduction's sizes
# that are not multiples of 8 are left out.
sizes() {
	local s b out=
	for s in $2; do
		b=$(bytes "$s")
		case $1 in allreduce | forward | reduce_scatter_block)
			if [ $((b % 8)) -ne 0 ]; then
				log "$1: size $s left out (not a multiple of 8 bytes)"
				continue
			fi
			;;
		esac
		out=${out:+$out,}$b
	done
	echo "$out"
}

# The names of a collective: in SCOLL_ALGORITHM_<COLL>, in `scoll
# algorithms`, and in the drop-in's report.
envname() { case $1 in reduce_scatter_block) echo REDUCESCATTER ;; forward) echo ALLREDUCE ;; *) echo "$1" | tr a-z A-Z ;; esac; }
scollname() { case $1 in reduce_scatter_block) echo reducescatter ;; forward) echo allreduce ;; *) echo "$1" ;; esac; }
reportname() { case $1 in forward) echo allreduce ;; split) echo comm_split ;; *) echo "$1" ;; esac; }

# algorithms COLL NP: the algorithms of COLL that can run at NP processes.
algorithms() {
	local pow2=false
	if [ $(($2 & ($2 - 1))) -eq 0 ]; then pow2=true; fi
	"$work/scoll" algorithms "$(scollname "$1")" --format json |
		jq -r --arg c "$(scollname "$1")" --argjson pow2 "$pow2" \
			'.[] | select(.collective == $c and (.power_of_two | not or $pow2)) | .name'
}

# cmdline VARIANT ALG COLL NP SIZES [REPORT]: sets cmd to the mpirun
# command line of a run (REPORT: the drop-in's SCOLL_MPI_REPORT file).
cmdline() {
	cmd=(mpirun --oversubscribe -np "$4")
	# shellcheck disable=SC2206 # MPIRUN_ARGS is split as written
	cmd+=($MPIRUN_ARGS)
	case $1 in
	native) ;;
	default) cmd+=(-x LD_PRELOAD="$lib") ;;
	scoll) cmd+=(-x LD_PRELOAD="$lib" -x SCOLL_MPI_CHOICE=scoll) ;;
	alg) cmd+=(-x LD_PRELOAD="$lib" -x SCOLL_MPI_CHOICE=scoll -x "SCOLL_ALGORITHM_$(envname "$3")=$2") ;;
	esac
	[ "$1" = native ] || [ -z "${6:-}" ] || cmd+=(-x SCOLL_MPI_REPORT="$6")
	cmd+=("$bench" "$3" "$5" 1 "$TARGET_MS")
}

# run MODE VARIANT ALG COLL NP SIZES ROUND: one mpirun, one CSV row per size.
run() {
	local mode=$1 variant=$2 alg=$3 coll=$4 np=$5 list=$6 round=$7 status=ok rc=0 handled= forwarded= algs= s usec st secs
	local -a cmd
	cmdline "$variant" "$alg" "$coll" "$np" "$list" "$work/report"
	rm -f "$work/report"
	secs=$(date +%s.%N)
	timeout "${TIMEOUT:-$((30 + 10 * $(echo "$list" | tr , '\n' | wc -l)))}" "${cmd[@]}" >"$work/out" 2>"$work/err" || rc=$?
	secs=$(echo "$secs $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
	if [ "$rc" -eq 124 ]; then
		status=timeout
	elif [ "$rc" -eq 3 ]; then
		status=aborted
	elif [ "$rc" -ne 0 ]; then
		status=exit=$rc
	fi
	if [ -f "$work/report" ]; then
		read -r handled forwarded algs < <(jq -r --arg c "$(reportname "$coll")" 'select(.rank == 0) | .calls[$c] // {} |
			"\(.handled // 0) \(.forwarded // 0) \(.algorithms // {} | to_entries | map("\(.key):\(.value)") | join(";"))"' "$work/report") || true
	fi
	for s in ${list//,/ }; do
		if [ "$coll" = split ]; then s=0; fi
		usec=$(awk -v c="$coll" -v s="$s" '$1 == c && $2 == s { print $3 ($3 == "-" ? " " $4 : "") }' "$work/out")
		if [ -z "$usec" ] || [ "${usec%% *}" = - ]; then
			failed=$((failed + 1))
			st=$status
			if [ "${usec%% *}" = - ]; then
				st=${usec#- }
			elif [ "$st" = ok ]; then
				st=missing
			fi
			echo "$mode,$variant,$alg,$coll,$np,$s,$round,-,$st,$handled,$forwarded,$algs,$secs" >>"$OUT"
			log "no result: $variant${alg:+ $alg} $coll np=$np size=$s round $round ($st): $(head -c 300 "$work/err" | tr '\n' ' ')"
		else
			echo "$mode,$variant,$alg,$coll,$np,$s,$round,$usec,$status,$handled,$forwarded,$algs,$secs" >>"$OUT"
		fi
		if [ "$coll" = split ]; then break; fi
	done
}

# measure MODE COLL NP SIZELIST VARIANT...: REPEAT rounds of every variant
# ("alg" stands for every algorithm of the collective).
measure() {
	local mode=$1 coll=$2 np=$3 list=$4 r v a
	shift 4
	local -a variants=("$@") algs=()
	if [[ " ${variants[*]} " == *" alg "* ]]; then
		mapfile -t algs < <(algorithms "$coll" "$np")
	fi
	for r in $(seq 1 "$REPEAT"); do
		log "$mode: $coll np=$np round $r/$REPEAT"
		for v in "${variants[@]}"; do
			if [ "$v" = alg ]; then
				for a in "${algs[@]}"; do run "$mode" alg "$a" "$coll" "$np" "$list" "$r"; done
			else
				run "$mode" "$v" "" "$coll" "$np" "$list" "$r"
			fi
		done
	done
	table "$mode" "$coll" "$np"
}

# table MODE COLL NP: the markdown rows of the medians over the rounds.
# The best algorithm is the one whose median is least among those with a
# result in every round.
table() {
	awk -F, -v mode="$1" -v coll="$2" -v np="$3" '
	function median(k,   n, i, j, t, a) {
		n = cnt[k]
		if (n == 0) return ""
		for (i = 1; i <= n; i++) a[i] = val[k, i] + 0
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function human(b) {
		if (b == 0) return "-"
		if (b % 1048576 == 0) return b / 1048576 "M"
		if (b % 1024 == 0) return b / 1024 "K"
		return b
	}
	function us(x) { return x == "" ? "-" : sprintf("%.2f", x) }
	function ratio(x, y) { return x == "" || y == "" || y == 0 ? "-" : sprintf("%.2f", x / y) }
	$1 == mode && $4 == coll && $5 == np {
		if (!($6 in seen)) { seen[$6] = 1; order[++nsizes] = $6 }
		v = $2 == "alg" ? "alg:" $3 : $2
		k = $6 SUBSEP v
		if (!(k in runs) && $2 == "alg") algs[$6] = algs[$6] " " $3
		runs[k]++
		if ($8 != "-") val[k, ++cnt[k]] = $8
	}
	END {
		for (i = 1; i <= nsizes; i++) {
			s = order[i]
			nat = median(s SUBSEP "native"); def = median(s SUBSEP "default"); sc = median(s SUBSEP "scoll")
			best = ""; bestv = ""
			m = split(algs[s], names, " ")
			for (j = 1; j <= m; j++) {
				k = s SUBSEP "alg:" names[j]
				if (cnt[k] < runs[k] || cnt[k] == 0) continue
				x = median(k)
				if (bestv == "" || x < bestv) { bestv = x; best = names[j] }
			}
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", coll, np, human(s), us(nat), us(def), ratio(def, nat), us(sc),
				best == "" ? "-" : best, us(bestv), ratio(bestv, nat)
		}
	}' "$OUT"
}

echo "mode,variant,alg,coll,np,size,round,usec,status,handled,forwarded,algorithms,secs" >"$OUT"
ncores=$(nproc)
echo "Open MPI $(mpirun --version 2>/dev/null | sed -n 's/.*(Open MPI) //p' | head -1), $ncores cores, REPEAT=$REPEAT rounds (medians), TARGET_MS=$TARGET_MS, $(date -u +%Y-%m-%dT%H:%MZ), scoll $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "| coll | np | size | native µs | default µs | default/native | scoll µs | best algorithm | best µs | best/native |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for mode in $modes; do
	case $mode in
	colls)
		variants=(native default scoll)
		if [ "$ALGS" = all ]; then variants+=(alg); fi
		for np in $NP; do
			if [ "$np" -gt "$ncores" ]; then log "np=$np: more processes than the $ncores cores (oversubscribed)"; fi
			for coll in $COLLS; do
				measure colls "$coll" "$np" "$(sizes "$coll" "$SIZES")" "${variants[@]}"
			done
		done
		;;
	latency) measure latency allreduce 2 8 native default scoll ;;
	forward) measure forward forward 2 "$(sizes forward "$FORWARD_SIZES")" native default ;;
	split)
		for np in $SPLIT_NP; do
			if [ "$np" -gt "$ncores" ]; then log "split np=$np: $np processes on $ncores cores (oversubscribed)"; fi
			measure split split "$np" 0 native default scoll
		done
		;;
	*) echo "dropin-bench: unknown mode $mode (colls, latency, forward, split, all)" >&2; exit 2 ;;
	esac
done
echo
echo "Modes: $modes. default: preloaded, no settings; scoll: SCOLL_MPI_CHOICE=scoll; best: SCOLL_MPI_CHOICE=scoll with SCOLL_ALGORITHM_<COLL>, the least median among the algorithms with a result in every round. Runs with more processes than the $ncores cores are oversubscribed. CSV: $OUT"
if [ "$failed" -ne 0 ]; then
	echo
	echo "Sizes without a result: $failed (status in the CSV). To repeat one:"
	echo
	awk -F, 'NR > 1 && $8 == "-" { k = $2 "," $3 "," $4 "," $5 "," $6; if (!(k in n)) order[++m] = k; n[k]++ }
	END { for (i = 1; i <= m; i++) print order[i] "," n[order[i]] }' "$OUT" |
		while IFS=, read -r variant alg coll np size count; do
			cmdline "$variant" "$alg" "$coll" "$np" "$size"
			echo "    $(printf '%q ' "${cmd[@]}")  # $count round(s)"
		done
fi
