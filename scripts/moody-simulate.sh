#!/bin/sh
# Recorded splits simulated with the stage model on a torus and a Clos
# network of as many nodes as ranks. NPS picks the sizes (default 256 1024
# 4096; 16384 too), ONLY a regular expression on "figure variant algorithm"
# (e.g. ONLY='fig3 .* cheng').
S=${SCOLL:-scoll}
out=${OUT:-moody-sim}
mkdir -p $out
topo() {
  case $1 in
    256) echo "torus:4x8x8 clos:R=32,T=16,mu=1,nodes=256" ;;
    1024) echo "torus:8x8x16 clos:R=64,T=32,mu=1,nodes=1024" ;;
    4096) echo "torus:16x16x16 clos:R=128,T=64,mu=1,nodes=4096" ;;
    16384) echo "torus:16x32x32 clos:R=256,T=128,mu=1,nodes=16384" ;;
  esac
}
echo "figure,variant,np,algorithm,topology,time_s,alpha_count,delta_bytes,max_congestion,messages_bytes"
for n in ${NPS:-256 1024 4096}; do
  for spec in \
    "fig3 reorder --no-split --chain:allgather-chain gather-scatter cheng-128 cheng-512 bitonic radix" \
    "fig4 few/len80 --color-len 80 --groups small --no-reorder --chain:bitonic hash hash64" \
    "fig4 many/len5 --color-len 5 --groups N --no-reorder --chain:bitonic hash hash64" \
    "fig5 few/len5 --color-len 5 --groups small --chain:bitonic hash hash64" ; do
    head=${spec%%:*}; algs=${spec#*:}
    set -- $head; fig=$1; var=$2; shift 2; flags="$*"
    for a in $algs; do
      if [ -n "$ONLY" ] && ! echo "$fig $var $a" | grep -Eq "$ONLY"; then continue; fi
      tr=$out/$fig-$(echo $var | tr / -)-$a-$n.trace
      if ! $S split --np $n --algorithm $a $flags --record $tr > /dev/null 2>$tr.err; then echo "# $fig $var $n $a: record failed" >&2; continue; fi
      for t in $(topo $n); do
        $S sim --trace $tr --topology "$t" --format csv 2>/dev/null | tail -1 | awk -F, -v f=$fig -v v=$var -v n=$n -v a=$a -v t="$t" '{ print f "," v "," n "," a ",\"" t "\"," $(NF-4) "," $(NF-3) "," $(NF-2) "," $NF "," $(NF-6) }'
      done
      rm -f $tr
    done
  done
done
