#!/usr/bin/python3
# The context probe (context-probe.diff): "yields" counts local preemptions in_own_context() took for the
# running task's own wake-up, "sched_idle_rescues" those bpf_in_task() did. Paths as on the machine measured.
import os, subprocess, time, sys
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest import Stats, loaded, start_hog, stop_all, wait_started
btf = open("/sys/kernel/btf/vmlinux", "rb").read()
print("thread_union in BTF strings:", b"\0thread_union\0" in btf)
KEYS = ("yields", "sched_idle_rescues", "preempt_local", "preempt_direct", "short_run_waits", "handoff_slices", "target_shortened", "enqueues")
PING = r'''
import os, sys
r1, w1 = os.pipe(); r2, w2 = os.pipe()
n = int(sys.argv[1])
if os.fork() == 0:
    for _ in range(n):
        os.read(r1, 1); os.write(w2, b"x")
    os._exit(0)
for _ in range(n):
    os.write(w1, b"x"); os.read(r2, 1)
os.wait()
'''
with loaded(name="exp"):
    hogs = [start_hog(cpu=1), start_hog(cpu=1)]
    wait_started(hogs); time.sleep(0.5)
    with Stats() as st:
        st.quiet(); st.read()
        out = subprocess.run(["taskset", "-c", "1", "/work/main/target/bench/sleeper", "3", "1000", "0", "timer"], capture_output=True, text=True).stdout
        c = st.read()
        print("sleeper:", out.strip())
        print({k: c.get(k) for k in KEYS})
    stop_all(hogs)
    time.sleep(0.5)
    with Stats() as st:
        st.quiet(); st.read()
        subprocess.run(["taskset", "-c", "1", "python3", "-c", PING, "2000"])
        c = st.read()
        print("pipe ping-pong on CPU 1:", {k: c.get(k) for k in KEYS})
