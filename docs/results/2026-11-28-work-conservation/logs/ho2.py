import sys, os
sys.path.insert(0, "/work/main/tests/guest")
import scheduler_tests as st
from vrqtest import Scheduler, Stats
cpu = st.nr_cpus() - 1
KEYS = ("handoff_slices", "handoff_repaid", "under_share", "preempt_direct", "preempt_kicks", "sync_handoff", "renewals", "idle_waits", "idle_wait_us")
cfgs = [("base", ["/work/main/target/variants/scx_vrq-base"]), ("main", ["/tmp/exp/scx_vrq-wc"])]
for run_us in (8000, 20000):
    st.HANDOFF_RUN_US = run_us
    for name, cmd in cfgs:
        s = Scheduler(cmd=cmd, name=f"ho2-{name}-{run_us}").start()
        try:
            with Stats() as stats:
                stats.read()
                ratio, times = st.handoff_service(cpu, 5)
                c = stats.read()
        finally:
            s.stop()
        print(name, run_us, round(ratio, 3), [round(t / 1e6) for t in times], {k: c.get(k) for k in KEYS}, flush=True)
