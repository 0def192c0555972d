#!/usr/bin/python3
"""The bench's runner on the machine under test (root, sched_ext kernel; normally the project's VM).
Reads OUT/plan.json, runs every (workload, scheduler, run) not yet in OUT/results.jsonl in the
interleaved order, and appends one JSON line per step: so an interrupted run resumes where it stopped.

    bench/vrqbench/guest.py OUT
"""

import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "guest"))

from vrqbench import codebase, plan as planmod  # noqa: E402
from vrqbench.workloads import SCHEDULERS, WORKLOADS  # noqa: E402
from bpfmap import prog_name  # noqa: E402
from vrqtest import Stats, scx_ops, scx_state, wait_for  # noqa: E402

PROBES = os.path.join(REPO, "target", "bench")


def sysctl(name, value):
    try:
        with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
            f.write(str(value))
    except OSError:
        pass


def schedstat():
    """/proc/schedstat summed over CPUs: the columns VRQ's benchmarks read."""
    cols = ("sched_count", "sched_goidle", "ttwu_count", "ttwu_local", "rq_cpu_time", "run_delay", "pcount")
    tot = dict.fromkeys(cols, 0)
    with open("/proc/schedstat") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0].startswith("cpu") and len(parts) >= 10:
                # cpuN yld_count(legacy) sched_switch(legacy) sched_count sched_goidle ttwu_count
                # ttwu_local rq_cpu_time run_delay pcount
                for c, v in zip(cols, parts[3:10]):
                    tot[c] += int(v)
    return tot


def bpf_prog_stats(pid):
    """run_time_ns and run_cnt of the scheduler's BPF programs (kernel.bpf_stats_enabled=1), from the
    loader's program fds, by program name (the callback: vrq_enqueue, ...)."""
    progs = {}
    for fd in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(fd) as f:
                info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        except OSError:
            continue
        if "prog_id" in info and "run_time_ns" in info:
            progs[info["prog_id"].strip()] = (int(info["run_time_ns"]), int(info["run_cnt"]))
    names = {i: prog_name(i) for i in progs}
    return {names[i] or f"id{i}": {"run_time_ns": t, "run_cnt": c} for i, (t, c) in progs.items()}


def bpf_delta(before, after):
    out = {}
    for name, a in after.items():
        b = before.get(name, {"run_time_ns": 0, "run_cnt": 0})
        cnt = a["run_cnt"] - b["run_cnt"]
        ns = a["run_time_ns"] - b["run_time_ns"]
        out[name] = {"run_cnt": cnt, "ns_per_op": ns / cnt if cnt else None}
    return out


class Loaded:
    """A sched_ext scheduler started for one step (None for EEVDF, the kernel's own)."""

    def __init__(self, spec, logdir, tag):
        self.spec = spec
        self.proc = None
        self.log_path = os.path.join(logdir, f"{tag}.log")

    def start(self):
        cmd = SCHEDULERS[self.spec]["cmd"](REPO)
        if cmd is None:
            return True
        if not os.path.exists(cmd[0]):
            self.error = f"{cmd[0]} not installed"
            return False
        self.logf = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.logf, stderr=subprocess.STDOUT)
        ok = wait_for(lambda: scx_state() == "enabled" or self.proc.poll() is not None, 60)
        if not ok or self.proc.poll() is not None:
            self.error = f"did not load (state {scx_state()}, exit {self.proc.poll()}): {self.tail()}"
            self.stop()
            return False
        return True

    def healthy(self):
        return self.proc is None or (self.proc.poll() is None and scx_state() == "enabled")

    def tail(self):
        try:
            with open(self.log_path) as f:
                return " | ".join(l.strip() for l in f.read().splitlines()[-4:])
        except OSError:
            return ""

    def stop(self):
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(2)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        wait_for(lambda: scx_state() == "disabled", 15)
        return rc


