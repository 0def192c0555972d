#!/bin/bash
B=/work/wt/target/release/scx_vrq
P=/work/main/target/bench/reqlat
for round in 1 2; do
for pt in "8 10000 1" "4 10000 1"; do
  for opts in eevdf "--handoff-slice true" "--handoff-slice true --target-latency-ms 0" "--target-latency-ms 0"; do
    if [ "$opts" != eevdf ]; then
      $B --queue llc $opts > /tmp/sched.log 2>&1 &
      SP=$!
      for i in $(seq 100); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.2; done
    fi
    echo "[$pt] [$opts] r$round: $($P 8 $pt)"
    if [ "$opts" != eevdf ]; then kill -INT $SP; wait $SP; fi
  done
done
done
