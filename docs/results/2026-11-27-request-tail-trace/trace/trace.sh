#!/bin/bash
# reqlat 10 ms x 4 workers per CPU (8 workers, 1 message thread, 2 vCPUs), 6 s, traced (sched_switch,
# sched_wakeup, sched_migrate_task): EEVDF, then scx_vrq's defaults (CONFIGS="name:args;..." for others; the
# figures in analysis.txt: CONFIGS="defaults:;rr3:--rr-interval-ms 3"). Run in the guest on the instruction
# clock, from the repository's root:
#   tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 1800 \
#     --stage target/bench/reqlat --stage target/release/scx_vrq --out OUT \
#     -- docs/results/2026-11-27-request-tail-trace/trace/trace.sh
# then: docs/results/2026-11-27-request-tail-trace/trace/analyze.py OUT/*.trace
set -u
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
T=/sys/kernel/tracing
trace_one() {
    echo 0 > $T/tracing_on; echo > $T/trace
    echo 60000 > $T/buffer_size_kb
    echo "sched:sched_switch sched:sched_wakeup sched:sched_migrate_task" | tr ' ' '\n' > $T/set_event
    echo 1 > $T/tracing_on
    "$repo/target/bench/reqlat" 6 8 10000 1 > "$VM_OUT/$1.out" 2>&1
    echo 0 > $T/tracing_on
    cat $T/trace > "$VM_OUT/$1.trace"
    cat "$VM_OUT/$1.out"
}
trace_one eevdf
configs=("defaults:")
[ -n "${CONFIGS:-}" ] && IFS=";" read -r -a configs <<< "$CONFIGS"
for cfg in "${configs[@]}"; do
    name=${cfg%%:*}; args=${cfg#*:}
    # shellcheck disable=SC2086
    "$repo/target/release/scx_vrq" $args > "$VM_OUT/vrq-$name.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q enabled /sys/kernel/sched_ext/state && break; sleep 0.2; done
    trace_one "$name"
    kill -INT "$pid"; wait "$pid"
done
