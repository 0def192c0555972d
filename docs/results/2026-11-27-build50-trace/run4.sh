#!/bin/bash
# run4: instruction clock, no tracefs, QEMU host CPU per run + perf cpu-clock profile of QEMU
cd /work/notes/build50
nohup /work/main/tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 1800 --out /work/notes/build50/run4 --stage /work/main/target/release/scx_vrq -- env REPS=4 TRACE=0 CFGS="eevdf vrq" python3 /work/notes/build50/guest_b50.py > run4.log 2>&1 &
sleep 2
nohup python3 host_watch.py /work/notes/build50/run4 > run4.host.log 2>&1 &
for i in $(seq 100); do P=$(pgrep -f "qemu-system.*build50/run4" | head -1); [ -n "$P" ] && break; sleep 0.5; done
perf record -e cpu-clock -F 1000 -k CLOCK_MONOTONIC -p $P -o run4/perf.data > run4.perf.log 2>&1
