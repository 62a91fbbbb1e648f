#!/usr/bin/env bash
# The modelled counterpart of the imbalance benchmark's single-late-rank
# sweep: for P ranks and each size, the last rank arrives 0, 0.5, ..., 3
# times clairvoyant's modelled balanced time late, and scoll model
# --arrivals gives every reduce algorithm's time (arrival_s: the critical
# path from the earliest arrival to the last end) under PARAMS. Prints CSV:
# size, level, imbalance, algorithm, time, ratio to clairvoyant.
# Usage: scripts/imbalance-model.sh SCOLL P PARAMS SIZE...
set -euo pipefail
scoll=$1 np=$2 params=$3
shift 3
algs="binomial,rabenseifner,parallel-ring,radix-k,two-tree,clairvoyant"
arrivals() { # the vector with the last rank late by $1 seconds
  local v="" i
  for ((i = 0; i < np - 1; i++)); do v+="0,"; done
  echo "${v}$1"
}
echo "size,level,imbalance_s,algorithm,time_s,ratio"
for size in "$@"; do
  base=$("$scoll" model --op reduce --np "$np" --sizes "$size" --params "$params" --format csv |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i } $2 == "clairvoyant" { print $col["arrival_s"] }')
  for level in 0 0.5 1 1.5 2 2.5 3; do
    late=$(awk -v b="$base" -v l="$level" 'BEGIN { printf "%.9f", b * l }')
    "$scoll" model --op reduce --np "$np" --sizes "$size" --params "$params" --format csv --arrivals "$(arrivals "$late")" |
      awk -F, -v size="$size" -v level="$level" -v late="$late" -v algs="$algs" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(algs, want, ","); for (i = 1; i <= n; i++) keep[want[i]] = 1; next }
        keep[$2] { t[$2] = $col["arrival_s"]; order[++k] = $2 }
        END { for (i = 1; i <= k; i++) printf "%s,%sx,%s,%s,%s,%.4f\n", size, level, late, order[i], t[order[i]], t[order[i]] / t["clairvoyant"] }'
  done
done
