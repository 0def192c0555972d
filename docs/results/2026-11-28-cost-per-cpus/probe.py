#!/usr/bin/python3
"""In the VM: scx_vrq's BPF ns per call with ONE busy vCPU at N vCPUs. perf bench sched pipe pinned to
vCPU 0 (taskset -c 0), --sync-handoff false --preempt-local false: every wake-up finds no idle CPU it may use, so enqueue walks
kick_idle_or_survey's loop over all CPUs (each a cpumask test that fails but for CPU 0) and the sleeping
side's dispatch peeks every queue (the other queues empty). Only vCPU 0 runs: the instruction clock's
ns are this vCPU's own instructions (no other vCPU's turn inside a call)."""
import json, os, subprocess, sys, time
from vrqbench.guest import bpf_prog_stats, bpf_delta, schedstat, sysctl
from vrqtest import Scheduler

REPO = "/work/wt-percpu"
out = os.environ.get("VM_OUT", "/tmp")
ncpu = os.cpu_count()
sysctl("kernel.bpf_stats_enabled", 1)
NOSYNC = ["--sync-handoff", "false", "--preempt-local", "false"]
variants = [("llc-nosync", ["--queue", "llc", *NOSYNC]),
            ("cpu-nosync", ["--queue", "cpu", *NOSYNC]),
            ("llc-default", ["--queue", "llc"]),
            ("cpu-default", ["--queue", "cpu"])]
res = []
for tag, args in variants:
    s = Scheduler(cmd=[f"{REPO}/target/release/scx_vrq", *args], log_path=f"/run/probe-{tag}.log", wait_stats=False)
    s.start(timeout=120)
    time.sleep(1)
    for pinned, hog in ((True, False), (True, True), (False, False)):
        if tag.endswith("default") and pinned:
            continue
        if hog and not tag.startswith("llc"):
            continue
        cmd = (["taskset", "-c", "0"] if pinned else []) + ["perf", "bench", "sched", "pipe", "-l", "20000"]
        # a CPU hog pinned to the last vCPU: a second busy vCPU that shares nothing with the pipe's
        # callbacks on vCPU 0 (their path is the same), so any rise in their ns per call is the other
        # vCPU's turns counted inside them (the instruction clock is the machine's)
        hp = subprocess.Popen(["taskset", "-c", str(ncpu - 1), "python3", "-c", "while True: pass"]) if hog else None
        if hp:
            time.sleep(0.5)
        b, ss0, t0 = bpf_prog_stats(s.proc.pid), schedstat(), time.monotonic()
        o = subprocess.run(cmd, capture_output=True, text=True).stdout
        a, ss1, t1 = bpf_prog_stats(s.proc.pid), schedstat(), time.monotonic()
        d = bpf_delta(b, a)
        if hp:
            hp.kill(); hp.wait()
        busy = (ss1["rq_cpu_time"] - ss0["rq_cpu_time"]) / 1e9 / (t1 - t0)
        usec = [l for l in o.splitlines() if "usecs/op" in l]
        r = {"cpus": ncpu, "variant": tag, "pinned": pinned, "hog": hog, "busy_vcpus": round(busy, 2), "secs": round(t1 - t0, 3),
             "usecs_per_op": usec[0].split()[0] if usec else None,
             "bpf": {k: {"calls": v["run_cnt"], "ns": round(v["ns_per_op"]) if v["ns_per_op"] else None}
                     for k, v in d.items() if v["run_cnt"]}}
        print(json.dumps(r), flush=True)
        res.append(r)
    s.stop()
    subprocess.run(["cp", f"/run/probe-{tag}.log", out])
with open(os.path.join(out, f"probe-{ncpu}.json"), "w") as f:
    json.dump(res, f, indent=1)
