#!/bin/bash
# 2026-11-28, 1f75093's scheduler (compilers stay, exec rule mended): what moves are left at build-50
cd /work/notes/build50
nohup /work/main/tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 3600 --out /work/notes/build50/run10 --stage /work/main/target/release/scx_vrq -- env REPS=4 TRACE=1 CFGS="eevdf vrq" python3 /work/notes/build50/guest_b50.py > run10.log 2>&1 &
sleep 2
nohup python3 host_watch.py /work/notes/build50/run10 > run10.host.log 2>&1 &
