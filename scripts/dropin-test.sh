#!/usr/bin/env bash
# The drop-in library's own test under mpirun: builds libscollmpi.so and
# cmd/libscollmpi/testdata/collectives.c with MPICC (default mpicc), runs
# the test natively and with the library preloaded and linked, at 1 to 5
# processes, and checks from SCOLL_MPI_REPORT that the library handled the
# calls it should (and forwarded the one it should not: a user operator).
# Then, when MPICH is installed beside it (mpicc.mpich and mpirun.mpich,
# Debian's mpich and libmpich-dev), the same under MPICH: its ABI differs,
# so it has a library of its own (scripts/build-dropin.sh).
#
#   scripts/dropin-test.sh [MPICC]
set -euo pipefail
cd "$(dirname "$0")/.."
mpicc=${1:-mpicc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}

# flavor MPICC: mpich when MPICC links MPICH, else openmpi.
flavor() {
	if "$1" -show 2>/dev/null | grep -q -- '-lmpich'; then echo mpich; else echo openmpi; fi
}

# launch NP [VAR=VALUE...] PROG: PROG on NP processes of $mpi's mpirun, with
# the variables set in every process; the launchers spell that differently
# (Open MPI: -x VAR=VALUE, and --oversubscribe past the cores; MPICH's
# hydra: -genv VAR VALUE, and it oversubscribes unasked).
#
# MPICH 4.0's device collectives (ch4) crash in an MPI_Reduce with
# MPI_IN_PLACE at a root other than 0 (pmodels/mpich#6540, fixed by 4.1.3:
# the node-level reduce reads from MPI_IN_PLACE); the C test makes such
# calls natively, so MPICH's own MPI_Reduce keeps to its portable
# algorithms (MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE=0, a documented CVAR).
launch() {
	local np=$1 vars=()
	shift
	while [[ $1 == *=* ]]; do
		if [ "$mpi" = mpich ]; then vars+=(-genv "${1%%=*}" "${1#*=}"); else vars+=(-x "$1"); fi
		shift
	done
	if [ "$mpi" = mpich ]; then
		timeout 120 mpirun.mpich -np "$np" -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0 "${vars[@]}" "$@"
	else
		timeout 120 mpirun --oversubscribe -np "$np" "${vars[@]}" "$@"
	fi
}

# want_report FILE NP: every odd rank handled 354 calls, every even rank
# 356 (it is in MPI_Comm_create's communicator: a bcast there and its
# MPI_Comm_free), rank 0 358 (also alone in a split's communicator: a
# barrier there and its free), and each forwarded 1 (the user operator).
want_report() {
	local lines
	lines=$(grep -cE '^\{"rank":(0,"handled":358|[0-9]*[13579],"handled":354|[0-9]*[2468],"handled":356),"forwarded":1,' "$1" || true)
	if [ "$lines" -ne "$2" ]; then
		echo "dropin ($mpi): $1: want $2 ranks with 354 handled (even ranks 356, rank 0 358) and 1 forwarded calls, got:" >&2
		cat "$1" >&2
		exit 1
	fi
}

# attempt NP [VAR=VALUE...] PROG: launch, its output in $tmp/out and its
# exit status in rc.
attempt() {
	rc=0
	launch "$@" >"$tmp/out" 2>&1 || rc=$?
}

# want_ok: the last attempt exited 0 and printed ok.
want_ok() {
	if [ "$rc" -ne 0 ] || ! grep -q '^ok:' "$tmp/out"; then
		echo "dropin ($mpi): want ok, got exit status $rc and:" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
}

# run_native NP: the test without the drop-in. MPICH before 4.1 copies a
# one-process MPI_Allgatherv's block to the start of the receive buffer,
# ignoring displs[0] (pmodels/mpich#6374); the test puts a gap there, so
# natively at 1 process under MPICH those checks, and only they, may fail.
run_native() {
	attempt "$1" "$tmp/$mpi-native"
	if [ "$mpi" = mpich ] && [ "$1" -eq 1 ] && [ "$rc" -eq 1 ] && grep -q '^FAIL:' "$tmp/out" &&
		! grep '^rank 0: ' "$tmp/out" | grep -qv '^rank 0: allgatherv inplace=0: '; then
		echo "dropin ($mpi): natively at 1 process only MPICH's MPI_Allgatherv failed (displs ignored, pmodels/mpich#6374)"
		return
	fi
	want_ok
}

