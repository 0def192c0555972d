#!/usr/bin/python3
import os, subprocess, time, sys
sys.path.insert(0, "/work/wt-ksym2/tests/guest")
from vrqtest import Stats, loaded, start_hog, stop_all, wait_started
with loaded(name="exp"):
    hogs = [start_hog(cpu=1), start_hog(cpu=1)]
    wait_started(hogs); time.sleep(0.5)
    with Stats() as st:
        st.quiet()
        st.read()
        subprocess.run(["taskset", "-c", "1", "/work/wt-ksym2/target/bench/sleeper", "3", "1000", "0", "timer"], capture_output=True)
        c = st.read()
    stop_all(hogs)
for k in ("yields", "sched_idle_rescues", "keep_served", "floor_gave_way", "preempt_local", "preempt_direct", "short_run_waits", "handoff_slices", "target_shortened", "enqueues"):
    print(k, c.get(k))
