#!/bin/sh
# Which path runs the local preemption for a 1 ms clock_nanosleep sleeper beside 2 hogs on CPU 1.
cd /work/main
grep -E ' (scx_bpf_dsq_insert|scx_bpf_kick_cpu)' /proc/kallsyms > $VM_OUT/kallsyms.txt
target/release/scx_vrq > $VM_OUT/sched.log 2>&1 &
SCHED=$!
sleep 4
taskset -c 1 sh -c 'while :; do :; done' &
H1=$!
taskset -c 1 sh -c 'while :; do :; done' &
H2=$!
sleep 0.5
T=/sys/kernel/tracing
echo 20000 > $T/buffer_size_kb
echo 'p:vrqins scx_bpf_dsq_insert___v2 flags=%cx:u64' >> $T/kprobe_events || echo "no kprobe insert"
echo 'p:vrqkick scx_bpf_kick_cpu cpu=%di:s32 kf=%si:u64' >> $T/kprobe_events || echo "no kprobe kick"
echo 'stacktrace if flags & 0x100000000' > $T/events/kprobes/vrqins/trigger
echo 'flags & 0x100000000' > $T/events/kprobes/vrqins/filter
echo 'stacktrace' > $T/events/kprobes/vrqkick/trigger
echo > $T/trace
echo 1 > $T/events/kprobes/vrqins/enable
echo 1 > $T/events/kprobes/vrqkick/enable
echo 1 > $T/events/sched/sched_wakeup/enable
taskset -c 1 target/bench/sleeper 1 1000 0 timer > $VM_OUT/sleeper.txt 2>&1
echo 0 > $T/events/kprobes/vrqins/enable
echo 0 > $T/events/kprobes/vrqkick/enable
echo 0 > $T/events/sched/sched_wakeup/enable
cp $T/trace $VM_OUT/trace.txt
kill $H1 $H2
kill -INT $SCHED; sleep 2
cat $VM_OUT/sleeper.txt
wc -l $VM_OUT/trace.txt
