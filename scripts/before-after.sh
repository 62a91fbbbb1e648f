#!/usr/bin/env bash
# Runs the benchmarks behind docs/ with two scoll binaries side by side, in
# alternating order, REPS times, and prints the median of each measurement
# for both (the machine is shared and noisy: only side-by-side medians
# compare). Usage: scripts/before-after.sh BEFORE AFTER [REPS] > out.txt
set -euo pipefail
before=$1 after=$2 reps=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each case: a name, then the scoll arguments ({bin}: the binary). Its CSV rows are keyed by
# their first columns; the measured value is the column named in value.
cases=(
  "inproc-allreduce-auto|bench --np 8 --op allreduce --algorithm auto --sizes 8,1K,64K,1M --time 100ms --format csv --progress never"
  "inproc-allreduce-16|bench --np 16 --op allreduce --algorithm auto --sizes 8,1K,4K,64K --time 100ms --format csv --progress never"
  "inproc-bcast-auto|bench --np 8 --op bcast --algorithm auto --sizes 8,1K,64K,1M --time 100ms --format csv --progress never"
  "inproc-allgather-auto|bench --np 8 --op allgather --algorithm auto --sizes 8,1K,64K --time 100ms --format csv --progress never"
  "inproc-allreduce-ring|bench --np 8 --op allreduce --algorithm ring,recursive-doubling --sizes 1K,1M --time 100ms --format csv --progress never"
  "split-4096|split --np 4096 --algorithm allgather,bitonic,hash,cheng --reps 1 --format csv"
  "sim-rd-32k-stage|sim --topology torus:32x32x32 --op allgather --algorithm recursive-doubling --sizes 1K --model stage --format csv"
  "sim-rd-32k-flow|sim --topology torus:32x32x32 --op allgather --algorithm recursive-doubling --sizes 1K --model flow --format csv"
  "model-allreduce-1024|model --op allreduce --np 1024 --sizes 8,64K --format csv"
  "tcp-allreduce-4|run --np 4 -- {bin} bench --world --op allreduce --algorithm auto,ring --sizes 8,64K,1M --time 200ms --format csv --progress never"
)

for i in $(seq 1 "$reps"); do
  for c in "${cases[@]}"; do
    name=${c%%|*} args=${c#*|}
    order="before after"
    [ $((i % 2)) -eq 0 ] && order="after before" # alternate which goes first
    for v in $order; do
      bin=$before
      [ "$v" = after ] && bin=$after
      start=$(date +%s.%N)
      # {bin} in the arguments is the binary itself (scoll run -- scoll bench);
      # rank 0's lines come back prefixed with [0].
      # shellcheck disable=SC2086
      "$bin" ${args//\{bin\}/$bin} 2>/dev/null | sed 's/^\[0\] //' > "$tmp/$name.$v.$i.csv"
      end=$(date +%s.%N)
      echo "$name $v $i wall $(echo "$end - $start" | bc)" >> "$tmp/wall.txt"
    done
  done
done

python3 - "$tmp" "$reps" <<'PY'
import csv, statistics, sys, glob, os, collections
tmp, reps = sys.argv[1], int(sys.argv[2])
# Per case: median per (row key, numeric column) over reps, both binaries.
vals = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(tmp, "*.csv"))):
    base = os.path.basename(f)[:-4]
    name, v, i = base.rsplit(".", 2)
    with open(f) as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        keycols = [k for k in row if k in ("op", "algorithm", "bytes", "np")]
        key = " ".join(f"{k}={row[k]}" for k in keycols)
        for col in ("avg_us", "median_ms"):
            if col in row and row[col] not in ("", None):
                try:
                    vals[(name, key, col, v)].append(float(row[col]))
                except ValueError:
                    pass
for line in open(os.path.join(tmp, "wall.txt")):
    name, v, i, _, w = line.split()
    vals[(name, "whole command", "wall_s", v)].append(float(w))
# The simulators and models are deterministic: their outputs must agree.
for f in sorted(glob.glob(os.path.join(tmp, "*.before.1.csv"))):
    name = os.path.basename(f).split(".")[0]
    if name.startswith(("sim-", "model-")):
        same = open(f).read() == open(f.replace(".before.", ".after.")).read()
        print(f"# {name}: outputs {'identical' if same else 'DIFFERENT'}")
print(f"# medians of {reps} alternating runs; ratio = after / before")
print(f"{'case':24} {'row':60} {'column':10} {'before':>12} {'after':>12} {'ratio':>6}")
seen = sorted({k[:3] for k in vals})
for name, key, col in seen:
    b, a = vals.get((name, key, col, "before")), vals.get((name, key, col, "after"))
    if not b or not a:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    r = ma / mb if mb else float("nan")
    print(f"{name:24} {key[:60]:60} {col:10} {mb:12.6g} {ma:12.6g} {r:6.2f}")
PY
