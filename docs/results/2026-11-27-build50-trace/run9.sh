#!/bin/bash
cd /work/notes/build50
nohup /work/main/tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 2400 --out /work/notes/build50/run9 --stage /work/main/target/release/scx_vrq --stage /work/wt-b50/target/release/scx_vrq -- env REPS=3 TRACE=1 CFGS="eevdf vrq vrqfix-lrr" python3 /work/notes/build50/guest_b50.py > run9.log 2>&1 &
sleep 2
nohup python3 host_watch.py /work/notes/build50/run9 > run9.host.log 2>&1 &
for i in $(seq 100); do P=$(pgrep -f "qemu-system.*build50/run9" | head -1); [ -n "$P" ] && break; sleep 0.5; done
perf record -e cpu-clock -F 1000 -k CLOCK_MONOTONIC -p $P -o run9/perf.data > run9.perf.log 2>&1
