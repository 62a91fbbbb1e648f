#!/usr/bin/env bash
# compare-subcomm.sh: in-process collectives on derived communicators next
# to the same on the world, in one run: scoll bench --on world, dup (the
# same ranks through a duplicate's rank translation) and split (the world
# split with its ranks reversed), interleaved REPS times; the median of the
# per-run averages is shown, and the ratio to the world's.
#
#   scripts/compare-subcomm.sh
#   NP=8 OPS="allreduce allgather" SIZES=8,64K,1M ALGS=auto,ring REPS=5 scripts/compare-subcomm.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
NP=${NP:-4}
OPS=${OPS:-"allreduce allgather bcast"}
SIZES=${SIZES:-8,1K,64K,1M}
ALGS=${ALGS:-auto}
REPS=${REPS:-5}
TIME=${TIME:-300ms}
make_work
go build -o "$work/scoll" ./cmd/scoll || exit 1
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, np=$NP, medians of $REPS interleaved runs (µs per call)"
printf "\n%-10s %-10s %8s | %10s %10s %6s %10s %6s\n" op algorithm bytes world dup ratio split ratio
for op in $OPS; do
	for on in world dup split; do : >"$work/$on"; done
	for _ in $(seq "$REPS"); do
		for on in world dup split; do
			"$work/scoll" bench --np "$NP" --op "$op" --sizes "$SIZES" --algorithm "$ALGS" --on "$on" \
				--time "$TIME" --format csv --progress never 2>/dev/null |
				awk -F, '$1 == "'"$op"'" { print $2 "," $5 "," $9 }' >>"$work/$on"
		done
	done
	for on in world dup split; do
		medians "$work/$on" -k1,1 -k2,2n -k3,3g >"$work/$on.m"
	done
	join -t, -j1 <(awk -F, '{ print $1 "/" $2 "," $3 }' "$work/world.m" | sort) \
		<(awk -F, '{ print $1 "/" $2 "," $3 }' "$work/dup.m" | sort) |
		join -t, -j1 - <(awk -F, '{ print $1 "/" $2 "," $3 }' "$work/split.m" | sort) |
		sort -t/ -k1,1 -k2,2n | awk -F, -v op="$op" '{ split($1, a, "/"); printf "%-10s %-10s %8s | %10.2f %10.2f %6.2f %10.2f %6.2f\n", op, a[1], a[2], $2, $3, $3 / $2, $4, $4 / $2 }'
done
