#!/bin/bash
cd /work/notes/build50
nohup /work/main/tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 2400 --out /work/notes/build50/run7 --stage /work/main/target/release/scx_vrq --stage /work/wt-b50/target/release/scx_vrq -- env REPS=4 TRACE=1 CFGS="eevdf vrq vrqfix" python3 /work/notes/build50/guest_b50.py > run7.log 2>&1 &
sleep 2
nohup python3 host_watch.py /work/notes/build50/run7 > run7.host.log 2>&1 &
for i in $(seq 100); do P=$(pgrep -f "qemu-system.*build50/run7" | head -1); [ -n "$P" ] && break; sleep 0.5; done
perf record -e cpu-clock -F 1000 -k CLOCK_MONOTONIC -p $P -o run7/perf.data > run7.perf.log 2>&1
