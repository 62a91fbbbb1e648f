#!/usr/bin/env bash
# What a new user runs, end to end, on a clean checkout: the README
# quickstart's main command, every example of every `scoll <command>
# --help`, the commands of the README's command table, and bad flags. It
# fails on a panic, a non-zero exit where success is expected, a zero exit
# where failure is expected, or a run longer than 60 s. (The quickstart's
# other command, go test ./..., is .ci/run's own first step; the long
# reproductions in docs/ and the multi-host launch lines are not run.)
#
#   scripts/newuser.sh            # from the repository's root
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
limit=${NEWUSER_LIMIT:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/run"
go build -o "$work/bin/scoll" ./cmd/scoll || exit 1
go build -o "$work/run/allreduce" ./examples/allreduce || exit 1
export PATH="$work/bin:$PATH"
fails=0 runs=0

# verdict WANT CODE OUT: why a run with exit status CODE and output OUT
# fails what WANT (ok or fail) asks, or nothing when it does not: a run
# over the time limit, a panic, or the wrong exit status.
verdict() {
	if [ "$2" -eq 124 ]; then
		echo "ran longer than ${limit}s"
	elif grep -qE '^panic:|^goroutine [0-9]+ \[' <<<"$3"; then
		echo "panicked"
	elif [ "$1" = ok ] && [ "$2" -ne 0 ]; then
		echo "exit status $2, want 0"
	elif [ "$1" = fail ] && [ "$2" -eq 0 ]; then
		echo "exit status 0, want failure"
	fi
}

# check WANT NAME CMD: runs CMD (a shell line) in the work directory under
# the time limit and checks its exit status (WANT ok or fail) and that it
# did not panic.
check() {
	local want=$1 name=$2 line=$3 start end code out why
	runs=$((runs + 1))
	start=$(date +%s)
	local dir="$work/run"
	case $line in *"go run "*) dir=$root ;; esac # go run needs the module
	out=$(cd "$dir" && timeout "$limit" bash -c "$line" 2>&1 >/dev/null)
	code=$?
	end=$(date +%s)
	why=$(verdict "$want" $code "$out")
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "FAIL ($why, $((end - start))s) $name: $line"
		sed 's/^/    /' <<<"$out" | tail -5
	else
		echo "ok   ($((end - start))s) $name: $line"
	fi
}

# expect WANT NAME CMD PATTERN...: as check, and then each extended
# regular expression PATTERN must match the command's output (stdout and
# stderr together, escape codes kept) or, written !PATTERN, must not.
expect() {
	local want=$1 name=$2 line=$3 code out pat why=""
	shift 3
	runs=$((runs + 1))
	local dir="$work/run"
	case $line in *"go run "*) dir=$root ;; esac
	out=$(cd "$dir" && timeout "$limit" bash -c "$line" 2>&1)
	code=$?
	why=$(verdict "$want" $code "$out")
	for pat in "$@"; do
		[ -n "$why" ] && break
		case $pat in
		!*) if grep -qE -- "${pat#!}" <<<"$out"; then why="output matches ${pat#!}"; fi ;;
		*) if ! grep -qE -- "$pat" <<<"$out"; then why="output does not match $pat"; fi ;;
		esac
	done
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "FAIL ($why) $name: $line"
		sed 's/^/    /' <<<"$out" | tail -5
	else
		echo "ok   $name: $line"
	fi
}

# The README quickstart's main command (through the built binary).
check ok quickstart "scoll bench"

# Every example of every command's help (./allreduce is the allreduce
# example, built; `--update docs/algorithms.md` works on a copy).
mkdir -p "$work/run/docs"
cp "$root/docs/algorithms.md" "$work/run/docs/algorithms.md"
for cmd in $(scoll --help | sed -n '/^Available Commands:/,/^Flags:/p' | awk 'NR>1 && NF>1 {print $1}' | grep -v '^help$\|^completion$'); do
	scoll "$cmd" --help | sed -n '/^Examples:/,/^Flags:/p' | sed -n 's/^  \(scoll .*\)$/\1/p' | while IFS= read -r ex; do
		echo "$cmd	$ex"
	done
done >"$work/examples"
# Traces and saved runs that examples read (--trace, --from) come from the
# examples that write them (--record, --csv, --format csv): readers last.
sort -s -t'	' -k2,2 <"$work/examples" | awk -F'\t' '
	/--record/ {print; next}
	/--from|--trace/ {last[++nl] = $0; next}
	{print}
	END {for (i = 1; i <= nl; i++) print last[i]}' >"$work/examples.sorted"
while IFS='	' read -r cmd ex; do
	check ok "$cmd --help example" "$ex"
done <"$work/examples.sorted"

# The README's marked commands: the lines of its "<!-- newuser:" comment.
sed -n '/^<!-- newuser:/,/^-->/p' "$root/README.md" | sed '1d;$d' >"$work/readme"
while IFS= read -r line; do
	check ok "README" "$line"
done <"$work/readme"