def run_step(ctx, workload, spec, run, logdir):
    rec = {"workload": workload, "scheduler": spec, "run": run, "status": "ok"}
    sched = Loaded(spec, logdir, f"{workload}-{spec}-{run}")
    if not sched.start():
        rec.update(status="load_failed", error=sched.error)
        return rec
    rec["ops"] = scx_ops() if sched.proc else "eevdf"
    stats = None
    if SCHEDULERS[spec].get("vrq"):
        # the stats socket comes up just after the scheduler is enabled: give it a moment
        for _ in range(50):
            try:
                stats = Stats()
                break
            except OSError:
                time.sleep(0.2)
    ss0 = schedstat()
    bpf0 = bpf_prog_stats(sched.proc.pid) if sched.proc else {}
    t0 = time.monotonic()
    try:
        rec["metrics"] = WORKLOADS[workload]["run"](ctx)
    except Exception as e:  # a workload that breaks is recorded, never dropped
        rec.update(status="error", error=f"{type(e).__name__}: {e}")
    rec["seconds"] = time.monotonic() - t0
    ss1 = schedstat()
    rec["schedstat"] = {k: ss1[k] - ss0[k] for k in ss0}
    if sched.proc:
        rec["bpf"] = bpf_delta(bpf0, bpf_prog_stats(sched.proc.pid))
    if stats:
        try:
            rec["vrq"] = stats.read()
        except (OSError, RuntimeError):
            pass
        stats.close()
    if not sched.healthy():
        rec.update(status="ejected", error=f"state {scx_state()}: {sched.tail()}")
    rc = sched.stop()
    if sched.proc and rc != 0 and rec["status"] == "ok":
        rec.update(status="ejected", error=f"scheduler exited {rc}: {sched.tail()}")
    return rec


def progress(i, total, text):
    width = 30
    done = int(width * i / max(total, 1))
    print(f"[{'#' * done}{'-' * (width - done)}] {i}/{total} {text}", flush=True)


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    results = os.path.join(out, "results.jsonl")
    done = set()
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash: that step runs again
                done.add((r["workload"], r["scheduler"], r["run"]))
    order = planmod.interleave(plan["workloads"], plan["schedulers"], plan["runs"])
    todo = planmod.remaining(order, done)
    logdir = os.path.join(out, "logs")
    os.makedirs(logdir, exist_ok=True)

    sysctl("kernel.sched_schedstats", 1)
    sysctl("kernel.bpf_stats_enabled", 1)
    ncpu = os.cpu_count()
    units = plan["build_units"]
    ctx = {
        "ncpu": ncpu,
        "quick": plan["quick"],
        "secs": plan["secs"],
        "probes": PROBES,
        "codebase": codebase.generate(f"/tmp/vrqbench-codebase-{units}", units),
    }
    with open(os.path.join(out, "machine.json"), "w") as f:
        json.dump(machine(ncpu, out), f, indent=1)

    print(f"bench: {len(order) - len(todo)} of {len(order)} steps already done; {len(todo)} to run", flush=True)
    for i, (w, s, r) in enumerate(todo):
        progress(len(order) - len(todo) + i, len(order), f"{w} {s} run {r + 1}/{plan['runs']} ...")
        rec = run_step(ctx, w, s, r, logdir)
        with open(results, "a") as f:
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
        primary = WORKLOADS[w]["primary"]
        val = (rec.get("metrics") or {}).get(primary)
        print(f"    {rec['status']}: {primary}={val} ({rec['seconds']:.1f} s)"
              + (f" {rec.get('error', '')}" if rec["status"] != "ok" else ""), flush=True)
    progress(len(order), len(order), "done")


def machine(ncpu, out):
    info = {"kernel": os.uname().release, "cpus": ncpu, **instrument(out)}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        info["virtualized"] = os.path.exists("/sys/hypervisor") or "hypervisor" in open("/proc/cpuinfo").read()
    except OSError:
        pass
    return info


def instrument(out):
    """What the numbers were measured on: tools/vm/vm-run writes its QEMU version, TCG thread mode and
    clock (host, or instruction-counted) into the run's folder; without it the run was native."""
    path = os.path.join(out, "instrument")
    if not os.path.exists(path):
        return {"instrument": "native"}
    fields = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    if fields.get("accel") == "kvm":
        desc = f"{fields.get('qemu', 'QEMU ?')}, KVM"
    else:
        desc = f"{fields.get('qemu', 'QEMU ?')}, TCG {fields.get('tcg_threads', '?')}-threaded, clock {fields.get('clock', '?')}"
    return {"instrument": desc, "qemu": fields.get("qemu"), "accel": fields.get("accel"),
            "tcg_threads": fields.get("tcg_threads"), "clock": fields.get("clock"),
            "host_cores": int(fields["host_cores"]) if fields.get("host_cores", "").isdigit() else None}


if __name__ == "__main__":
    main()
