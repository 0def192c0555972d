import sys, os
sys.path.insert(0, "/work/main/tests/guest")
os.environ.setdefault("VRQ_TEST_OUT", "/tmp/exp/ho-out")
import scheduler_tests as st
from vrqtest import Scheduler
cpu = st.nr_cpus() - 1
cfgs = [("eevdf", None), ("base", ["/work/main/target/variants/scx_vrq-base"]), ("main", ["/work/main/target/release/scx_vrq"]),
        ("main-bfs", ["/work/main/target/release/scx_vrq", "--profile", "bfs"])]
for rnd in range(2):
    for name, cmd in cfgs:
        s = Scheduler(cmd=cmd, name=f"ho-{name}-{rnd}").start() if cmd else None
        try:
            ratio, times = st.handoff_service(cpu, 6)
        finally:
            if s: s.stop()
        print(name, rnd, round(ratio, 3), [round(t / 1e6) for t in times], flush=True)
