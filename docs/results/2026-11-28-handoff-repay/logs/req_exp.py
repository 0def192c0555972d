#!/usr/bin/env python3
"""Guest experiment: reqlat / schbench points under several schedulers, alternating.
usage: req_exp.py SECS ROUNDS CONFIGS...   POINTS env: work_us:workers_per_cpu:msgs (msgs 1 or cpu) | sch:N"""
import os, subprocess, sys, time, json, shutil
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest.scheduler import Scheduler, Stats
from vrqtest.env import nr_cpus
secs, rounds = float(sys.argv[1]), int(sys.argv[2])
configs = []
for c in sys.argv[3:]:
    if c == "eevdf":
        configs.append(("eevdf", None)); continue
    name, rest = c.split("=", 1)
    path, _, args = rest.partition(":")
    configs.append((name, [path] + (args.split(",") if args else [])))
points = os.environ.get("POINTS", "10000:4:1").split(",")
os.makedirs("/run/exp", exist_ok=True)
for b in ("reqlat", "schbench"):
    shutil.copy(f"/work/main/target/bench/{b}", f"/run/exp/{b}")
ncpu = nr_cpus()
def run(point):
    if point.startswith("sch:"):
        n = int(point[4:])
        out = subprocess.run(["/run/exp/schbench", "-m", "1", "-t", str(n * ncpu), "-r", "10"], capture_output=True, text=True).stderr
        sys.path.insert(0, "/work/main/bench")
        from vrqbench.workloads import parse_schbench
        return parse_schbench(out)
    w, n, m = point.split(":")
    s = max(secs, 200 * int(w) / 1e6 / ncpu)
    out = subprocess.run(["/run/exp/reqlat", f"{s:g}", str(int(n) * ncpu), w, str(ncpu if m == "cpu" else 1)], capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (kv.split("=") for kv in out.split())}
for r in range(rounds):
    for point in points:
        for name, cmd in (configs if r % 2 == 0 else list(reversed(configs))):
            sched = st = None
            if cmd:
                sched = Scheduler(cmd=cmd, name=name); sched.start(); st = Stats(); st.read()
            res = run(point)
            c = st.read() if st else {}
            if st: st.close()
            if sched: sched.stop()
            keep = {k: c.get(k) for k in ("under_share", "preempt_local", "handoff_slices", "turn_ended", "target_shortened") if k in c}
            print(json.dumps(dict(round=r, point=point, sched=name, wake_p99=res.get("wake_p99_us", res.get("wake_p99")), req_p50=res.get("req_p50_us", res.get("req_p50")), req_p99=res.get("req_p99_us", res.get("req_p99")), rps=res.get("rps"), **keep)), flush=True)