# check MPICC: the test under MPICC's MPI.
check() {
	mpi=$(flavor "$1")
	mkdir -p "$tmp/$mpi"
	scripts/build-dropin.sh "$1" "$tmp/$mpi/libscollmpi.so"
	"$1" -O1 -o "$tmp/$mpi-native" cmd/libscollmpi/testdata/collectives.c
	"$1" -O1 -o "$tmp/$mpi-linked" cmd/libscollmpi/testdata/collectives.c -L"$tmp/$mpi" -lscollmpi
	"$1" -O1 -o "$tmp/$mpi-disagree" cmd/libscollmpi/testdata/disagree.c
	for np in 1 2 3 4 5; do
		run_native "$np"
		rm -f "$tmp/report"
		attempt "$np" LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_MPI_CHOICE=scoll "$tmp/$mpi-native"
		want_ok
		want_report "$tmp/report" "$np"
		rm -f "$tmp/report"
		attempt "$np" LD_LIBRARY_PATH="$tmp/$mpi" SCOLL_MPI_REPORT="$tmp/report" SCOLL_MPI_CHOICE=scoll "$tmp/$mpi-linked"
		want_ok
		want_report "$tmp/report" "$np"
		# The built-in rules (the default) forward what the MPI library
		# does faster; the results are the same.
		attempt "$np" LD_PRELOAD="$tmp/$mpi/libscollmpi.so" "$tmp/$mpi-native"
		want_ok
		echo "dropin ($mpi): ok at $np processes (native, preloaded, linked, the built-in rules)"
	done
	# SCOLL_ALGORITHM_ALLREDUCE=native leaves every MPI_Allreduce to the MPI
	# library; an algorithm named for another collective reaches scoll.
	rm -f "$tmp/report"
	attempt 3 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" \
		SCOLL_ALGORITHM_ALLREDUCE=native SCOLL_ALGORITHM_BCAST=binomial "$tmp/$mpi-native"
	want_ok
	want_native_allreduce "SCOLL_ALGORITHM_ALLREDUCE=native"
	echo "dropin ($mpi): ok with SCOLL_ALGORITHM_ALLREDUCE=native"
	# The ranks take rank 0's configuration: set on rank 0 alone, it holds
	# on every rank (a tuning file or variable that differs between ranks
	# cannot make them decide differently).
	rm -f "$tmp/report"
	attempt 3 SCOLL_MPI_REPORT="$tmp/report" bash -c 'if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" = 0 ]; then
		export SCOLL_ALGORITHM_ALLREDUCE=native SCOLL_ALGORITHM_BCAST=binomial; fi; LD_PRELOAD='"$tmp/$mpi/libscollmpi.so"' exec "$0"' \
		"$tmp/$mpi-native"
	want_ok
	want_native_allreduce "the variables on rank 0 only"
	echo "dropin ($mpi): ok with rank 0's configuration on every rank"
	# Ranks that disagree (rank 0 passes MPI_Allreduce another count) get
	# an error on every rank and the program ends.
	attempt 3 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_CHOICE=scoll "$tmp/$mpi-disagree"
	if [ "$rc" -ne 0 ] || [ "$(grep -c '^ok: rank' "$tmp/out")" -ne 3 ]; then
		echo "dropin ($mpi): disagreeing ranks: want an error on each of 3 ranks, got exit status $rc and:" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
	echo "dropin ($mpi): ok with disagreeing ranks (an error on every rank)"
	# The example of what only scoll gives an unmodified program: the
	# clairvoyant reduce keyed by call site, and algorithms chosen for a
	# described network (Sack's 6-bucket allgather on a multi-port torus).
	"$1" -O1 -o "$tmp/$mpi-imbalance" examples/dropin/imbalance.c
	rm -f "$tmp/report"
	attempt 4 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_ALGORITHM_REDUCE=clairvoyant "$tmp/$mpi-imbalance" 8 100
	want_ok
	want_algorithm '"reduce":\{"handled":[0-9]+,"forwarded":0,"algorithms":\{"clairvoyant":[0-9]+\}' 4 "SCOLL_ALGORITHM_REDUCE=clairvoyant"
	rm -f "$tmp/report"
	attempt 8 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_TOPOLOGY=torus:2x2x2 "$tmp/$mpi-imbalance" 3 0 1024 262144
	want_ok
	want_algorithm '"allgather":\{"handled":3,"forwarded":0,"algorithms":\{"bucket6":3\}' 8 "SCOLL_TOPOLOGY=torus:2x2x2"
	echo "dropin ($mpi): ok with the example (clairvoyant reduce, a described torus)"
	# Sack's and Moody's split algorithms for MPI_Comm_split (Moody's
	# bitonic and hash ask other ranks for addresses: requests answered
	# while those ranks are inside MPI calls).
	for alg in merge cheng bitonic hash radix; do
		rm -f "$tmp/report"
		attempt 4 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_ALGORITHM_SPLIT=$alg "$tmp/$mpi-native"
		want_ok
		want_algorithm '"comm_split":\{"handled":3,"forwarded":0,"algorithms":\{"'$alg'":3\}' 4 "SCOLL_ALGORITHM_SPLIT=$alg"
	done
	echo "dropin ($mpi): ok with the split algorithms merge, cheng, bitonic, hash, radix"
	# A tuning file's rules choose per call: allreduce natively below 1 KiB
	# (the test's counts 0, 1 and 7), with scoll above (1000 and 20011).
	cat >"$tmp/rules.json" <<-'RULES'
		{"version": 1, "rules": [
		  {"collective": "allreduce", "ranks": 3, "min_bytes": 0, "algorithm": "native"},
		  {"collective": "allreduce", "ranks": 3, "min_bytes": 1024, "algorithm": "ring"}]}
	RULES
	rm -f "$tmp/report"
	attempt 3 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_MPI_REPORT="$tmp/report" SCOLL_TUNING="$tmp/rules.json" "$tmp/$mpi-native"
	want_ok
	want_algorithm '"allreduce":\{"handled":(6[0-9]|[7-9][0-9]),"forwarded":(9[0-9]|1[0-9][0-9]),"algorithms":\{"ring":' 3 "SCOLL_TUNING with native rules"
	# scoll tune --mpi writes such a file from measurements; the library takes it.
	go build -tags "$(tags)" -o "$tmp/$mpi-scoll" ./cmd/scoll
	rm -f "$tmp/tuned.json"
	attempt 2 "$tmp/$mpi-scoll" tune --mpi --ops allreduce,alltoall --sizes 8,64K --reps 1 --time 2ms --tune-out "$tmp/tuned.json"
	if [ "$rc" -ne 0 ] || ! grep -q '"algorithm"' "$tmp/tuned.json"; then
		echo "dropin ($mpi): scoll tune --mpi: exit status $rc:" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
	attempt 2 LD_PRELOAD="$tmp/$mpi/libscollmpi.so" SCOLL_TUNING="$tmp/tuned.json" "$tmp/$mpi-native"
	want_ok
	echo "dropin ($mpi): ok with tuning files (native rules; scoll tune --mpi's)"
}

