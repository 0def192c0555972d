#!/usr/bin/python3
"""The bench's runner on the machine under test (root, sched_ext kernel; normally the project's VM).
Reads OUT/plan.json, runs every (workload, scheduler, run) of the workloads measured on INSTRUMENT
that is not yet in OUT/results.jsonl, in the interleaved order, and appends one JSON line per step:
so an interrupted run resumes where it stopped. In the VM, everything the workloads run or read is
staged into guest RAM first (vrqbench/staging.py); --warm-up is that staging's traced run.

    bench/vrqbench/guest.py OUT INSTRUMENT      (parallel, instructions or native)
    bench/vrqbench/guest.py --warm-up OUT WORKLOAD...

bench/bench starts it (through tools/vm/vm-run, or natively) with tools/env.sh's PYTHONPATH, which
finds vrqbench and vrqtest (tests/guest/vrqtest/__init__.py).
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import time

from vrqbench import codebase, instruments, plan as planmod, sessions as sessionsmod, staging
from vrqbench.schedulers import SCHEDULERS
from vrqbench.workloads import WORKLOADS, find_perf
from vrqtest import Scheduler, Stats, prog_name, scx_ops, scx_state

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

PROBES = os.path.join(REPO, "target", "bench")
# The runner's own files (the code base, the compilers' temporary files, scheduler logs) live on a
# tmpfs of the guest's own: OUT is the host's folder over 9p, and even /tmp is the host's /tmp under
# the RAM overlay, where creating a file looks its name up on the host. Scheduler logs are copied to
# OUT/logs after each step.
WORK = "/run/vrqbench"
RAM_LOGS = os.path.join(WORK, "logs")
LOAD_TIMEOUT_S = 60  # a scheduler not enabled by then is recorded as load_failed


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
    """A sched_ext scheduler started for one step (None for EEVDF, the kernel's own): the harness's
    Scheduler (tests/guest/vrqtest) on the scheduler's command, its log in guest RAM and copied to
    OUT/logs when it stops. Loaded means enabled: a peer serves no scx_vrq stats socket, and run_step
    waits for scx_vrq's itself."""

    def __init__(self, spec, logdir, tag):
        self.spec = spec
        self.sched = None
        self.error = None
        self.log_path = os.path.join(RAM_LOGS, f"{tag}.log")
        self.saved_log_path = os.path.join(logdir, f"{tag}.log")

    @property
    def proc(self):
        return self.sched.proc if self.sched else None

    def start(self):
        cmd = SCHEDULERS[self.spec]["cmd"](REPO)
        if cmd is None:
            return True
        if not os.path.exists(cmd[0]):
            self.error = f"{cmd[0]} not installed"
            return False
        self.sched = Scheduler(cmd=cmd, log_path=self.log_path, wait_stats=False)
        try:
            self.sched.start(timeout=LOAD_TIMEOUT_S)
        except RuntimeError:
            self.error = f"did not load (state {scx_state()}, exit {self.proc.poll()}): {self.tail()}"
            self.stop()
            return False
        return True

    def healthy(self):
        return self.sched is None or (self.sched.alive() and scx_state() == "enabled")

    def tail(self):
        return self.sched.tail(4) if self.sched else ""

    def stop(self):
        """SIGINT, as a user stops it; its exit status (0 for EEVDF)."""
        if self.sched is None:
            return 0
        rc = self.sched.stop(disabled_timeout=15)
        shutil.copyfile(self.log_path, self.saved_log_path)
        return rc


def run_step(ctx, workload, spec, run, logdir):
    rec = {"workload": workload, "scheduler": spec, "run": run, "instrument": ctx["instrument"], "status": "ok"}
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
    waits0 = ctx["host_file_waits"].now()
    t0 = time.monotonic()
    try:
        rec["metrics"] = WORKLOADS[workload]["run"](ctx)
    except Exception as e:  # a workload that breaks is recorded, never dropped
        rec.update(status="error", error=f"{type(e).__name__}: {e}")
    rec["seconds"] = time.monotonic() - t0
    waits1 = ctx["host_file_waits"].now()
    # 9p requests the host answered while the step was measured: 0 when staging left nothing out
    rec["host_file_waits"] = waits1 - waits0 if waits0 is not None else None
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


def make_ctx(plan, instrument, secs):
    """What the workloads run with: CPUs, load lengths, the probes, perf, the code base, and the
    counter of the host's 9p answers."""
    ncpu = os.cpu_count()
    units = plan["build_units"]
    return {
        "ncpu": ncpu,
        "quick": plan["quick"],
        "secs": secs,
        "probes": PROBES,
        "perf": find_perf(),
        "instrument": instrument,
        "codebase": codebase.generate(os.path.join(WORK, f"codebase-{units}"), units),
        "trace": plan.get("trace", False),
        "host_file_waits": staging.HostFileWaits(),
    }


def stage_everything(out, instrument, plan, workloads, logdir):
    """Copy into guest RAM the schedulers' binaries, the probes, and every file the workloads open or
    execute, found by running each once under strace (--warm-up). Lists them in
    logs/staged-INSTRUMENT.txt; returns how many files were staged."""
    commands = (SCHEDULERS[s]["cmd"](REPO) for s in plan["schedulers"])
    binaries = [c[0] for c in commands if c and os.path.exists(c[0])]
    probes = [os.path.join(PROBES, p) for p in sorted(os.listdir(PROBES))]
    trace_log = os.path.join(WORK, "warm-up.trace")
    print(f"bench: warm-up of {', '.join(workloads)} under strace, to find the files to stage", flush=True)
    rc = staging.trace([sys.executable, os.path.abspath(__file__), "--warm-up", out, *workloads], trace_log)
    if rc != 0:
        print(f"bench: the warm-up exited {rc}; staging what it opened", flush=True)
    with open(trace_log) as f:
        paths = binaries + probes + staging.traced_paths(f.read(), exclude=[out])
    count = staging.stage(paths)
    with open(os.path.join(logdir, f"staged-{instrument}.txt"), "w") as f:
        f.write("".join(p + "\n" for p in paths if os.path.isfile(p)))
    return count


def warm_up(out, workloads):
    """Run each workload once, briefly, under EEVDF: staging traces this (every file it opens), and
    it warms the guest's caches before the first measured step. A build first when any workload
    builds the code base, so that the whole toolchain, link included, is seen."""
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    ctx = make_ctx(plan, "warm-up", 1)
    if any(WORKLOADS[w].get("codebase") for w in workloads):
        cb = ctx["codebase"]
        subprocess.run(["make", "-s", "-C", cb, "clean"], stdout=subprocess.DEVNULL)
        subprocess.run(["make", "-s", "-C", cb, f"-j{ctx['ncpu']}", "prog"], stdout=subprocess.DEVNULL)
    for w in workloads:
        try:
            WORKLOADS[w]["run"](ctx)
        except Exception as e:  # the measured step will record it
            print(f"bench: warm-up of {w} failed: {type(e).__name__}: {e}", flush=True)
    return 0


def record_machine(out, instrument, workloads, settings, staged):
    """machine.json: the machine under test, and per instrument the boot that measured on it (QEMU
    version, TCG thread mode, clock, vCPUs, files staged), each boot adding its own."""
    path = os.path.join(out, "machine.json")
    info = {}
    if os.path.exists(path):
        with open(path) as f:
            info = json.load(f)
    info.update(machine(os.cpu_count()))
    previous = info.setdefault("instruments", {}).get(instrument, {})
    if staged is None and previous.get("staged_files") is not None:
        return  # a boot that found every step done (after a VM fault at the very end) measured nothing
    info["instruments"][instrument] = {**settings, "workloads": workloads, "staged_files": staged}
    with open(path, "w") as f:
        json.dump(info, f, indent=1)


def main(argv):
    os.makedirs(os.path.join(WORK, "tmp"), exist_ok=True)
    os.environ["TMPDIR"] = os.path.join(WORK, "tmp")  # gcc's .s files, make's, perf's
    if argv[:1] == ["--warm-up"]:
        return warm_up(argv[1], argv[2:])
    if len(argv) != 2 or argv[1] not in (*instruments.VM_INSTRUMENTS, instruments.NATIVE):
        sys.exit("usage: guest.py OUT parallel|instructions|native")
    out, instrument = argv
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    settings = {"desc": "this machine itself (no VM), host clock"}
    if instrument != instruments.NATIVE:
        settings = instruments.read_settings(os.path.join(out, "instrument"))
        wrong = instruments.check_settings(instrument, settings)
        if wrong:
            sys.exit(f"bench: {wrong}")
    workloads = [w for w in plan["workloads"] if plan["instruments"][w] == instrument]
    results = os.path.join(out, "results.jsonl")
    order = planmod.interleave(workloads, plan["schedulers"], plan["runs"])
    todo = planmod.remaining(order, planmod.done_steps(results))
    logdir = os.path.join(out, "logs")
    os.makedirs(logdir, exist_ok=True)
    os.makedirs(RAM_LOGS, exist_ok=True)

    sysctl("kernel.sched_schedstats", 1)
    sysctl("kernel.bpf_stats_enabled", 1)
    ctx = make_ctx(plan, instrument, plan["secs"])
    if plan.get("cgroups", "none") == "sessions":
        # before staging: the traced warm-up inherits the runner's scope (its background loads stay in it)
        ctx["sessions"] = sessionsmod.Sessions().setup()
        print(f"bench: cgroups as systemd lays out login sessions: the runner in {ctx['sessions'].runner.path}, "
              "each background load in a session scope of its own", flush=True)
    staged = None
    if todo and instrument != instruments.NATIVE:
        staged = stage_everything(out, instrument, plan, workloads, logdir)
    record_machine(out, instrument, workloads, settings, staged)

    print(f"bench: {instrument} ({settings['desc']}): {len(order) - len(todo)} of {len(order)} steps "
          f"already done; {len(todo)} to run", flush=True)
    for i, (w, s, r) in enumerate(todo):
        progress(len(order) - len(todo) + i, len(order), f"{w} {s} run {r + 1}/{plan['runs']} ...")
        rec = run_step(ctx, w, s, r, logdir)
        with open(results, "a") as f:
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
        primary = WORKLOADS[w]["primary"]
        val = (rec.get("metrics") or {}).get(primary)
        waits = rec.get("host_file_waits")
        print(f"    {rec['status']}: {primary}={val} ({rec['seconds']:.1f} s)"
              + (f" {rec.get('error', '')}" if rec["status"] != "ok" else "")
              + (f" [waited on the host's files {waits}x]" if waits else ""), flush=True)
    progress(len(order), len(order), "done")
    if ctx.get("sessions"):
        ctx["sessions"].teardown()
    return 0


def machine(ncpu):
    info = {"kernel": os.uname().release, "cpus": ncpu}
    try:
        with open("/proc/cpuinfo") as f:
            cpuinfo = f.read()
        for line in cpuinfo.splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        info["virtualized"] = os.path.exists("/sys/hypervisor") or "hypervisor" in cpuinfo
    except OSError:
        pass
    return info


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