# Bad flags: each must fail, with a message and no panic.
for line in \
	"scoll bench --np 0" \
	"scoll bench --sizes 12Q" \
	"scoll bench --op allsum" \
	"scoll sim --topology torus:0x4" \
	"scoll sim --plot x.pdf" \
	"scoll model --np -4" \
	"scoll schedule --op allreduce --algorithm nosuch" \
	"scoll predict --np 0" \
	"scoll calibrate --output /nonexistent/dir/p.json" \
	"scoll run --rendezvous file:/nonexistent/dir --np 2 -- ./allreduce" \
	"scoll split --np -1" \
	"scoll nosuchcommand" \
	"./allreduce -n -5" \
	"SCOLL_ALGORITHM_ALLREDUCE=rign ./allreduce -n 10"; do
	check fail "bad flags" "$line"
done

# Figures: the figure commands write into the current directory (or the
# --out given), never into ./docs/figures, and say where each file went.
figs="--tori 2x2x2 --shapes 2x2x2 --sizes 8 --node-sizes 8 --progress never"
expect ok "figures here" "rm -rf docs fig3.* && scoll figures $figs && test -s fig3.3-allgather-single-port-vs-size.svg && test -s fig3.11-reducescatter-vs-nodes.csv && test ! -e docs" \
	'wrote \./fig3\.3-allgather-single-port-vs-size\.svg' 'wrote \./fig3\.11-reducescatter-vs-nodes\.csv'
expect ok "figures --out" "rm -rf docs figs && scoll figures $figs --out figs && test -s figs/fig3.5-allgather-multi-port-vs-size.svg && test ! -e docs" \
	'wrote \./figs/fig3\.5-allgather-multi-port-vs-size\.svg'
expect ok "marendic here" "rm -rf docs marendic-* && scoll marendic --np 8 --radix-vector 2,4 && test -s marendic-fig6.svg && test -s marendic-fig10.csv && test ! -e docs" \
	'wrote \./marendic-fig10\.svg' 'wrote \./marendic-fig6\.csv'
expect ok "marendic --out" "rm -rf docs m && scoll marendic --np 8 --radix-vector 2,4 --out m && test -s m/marendic-fig6.svg && test ! -e docs" \
	'wrote \./m/marendic-fig6\.svg'
expect ok "schedule svg" "scoll schedule --op allgather --algorithm ring --np 6 --format svg >ring.svg && grep -c 'class=\"msg\"' ring.svg" \
	'^[0-9]+$'

# Names of kinds within a flag's value get the same wording.
expect fail grammar "scoll sim --topology torus:4x4 --mapping morten" '^scoll sim: --mapping: unknown mapping "morten"; did you mean "morton"\?'
expect fail grammar "scoll sim --topology torus:4x4 --switching cut" '^scoll sim: --switching: unknown switching mode "cut"; did you mean "cut-through"\?'
expect fail grammar "scoll split --np 8 --group distribted:4" '^scoll split: --group: unknown group representation "distribted"; did you mean "distributed"\?'

# Output streams: no escape codes where the stream is not a terminal (also
# with --progress always), units in the tables' cells and in the CSV
# columns' names, the notes that explain a table, and help that names the
# columns printed.
esc=$'\x1b' cr=$'\r'
expect ok "sim to files" "scoll sim --topology torus:4x4x4 --op allreduce --sizes 64 --progress always >o.txt 2>e.txt; cat o.txt e.txt" \
	"!$esc" "!$cr" ' µs ' ' MB/s' '^scoll sim: note: stage model not valid for [a-z0-9, -]+ \(.*\); --model flow simulates them$'
expect ok "sim stage note once" "scoll sim --topology torus:4x4x4 --op bcast --sizes 64 --progress never 2>&1 >/dev/null | grep -c 'stage model not valid'" '^1$'
expect ok "bench to a file" "scoll bench --np 2 --sizes 8,4K --algorithm ring --progress always >o.txt 2>&1; cat o.txt" \
	"!$esc" "!$cr" ' µs ' '4 KiB' ' MB/s' '!avg\(us\)'
expect ok "model to a file" "scoll model --np 8 --sizes 8 --progress always >o.txt 2>&1; cat o.txt" \
	"!$esc" "!$cr" 'bucket3 +8 +8 B +180\.0 µs†' '^† cost > 2× critical: .*round-synchronous.*critical path'
expect ok "split to a file" "scoll split --np 16 --reps 1 --algorithm cheng --progress always >o.txt 2>&1; cat o.txt" \
	"!$esc" "!$cr" ' [mµ]s ' ' KiB ' '![0-9]K( |$)'
expect ok "split --record" "scoll split --np 8 --record s.trace" 'B into s\.trace$' '![0-9]K '
expect ok "csv units" "scoll sim --topology torus:2x2 --algorithm ring --sizes 64 --format csv; scoll model --np 8 --sizes 8 --format csv; scoll bench --np 2 --sizes 8 --algorithm ring --format csv" \
	'^topology,ranks,op,algorithm,bytes,model,time_s,alpha_count,delta_bytes,mbps,max_congestion$' \
	'^op,algorithm,np,bytes,cost_s,critical_s,loggp_s,' '^op,algorithm,type,np,bytes,count,warmup,iters,avg_us,min_us,max_us,gb_per_s,chosen$' '!µs'