# tags: the build tags of $mpi.
tags() {
	if [ "$mpi" = mpich ]; then echo "mpi mpich"; else echo mpi; fi
}

# want_algorithm REGEXP NP WHAT: NP ranks' reports in $tmp/report match.
want_algorithm() {
	if [ "$(grep -cE "$1" "$tmp/report")" -ne "$2" ]; then
		echo "dropin ($mpi): $3: want $2 reports matching $1, got:" >&2
		cat "$tmp/report" >&2
		exit 1
	fi
}

# want_native_allreduce WHAT: the report in $tmp/report has 3 ranks that
# forwarded every allreduce and ran every bcast with the binomial tree.
want_native_allreduce() {
	if [ "$(grep -cE '"allreduce":\{"handled":0,"forwarded":[1-9][0-9]*,"forwarded_by":\{"operator":1,"rule":[1-9][0-9]*\}\}.*"bcast":\{"handled":[0-9]+,"forwarded":0,"algorithms":\{"binomial":' "$tmp/report")" -ne 3 ]; then
		echo "dropin ($mpi): $1: want every allreduce forwarded, every bcast handled by binomial:" >&2
		cat "$tmp/report" >&2
		exit 1
	fi
}

check "$mpicc"
if [ "$mpi" != mpich ] && command -v mpicc.mpich >/dev/null 2>&1 && command -v mpirun.mpich >/dev/null 2>&1; then
	check mpicc.mpich
fi
