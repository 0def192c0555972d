#!/usr/bin/env python3
import os, subprocess, sys, time, json, shutil
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest.load import start_hog, wait_started, stop_all
shutil.copy("/usr/bin/cyclictest", "/run/ct")
def cyclic(cpu, secs=3):
    out = subprocess.run(["taskset","-c",str(cpu),"/run/ct", "-p", "0", "-t1", "-i", "1000", "-D", str(secs), "-q", "-h", "20000", "-m"], capture_output=True, text=True).stdout
    hist = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0].isdigit(): hist[int(p[0])] = int(p[1])
    n = sum(hist.values()); res = {"n": n}
    for q in (0.5, 0.99):
        acc = 0
        for k in sorted(hist):
            acc += hist[k]
            if acc >= q * n: res[f"p{int(q*100)}"] = k; break
    return res
print(open("/sys/devices/system/clockevents/clockevent0/current_device").read().strip(), open("/sys/devices/system/clockevents/clockevent1/current_device").read().strip(), flush=True)
print(subprocess.run("grep -i -E 'hres|high res|timer' /proc/timer_list | sort | uniq -c | head -20", shell=True, capture_output=True, text=True).stdout, flush=True)
for hogs in (0, 2):
    hp = [start_hog() for _ in range(hogs * 2)]; wait_started(hp); time.sleep(0.5)
    for cpu in (0, 1, 0, 1):
        print(json.dumps(dict(hogs=hogs, cpu=cpu, **cyclic(cpu))), flush=True)
    stop_all(hp)
