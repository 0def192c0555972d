#!/usr/bin/env python3
"""In-guest, EEVDF only: is a compile slower for the emulator on a vCPU that did not just run a compile?
Each step: a warm-up compile of unit1.c pinned to CPU P (0: "same", 1: "other"), then the measured
compile of unit0.c pinned to CPU 0. Guest time is the same on the instruction clock; the host side
(host_watch.py) records QEMU's CPU time per measured compile."""
import os, subprocess, time, json
from vrqbench import codebase, staging
OUT = os.environ["VM_OUT"]
cb = codebase.generate("/run/b50/codebase-3", 3)
def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)
sh(["make", "-s", "-C", cb, "clean"])
staging.trace(["make", "-s", "-C", cb, "-j2", "prog"], "/run/b50/warm.trace")
paths = staging.traced_paths(open("/run/b50/warm.trace").read(), exclude=[OUT])
staging.stage(paths + ["/usr/bin/taskset", "/usr/bin/true"])
CC = ["cc", "-O2", "-g", "-c"]
res = []
for rep in range(int(os.environ.get("REPS", "5"))):
    for mode in (["same", "other"] if rep % 2 == 0 else ["other", "same"]):
        p = "0" if mode == "same" else "1"
        sh(["taskset", "-c", p] + CC + ["-o", "/run/b50/w.o", f"{cb}/unit1.c"])
        # light work (short execs: CR3 switches, so QEMU re-sizes that vCPU's TLB) on the other CPU than
        # the warm-up's: CPU 0 in "other" mode, CPU 1 in "same" mode
        q = "1" if mode == "same" else "0"
        for _ in range(int(os.environ.get("LIGHT", "40"))):
            sh(["taskset", "-c", q, "true"])
        open(f"{OUT}/mark", "w").write(f"start {mode} {rep}\n"); time.sleep(0.2)
        t0 = time.monotonic()
        sh(["taskset", "-c", "0"] + CC + ["-o", "/run/b50/m.o", f"{cb}/unit0.c"])
        t1 = time.monotonic()
        open(f"{OUT}/mark", "w").write(f"end {mode} {rep}\n"); time.sleep(0.2)
        res.append({"mode": mode, "rep": rep, "seconds": t1 - t0}); print(mode, rep, f"{t1-t0:.3f}", flush=True)
json.dump(res, open(f"{OUT}/results.json", "w"), indent=1)
