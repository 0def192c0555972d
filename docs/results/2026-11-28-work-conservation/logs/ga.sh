#!/bin/sh
cd /work/main
B=/tmp/exp/scx_vrq-main
for r in 1 2; do
echo "== eevdf"; tools/vm/timer-skew --hogs 2 --rounds 1 --secs 3
echo "== defaults"; tools/vm/timer-skew --hogs 2 --rounds 1 --secs 3 -- $B
echo "== ga-off"; tools/vm/timer-skew --hogs 2 --rounds 1 --secs 3 -- $B --group-accounting off
echo "== bfs"; tools/vm/timer-skew --hogs 2 --rounds 1 --secs 3 -- $B --profile bfs
done
