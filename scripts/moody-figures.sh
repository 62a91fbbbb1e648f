#!/bin/sh
# moody-figures.sh: the shapes of Figures 3, 4 and 5 of Moody, Ahn and de
# Supinski, "Exascale Algorithms for Generalized MPI_Comm_split" (2011),
# measured with scoll split --figure on in-process ranks, then one recorded
# split per figure line simulated on a torus and a Clos network.
#
# Usage: scripts/moody-figures.sh [output directory]
# Environment: NPS (rank counts, default 16,64,256,1024,4096), REPS (default
# 5), MAXMEM (--max-memory, default 8GiB), NREC (ranks of the recorded
# splits, default 4096), TORUS and CLOS (topologies of NREC nodes).
#
# It takes long (the allgather baselines are O(n²) in all) and uses many
# cores: run it on a machine of your own.
set -eu
out=${1:-moody-figures}
NPS=${NPS:-16,64,256,1024,4096}
REPS=${REPS:-5}
MAXMEM=${MAXMEM:-8GiB}
NREC=${NREC:-4096}
TORUS=${TORUS:-torus:16x16x16}
CLOS=${CLOS:-clos:R=128,T=64,mu=1,nodes=4096}
mkdir -p "$out"
go build -o "$out/scoll" ./cmd/scoll
scoll=$out/scoll

for fig in moody3 moody4 moody5; do
	echo "== $fig" >&2
	"$scoll" split --figure "$fig" --np "$NPS" --reps "$REPS" --max-memory "$MAXMEM" \
		--format csv --progress off --plot "$out/$fig.svg" >"$out/$fig.csv"
done

# rec NAME FLAGS...: record one split on NREC ranks and simulate it; the
# lines of the simulator's CSV get the name in front (its header "split").
rec() {
	name=$1
	shift
	if ! "$scoll" split --np "$NREC" --record "$out/$name.trace" "$@" >&2; then
		echo "recording $name failed: skipped" >&2
		return 0
	fi
	for topo in "$TORUS" "$CLOS"; do
		"$scoll" sim --trace "$out/$name.trace" --topology "$topo" --format csv
	done | awk -v n="$name" '{ print (/^topology,/ ? "split" : n) "," $0 }'
}

{
	for alg in allgather-chain gather-scatter cheng-128 cheng-8192 bitonic radix; do
		rec "fig3-$alg" --algorithm "$alg" --no-split --chain
	done
	for l in 5 80; do
		for g in N small; do
			for alg in bitonic hash hash64; do
				rec "fig4-$alg-len$l-$g" --algorithm "$alg" --color-len "$l" --groups "$g" --no-reorder --chain
				rec "fig5-$alg-len$l-$g" --algorithm "$alg" --color-len "$l" --groups "$g" --chain
			done
		done
	done
} | awk '!/^split,topology,/ || !seen++' >"$out/simulated.csv"
echo "wrote $out/moody3.csv moody4.csv moody5.csv, their .svg plots and simulated.csv" >&2
