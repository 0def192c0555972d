#!/bin/bash
# the one-busy-vCPU probe at each vCPU count, one VM at a time
cd /work/wt-percpu
for spec in 2:1:2:1 8:2:2:2 32:2:8:2 64:2:16:2; do
  n=${spec%%:*}; topo=${spec#*:}
  mkdir -p /work/exp/pinned/out-$n
  s=$(date +%s)
  tools/vm/vm-run --cpus $n --topology $topo --accel tcg --tcg-threads single --clock instructions --timeout 1500 \
     --out /work/exp/pinned/out-$n -- /work/exp/pinned/probe.py > /work/exp/pinned/out-$n.log 2>&1
  echo "$n vCPUs: rc=$? wall $(( $(date +%s) - s )) s" >> /work/exp/pinned/walls.txt
done
