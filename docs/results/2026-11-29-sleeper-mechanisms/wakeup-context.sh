#!/bin/sh
# Which context wakes a 1 ms clock_nanosleep sleeper beside a hog on one CPU (trace flags), under scx_vrq.
cd /work/main
target/release/scx_vrq > $VM_OUT/sched.log 2>&1 &
sleep 3
taskset -c 1 sh -c 'while :; do :; done' &
HOG=$!
T=/sys/kernel/tracing
echo > $T/trace
echo 1 > $T/events/sched/sched_wakeup/enable
taskset -c 1 python3 -c '
import time
for _ in range(300): time.sleep(0.001)
' &
SL=$!
wait $SL
echo 0 > $T/events/sched/sched_wakeup/enable
grep "comm=python3" $T/trace | head -5 > $VM_OUT/wakeups.txt
grep -c "comm=python3" $T/trace >> $VM_OUT/wakeups.txt
grep "comm=python3" $T/trace | awk '{print $3}' | sort | uniq -c >> $VM_OUT/wakeups.txt
kill $HOG
target/release/scx_vrq --monitor 1 > /dev/null 2>&1 & 
kill -INT %1 2>/dev/null; sleep 2
cat $VM_OUT/wakeups.txt
