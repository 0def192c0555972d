#!/usr/bin/env python3
"""(A copy of ../../2026-11-28-handoff-repay/logs/share3.py.) Per-worker CPU service over windows: reqlat WORK_US x W workers per CPU; sample each worker thread's
sum_exec_runtime every WIN ms; per window max/min among workers that were busy, and Jain's index."""
import os, subprocess, sys, time, json, shutil
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest.scheduler import Scheduler
shutil.copy("/work/main/target/bench/reqlat", "/run/reqlat")
def threads(pid):
    return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
def rt(pid, tid):
    try:
        return int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
    except OSError:
        return None
def measure(work_us, wpc, secs=6, win=0.25):
    ncpu = os.cpu_count()
    p = subprocess.Popen(["/run/reqlat", str(secs), str(wpc * ncpu), str(work_us), "1"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    tids = threads(p.pid)
    prev = {t: rt(p.pid, t) for t in tids}
    samples = []
    while p.poll() is None:
        time.sleep(win)
        cur = {t: rt(p.pid, t) for t in tids}
        if any(v is None for v in cur.values()): break
        samples.append({t: cur[t] - prev[t] for t in tids}); prev = cur
    out = p.communicate()[0]
    # workers: the threads with the most CPU (the message thread and main use little)
    tot = {t: sum(s[t] for s in samples[:-1]) for t in tids}
    workers = sorted(tids, key=lambda t: -tot[t])[: wpc * ncpu]
    ratios, jains = [], []
    for s in samples[:-1]:
        v = [s[t] for t in workers]
        if min(v) > 0: ratios.append(max(v) / min(v))
        else: ratios.append(float("inf"))
        jains.append(sum(v) ** 2 / (len(v) * sum(x * x for x in v)) if sum(v) else 1)
    ratios.sort(); jains.sort()
    tv = [tot[t] for t in workers]
    return {"windows": len(ratios), "ratio_p50": round(ratios[len(ratios)//2], 2), "ratio_max": round(ratios[-1], 2),
            "jain_min": round(jains[0], 3), "jain_p50": round(jains[len(jains)//2], 3), "total_max_min": round(max(tv)/min(tv), 3),
            "out": out.strip()}
configs = []
for c in sys.argv[1:]:
    if c == "eevdf": configs.append(("eevdf", None)); continue
    name, rest = c.split("=", 1); path, _, args = rest.partition(":")
    configs.append((name, [path] + (args.split(",") if args else [])))
for rnd in range(4):
  point=(10000,4)
  for name, cmd in (configs if rnd % 2 == 0 else configs[::-1]):
    s = None
    if cmd: s = Scheduler(cmd=cmd, name=name); s.start()
    r = measure(*point)
    if s: s.stop()
    print(json.dumps(dict(sched=name, work_us=point[0], wpc=point[1], **r)), flush=True)
