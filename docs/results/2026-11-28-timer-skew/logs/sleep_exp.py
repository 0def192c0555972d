#!/usr/bin/env python3
"""Guest experiment: cyclictest (SCHED_OTHER, 1 thread) beside N hogs per CPU under several schedulers.
usage: sleep_exp.py SECS ROUNDS CONFIGS...   config = name=/path/to/bin[:arg,arg] | eevdf ; POINTS env: hogs:period_us[,..]"""
import os, subprocess, sys, time, json, shutil
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest.scheduler import Scheduler, Stats
from vrqtest.load import start_hog, wait_started, stop_all
from vrqtest.env import nr_cpus

secs, rounds = int(sys.argv[1]), int(sys.argv[2])
configs = []
for c in sys.argv[3:]:
    if c == "eevdf":
        configs.append(("eevdf", None)); continue
    name, rest = c.split("=", 1)
    path, _, args = rest.partition(":")
    configs.append((name, [path] + (args.split(",") if args else [])))
points = [tuple(int(x) for x in p.split(":")) for p in os.environ.get("POINTS", "2:1000").split(",")]
os.makedirs("/run/exp", exist_ok=True)
shutil.copy("/usr/bin/cyclictest", "/run/exp/cyclictest")
CT = "/run/exp/cyclictest"
subprocess.run([CT, "-p0", "-t1", "-i1000", "-l10", "-q"], capture_output=True)

def cyclic(period, secs):
    out = subprocess.run([CT, "-p", "0", "-t1", "-i", str(period), "-D", str(secs), "-q", "-h", "20000", "-m"],
                         capture_output=True, text=True).stdout
    hist = {}
    overflow = 0
    for line in out.splitlines():
        if line.startswith("#"):
            if "Histogram Overflows" in line:
                overflow = int(line.split(":")[1].split()[0])
            continue
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            hist[int(parts[0])] = int(parts[1])
    n = sum(hist.values()) + overflow
    def pct(q):
        want, acc = q * n, 0
        for k in sorted(hist):
            acc += hist[k]
            if acc >= want:
                return k
        return 20000
    return {"n": n, "p50": pct(0.5), "p99": pct(0.99), "p999": pct(0.999)}

ncpu = nr_cpus()
results = []
PERSIST = os.environ.get("PERSIST") == "1"
def run_point(name, hogs, period, st):
    hp = [start_hog() for _ in range(hogs * ncpu)]
    try:
        wait_started(hp)
        time.sleep(1)
        if st: st.read()
        res = cyclic(period, secs)
        c = st.read() if st else {}
    finally:
        stop_all(hp)
    keep = {k: c.get(k) for k in ("under_share", "preempt_local", "preempt_direct", "preempt_kicks", "turn_ended", "handoff_slices", "target_shortened", "clock_miscount") if k in c}
    row = dict(sched=name, hogs=hogs, period=period, **res, **keep)
    print(json.dumps(row), flush=True)
if PERSIST:
    for r in range(rounds):
        for name, cmd in (configs if r % 2 == 0 else list(reversed(configs))):
            sched = st = None
            if cmd:
                sched = Scheduler(cmd=cmd, name=name); sched.start(); st = Stats()
            for hogs, period in points:
                run_point(name, hogs, period, st)
            if st: st.close()
            if sched: sched.stop()
    sys.exit(0)
for r in range(rounds):
    for hogs, period in points:
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, cmd in order:
            hp = [start_hog() for _ in range(hogs * ncpu)]
            try:
                wait_started(hp)
                sched = None
                stats0 = {}
                if cmd:
                    sched = Scheduler(cmd=cmd, name=name, wait_stats=True)
                    sched.start()
                time.sleep(1)
                st = Stats() if cmd else None
                if st: st.read()
                res = cyclic(period, secs)
                c = st.read() if st else {}
                if st: st.close()
                if sched: sched.stop()
            finally:
                stop_all(hp)
            keep = {k: c.get(k) for k in ("under_share", "preempt_local", "preempt_direct", "preempt_kicks", "turn_ended", "handoff_slices", "target_shortened", "clock_miscount") if k in c}
            row = dict(round=r, sched=name, hogs=hogs, period=period, **res, **keep)
            results.append(row)
            print(json.dumps(row), flush=True)
