#!/bin/bash
# A sched_switch / sched_wakeup / sched_migrate_task trace of `schbench -m 1 -t 4 -r 10` (one message thread,
# 2 workers per CPU on 2 vCPUs) under EEVDF, then scx_vrq with its defaults, then with --queue cpu --sticky.
# Run in the guest on the instruction clock, from the repository's root:
#   tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 1800 \
#     --stage target/bench/schbench --stage target/release/scx_vrq --out OUT \
#     -- docs/results/2026-11-27-schbench-locality/trace/trace.sh
# then: docs/results/2026-11-27-schbench-locality/trace/requests.py OUT/*.trace
set -u
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
T=/sys/kernel/tracing
trace_one() {  # NAME: trace one schbench run into $VM_OUT/NAME.trace, its report into NAME.out
    echo 0 > $T/tracing_on; echo > $T/trace
    echo 60000 > $T/buffer_size_kb
    for e in sched_switch sched_wakeup sched_migrate_task; do echo 1 > $T/events/sched/$e/enable; done
    echo 1 > $T/tracing_on
    "$repo/target/bench/schbench" -m 1 -t 4 -r 10 > "$VM_OUT/$1.out" 2>&1
    echo 0 > $T/tracing_on
    cat $T/trace > "$VM_OUT/$1.trace"
}
trace_one eevdf
for cfg in "defaults:" "cpu-sticky:--queue cpu --sticky"; do
    name=${cfg%%:*}; args=${cfg#*:}
    # shellcheck disable=SC2086
    "$repo/target/release/scx_vrq" $args > "$VM_OUT/vrq-$name.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q enabled /sys/kernel/sched_ext/state && break; sleep 0.2; done
    trace_one "$name"
    kill "$pid"; wait "$pid"
done