expect ok "help names columns" "scoll sim --help; scoll model --help; scoll bench --help" 'time \(time_s\)' 'rate \(mbps\)' 'critical \(critical_s\)' 'avg \(avg_us\)'
expect ok "defaults once" "scoll predict --help; scoll calibrate --help" '!\(default[^)]*\).*\(default'

# One grammar: the same flag names, values and errors on every command;
# an error is one line, "scoll COMMAND: WHAT: WHY", with no Go-internal text.
tiny="--topology torus:2x2 --op allgather --algorithm ring"
expect ok grammar "scoll sim $tiny --sizes 1.5K --format csv" '^torus:2x2,4,allgather,ring,1536,'
expect ok grammar "scoll sim $tiny --sizes 64..1M --format csv" ',1048576,' ',65536,'
expect ok grammar "scoll sim $tiny --sizes 64:1K:x4 --format csv" ',256,' ',1024,'
expect ok grammar "scoll sim $tiny --size 4K --format csv" ',4096,'
expect ok grammar "scoll model --np 4..16 --sizes 8 --format csv" '^allreduce,'
expect ok grammar "scoll schedule --algorithm rabenseifner --np 4 --sizes 16" 'rank 3 of 4'
expect ok grammar "scoll sim $tiny --sizes 64 --progress on" 'ring'
expect ok grammar "scoll split --np 8 --reps 1 --algorithm cheng --progress off" 'cheng'
expect ok grammar "scoll sim --help" 'progress.*auto .*always or never' '--op string +collective \(default "allreduce"\)'
expect ok grammar "scoll split --help" 'progress.*auto .*always or never' '!auto, on, off'
expect fail grammar "scoll sim --sizes 99999999999999999999" '^scoll sim: --sizes "99999999999999999999": too large' '!strconv'
expect fail grammar "scoll bench --sizes 12Q" '^scoll bench: --sizes "12Q": unknown unit "Q" \(valid: B, K'
expect fail grammar "scoll sim --sizes 1.1K" '^scoll sim: --sizes "1.1K": not a whole number'
expect fail grammar "scoll sim --topo x" '^scoll sim: unknown flag --topo; did you mean --topology\?'
expect fail grammar "scoll bench --szes 8" '^scoll bench: unknown flag --szes; did you mean --sizes\?'
expect fail grammar "scoll sim --op allredcue" '^scoll sim: --op: unknown collective "allredcue"; did you mean "allreduce"\? \(valid: '
expect fail grammar "scoll sim --algorithm rign" '^scoll sim: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\? \(valid: '
expect fail grammar "scoll bench --algorithm rign" '^scoll bench: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\?'
expect fail grammar "scoll schedule --algorithm rign" '^scoll schedule: --algorithm: unknown algorithm "rign" for allreduce; did you mean "ring"\?'
expect fail grammar "scoll predict --algorithm rign" '^scoll predict: --algorithm: unknown algorithm "rign"'
expect fail grammar "scoll split --algorithm nosuch" '^scoll split: --algorithm: unknown split algorithm "nosuch" \(valid: .*cheng' '!median'
expect fail grammar "scoll model --op allredcue" 'did you mean "allreduce"\?'
expect fail grammar "scoll algorithms allredcue" '^scoll algorithms: unknown collective "allredcue"; did you mean "allreduce"\?'
expect fail grammar "scoll sim --progress sometimes" '^scoll sim: --progress: unknown progress mode "sometimes" \(valid: auto, always, never\)'
expect fail grammar "scoll schedule --algorithm ring --format txt" '^scoll schedule: --format: unknown format "txt"; did you mean "text"\?'
expect fail grammar "scoll sim --topology torsu:4x4" '^scoll sim: --topology: unknown topology kind "torsu"; did you mean "torus"\?'
expect fail grammar "scoll model --params infinband" '^scoll model: --params: unknown params preset "infinband"; did you mean "infiniband"\?'
expect fail grammar "scoll bench --iters x" '^scoll bench: --iters "x": want a whole number$' '!strconv'
expect fail grammar "scoll siim" '^scoll: unknown command "siim"; did you mean "sim"\?' '!Did you mean this'
expect fail grammar "scoll algorithms a b" '^scoll algorithms: arguments: want at most 1, got 2'
expect fail grammar "scoll sim extra" '^scoll sim: unexpected argument "extra"'
for cmd in sim bench model schedule split run predict clairvoyant marendic; do
	expect fail grammar "scoll $cmd --np 0" "^scoll $cmd: --np \"0\": want a rank count of at least 1"
done
expect fail grammar "scoll sim --np -3" '^scoll sim: --np "-3": want a rank count of at least 1'
expect fail grammar "scoll model --np 0..8" '^scoll model: --np "0..8": want a rank count of at least 1'

echo "newuser: $runs runs, $fails failed"
[ "$fails" -eq 0 ]
