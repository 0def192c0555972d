#!/bin/bash
# ad hoc: reqlat 10 ms x 8 workers (4 per CPU), 1 message thread, under EEVDF and scx_vrq variants
R=/work/main
B=$R/target/release/scx_vrq
P=$R/target/bench/reqlat
for opts in "eevdf" "" "--target-latency-ms 0" "--waker-waits true"; do
  if [ "$opts" != eevdf ]; then
    $B --queue llc $opts > /tmp/sched.log 2>&1 &
    SP=$!
    for i in $(seq 100); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.2; done
  fi
  for r in 1 2; do echo "[$opts] run $r: $($P 8 8 10000 1)"; done
  if [ "$opts" != eevdf ]; then kill -INT $SP; wait $SP; fi
done
