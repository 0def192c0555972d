#!/usr/bin/env python3
import os, subprocess, sys, time, json, shutil
sys.path.insert(0, "/tmp/exp"); sys.path.insert(0, "/work/main/tests/guest")
from vrqtest.scheduler import Scheduler, Stats
from vrqtest.load import start_hog, wait_started, stop_all
os.makedirs("/run/exp", exist_ok=True); shutil.copy("/usr/bin/cyclictest", "/run/exp/cyclictest")
CT="/run/exp/cyclictest"
def cyclic(period, secs):
    out = subprocess.run([CT, "-p", "0", "-t1", "-i", str(period), "-D", str(secs), "-q", "-h", "20000", "-m"], capture_output=True, text=True).stdout
    hist = {}; n = 0
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0].isdigit(): hist[int(p[0])] = int(p[1])
    n = sum(hist.values()); acc = 0; res = {"n": n}
    for q in (0.5, 0.99):
        acc = 0
        for k in sorted(hist):
            acc += hist[k]
            if acc >= q * n: res[f"p{int(q*100)}"] = k; break
    return res
B = "/work/main/target/variants/scx_vrq-base"
configs = [("bfs", [B, "--profile", "bfs"]), ("base", [B]), ("bfsllc", [B, "--profile", "bfs", "--queue", "llc"])]
for name, cmd in configs:
    for order in ("hogs-first", "sched-first", "hogs-first-nosess"):
        if order == "sched-first":
            s = Scheduler(cmd=cmd, name=name); s.start(); time.sleep(1)
            hp = [start_hog() for _ in range(4)]; wait_started(hp)
        else:
            hp = [start_hog() for _ in range(4)]; wait_started(hp)
            s = Scheduler(cmd=cmd, name=name); s.start()
        time.sleep(1)
        r = cyclic(1000, 4)
        # where is everybody: cpu and policy of hogs
        cpus = [open(f"/proc/{p.pid}/stat").read().split()[38] for p in hp]
        stop_all(hp); s.stop()
        print(json.dumps(dict(sched=name, order=order, hog_cpus=cpus, **r)), flush=True)
