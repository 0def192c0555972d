#!/bin/bash
# frames (60 Hz, 4 ms of CPU per frame) beside 2 fork loops (sh: while :; do /bin/true; done), traced:
# sched_switch, sched_wakeup, sched_wakeup_new, hrtimer start/expire. EEVDF, then scx_vrq's defaults,
# then --vfork-handoff false (CONFIGS="name:args;name:args" for others; ROUND names the files). Run in
# the guest on the instruction clock, from the repository's root:
#   tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 1800 \
#     --stage target/bench/frames --stage target/release/scx_vrq --stage /usr/bin/dash --stage /usr/bin/true \
#     --stage /usr/bin/setsid --out OUT -- docs/results/2026-11-27-exec-rule-interrupts/trace/trace.sh
# then: docs/results/2026-11-27-exec-rule-interrupts/trace/analyze.py OUT/*.trace
set -u
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
T=/sys/kernel/tracing
trace_one() {
    echo 0 > $T/tracing_on; echo > $T/trace
    echo 60000 > $T/buffer_size_kb
    echo "sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new timer:hrtimer_start timer:hrtimer_expire_entry" | tr ' ' '\n' > $T/set_event
    pids=()
    for _ in 1 2; do setsid /bin/sh -c 'while :; do /bin/true; done' & pids+=($!); done
    sleep 1
    echo 1 > $T/tracing_on
    "$repo/target/bench/frames" 8 4000 > "$VM_OUT/$1.out" 2>&1
    echo 0 > $T/tracing_on
    for p in "${pids[@]}"; do kill -9 -- -$p 2>/dev/null; kill -9 $p 2>/dev/null; done
    wait "${pids[@]}" 2>/dev/null
    cat $T/trace > "$VM_OUT/$1.trace"
    cat "$VM_OUT/$1.out"
}
for round in ${ROUND:-1}; do
trace_one eevdf-$round
configs=("defaults:" "vfork-off:--vfork-handoff false")
[ -n "${CONFIGS:-}" ] && IFS=";" read -r -a configs <<< "$CONFIGS"
for cfg in "${configs[@]}"; do
    name=${cfg%%:*}; args=${cfg#*:}
    # shellcheck disable=SC2086
    "$repo/target/release/scx_vrq" $args > "$VM_OUT/vrq-$name-$round.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q enabled /sys/kernel/sched_ext/state && break; sleep 0.2; done
    trace_one "$name-$round"
    kill -INT "$pid"; wait "$pid"
done
done
