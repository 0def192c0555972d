#!/usr/bin/env python3
"""Host side: while the guest writes "start CFG REP" / "end CFG REP" into OUT/mark, record the QEMU
process's host CPU time (sum of its threads' /proc schedstat run time) and wall time at each mark.
Usage: host_watch.py OUT  (finds the qemu-system process whose command line names OUT)."""
import os, sys, time, subprocess, json
out = sys.argv[1]
mark = os.path.join(out, "mark")
pid = None
for _ in range(600):
    r = subprocess.run(["pgrep", "-f", f"qemu-system.*{out}"], capture_output=True, text=True).stdout.split()
    if r:
        pid = int(r[0]); break
    time.sleep(0.5)
def cpu_ns():
    tot = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            tot += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
        except OSError:
            pass
    return tot
last = None; rows = []; starts = {}
while os.path.exists(f"/proc/{pid}"):
    try:
        m = open(mark).read().strip()
    except OSError:
        m = None
    if m and m != last:
        c, w = cpu_ns(), time.monotonic()
        last = m
        kind, cfg, rep = m.split()
        if kind == "start":
            starts[(cfg, rep)] = (c, w)
        elif (cfg, rep) in starts:
            c0, w0 = starts[(cfg, rep)]
            row = {"cfg": cfg, "rep": rep, "qemu_cpu_s": (c - c0) / 1e9, "host_wall_s": w - w0, "mono0": w0, "mono1": w}
            rows.append(row); print(json.dumps(row), flush=True)
    time.sleep(0.01)
json.dump(rows, open(os.path.join(out, "host_qemu_cpu.json"), "w"), indent=1)
