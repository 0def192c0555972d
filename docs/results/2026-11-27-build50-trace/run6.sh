#!/bin/bash
cd /work/notes/build50
nohup /work/main/tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 1800 --out /work/notes/build50/run6 -- env REPS=6 python3 /work/notes/build50/guest_tlbcap.py > run6.log 2>&1 &
sleep 2
nohup python3 host_watch.py /work/notes/build50/run6 > run6.host.log 2>&1 &
for i in $(seq 100); do P=$(pgrep -f "qemu-system.*build50/run6" | head -1); [ -n "$P" ] && break; sleep 0.5; done
perf record -e cpu-clock -F 1000 -k CLOCK_MONOTONIC -p $P -o run6/perf.data > run6.perf.log 2>&1
