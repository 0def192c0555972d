#!/usr/bin/env python3
"""In-guest: build-50 (make -j1 of the 3-unit code base on 2 CPUs) under EEVDF and scx_vrq, alternating,
each run traced with tracefs sched events; writes traces + schedstat + timings to $VM_OUT."""
import os, subprocess, sys, time, json
from vrqbench import codebase, staging

OUT = os.environ["VM_OUT"]
VRQ = "/work/main/target/release/scx_vrq"
FIXBIN = "/work/wt-b50/target/release/scx_vrq"  # the proposed fix (vfork hand-off), built in a worktree
T = "/sys/kernel/tracing"
REPS = int(os.environ.get("REPS", "3"))
TRACE = os.environ.get("TRACE", "1") == "1"
cb = codebase.generate("/run/b50/codebase-3", 3)

def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)

def w(path, val):
    with open(os.path.join(T, path), "w") as f:
        f.write(val)

def schedstat():
    d = {}
    for line in open("/proc/schedstat"):
        f = line.split()
        if f[0].startswith("cpu"):
            d[f[0]] = [int(x) for x in f[1:]]
    return d

os.system(f"(cat /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor; grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/name /sys/devices/system/cpu/cpu0/cpuidle/state*/target_residency /sys/devices/system/cpu/cpu0/cpuidle/state*/usage; cat /proc/cmdline; grep . /sys/module/*/parameters/*idle* 2>/dev/null | head; grep . /sys/devices/system/cpu/vulnerabilities/*; grep -ow -e pti -e pcid -e invpcid /proc/cpuinfo | sort | uniq -c) > {OUT}/cpuidle.txt 2>&1")
# warm-up under strace, then stage every file opened (as the bench does)
sh(["make", "-s", "-C", cb, "clean"])
staging.trace(["make", "-s", "-C", cb, "-j2", "prog"], "/run/b50/warm.trace")
paths = staging.traced_paths(open("/run/b50/warm.trace").read(), exclude=[OUT])
n = staging.stage(paths + [VRQ] + ([FIXBIN] if os.path.exists(FIXBIN) else []))
print("staged", n, flush=True)
sh(["make", "-s", "-C", cb, "clean"]); sh(["make", "-s", "-C", cb, "-j1", "prog"])

EVENTS = ["sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new", "sched/sched_switch",
          "sched/sched_migrate_task", "sched/sched_process_fork", "sched/sched_process_exec",
          "sched/sched_process_exit", "ipi/ipi_send_cpu", "ipi/ipi_send_cpumask",
          "irq_vectors/reschedule_entry", "irq_vectors/call_function_single_entry",
          "power/cpu_idle", "irq_vectors/local_timer_entry", "tlb/tlb_flush", "timer/hrtimer_expire_entry",
          "irq_vectors/irq_work_entry"] + os.environ.get("EXTRA_EVENTS", "").split()
if TRACE:
    w("buffer_size_kb", "30000")
    w("trace_clock", "mono")
    for e in EVENTS:
        try:
            w(f"events/{e}/enable", "1")
        except OSError as ex:
            print("no event", e, ex, flush=True)
    w("tracing_on", "0")


VARIANTS = {"vrqfix": [], "vrq-lrr": ["--long-run-resume", "true"], "vrqfix-lrr": ["--long-run-resume", "true"], "vrq": [], "vrq-nosync": ["--sync-handoff", "false"], "vrq-nopl": ["--preempt-local", "false"]}
CFGS = os.environ.get("CFGS", "eevdf vrq").split()

def start_vrq(cfg):
    p = subprocess.Popen([FIXBIN if cfg.startswith("vrqfix") else VRQ] + VARIANTS[cfg], stdout=open(f"{OUT}/vrq-sched.log", "a"), stderr=subprocess.STDOUT)
    for _ in range(200):
        if open("/sys/kernel/sched_ext/state").read().strip() == "enabled":
            return p
        time.sleep(0.1)
    raise RuntimeError("scx_vrq not enabled")

def stop_vrq(p):
    p.send_signal(2); p.wait()

results = []
for rep in range(REPS):
    for cfg in (CFGS if rep % 2 == 0 else CFGS[::-1]):
        sp = start_vrq(cfg) if cfg != "eevdf" else None
        time.sleep(0.5)
        sh(["make", "-s", "-C", cb, "clean"])
        if TRACE:
            w("trace", ""); w("tracing_on", "1")
        open(f"{OUT}/mark", "w").write(f"start {cfg} {rep}\n")
        time.sleep(0.2)
        s0 = schedstat(); t0 = time.monotonic()
        sh(["make", "-s", "-C", cb, "-j1", "prog"])
        t1 = time.monotonic(); s1 = schedstat()
        open(f"{OUT}/mark", "w").write(f"end {cfg} {rep}\n")
        if TRACE:
            w("tracing_on", "0")
            with open(os.path.join(T, "trace")) as f, open(f"{OUT}/trace-{cfg}-{rep}.txt", "w") as g:
                g.write(f"# t0={t0:.6f} t1={t1:.6f}\n")
                g.write(f.read())
        if sp:
            os.system(f"timeout 5 {VRQ} --monitor 1 --stats-full > {OUT}/vrq-stats-{cfg}-{rep}.txt 2>&1")
            stop_vrq(sp)
        ds = {c: [b - a for a, b in zip(s0[c], s1[c])] for c in s0}
        r = {"cfg": cfg, "rep": rep, "seconds": t1 - t0, "t0": t0, "t1": t1, "schedstat": ds}
        results.append(r)
        print(cfg, rep, f"{t1-t0:.3f}s", flush=True)
        with open(f"{OUT}/results.json", "w") as f:
            json.dump(results, f, indent=1)
