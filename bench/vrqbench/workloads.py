"""The bench's workloads. Each workload is a real program run on the machine under test; each returns
a dict of metrics, one of which is its `primary` metric (with its direction). Each names the
instrument that can see what it measures (vrqbench/instruments.py): throughput needs real
parallelism, latency, fairness and scheduler cost need a clock the host's load cannot move."""

import glob
import os
import re
import shutil
import subprocess
import time

from vrqbench import wakeup_trace


def _sh(cmd, timeout=3600, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True, **kw)


def scope_entry(scope):
    """A preexec_fn that moves the new process into the cgroup `scope` (anything with a .path: a
    vrqbench.sessions scope) before it runs anything; None without a scope."""
    if scope is None:
        return None
    procs = os.path.join(scope.path, "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write("0")
    return enter


class Background:
    """A load that repeats a command until stopped (a build that keeps building, CPU burners), started
    as a session of its own, as from another login; with `bench run --cgroups sessions` also in a
    session scope cgroup of its own (vrqbench/sessions.py), removed when it stops."""

    def __init__(self, ctx, cmd, nice_idle=False, nice=0):
        prefix = (["chrt", "-i", "0"] if nice_idle else []) + (["nice", "-n", str(nice)] if nice else [])
        self.sessions = ctx.get("sessions")
        self.scope = self.sessions.new_scope() if self.sessions else None
        self.proc = subprocess.Popen(prefix + ["/bin/sh", "-c", f"while :; do {cmd}; done"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=scope_entry(self.scope))

    def stop(self):
        try:
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass
        self.proc.wait()
        if self.scope:
            self.sessions.remove(self.scope)


def _jobs(ctx, ratio):
    return max(1, round(ctx["ncpu"] * ratio))


def build(ratio, idle_fraction=0.0):
    """Build throughput (VRQ's method): `make -j(ratio x CPUs)` of the generated code base, from
    clean; optionally with SCHED_IDLE CPU burners on `idle_fraction` of the CPUs (VRQ's mprime
    under SCHED_IDLEPRIO)."""

    def run(ctx):
        cb = ctx["codebase"]
        _sh(["make", "-s", "-C", cb, "clean"])
        burners = [Background(ctx, ":", nice_idle=True) for _ in range(round(ctx["ncpu"] * idle_fraction))]
        try:
            t0 = time.monotonic()
            _sh(["make", "-s", "-C", cb, f"-j{_jobs(ctx, ratio)}", "prog"])
            return {"seconds": time.monotonic() - t0, "jobs": _jobs(ctx, ratio)}
        finally:
            for b in burners:
                b.stop()
    return run


def messaging(ctx):
    """hackbench (rt-tests): groups of senders and receivers over pipes; seconds (lower is better)."""
    groups, loops = (2, 50) if ctx["quick"] else (4, 200)
    out = _sh(["hackbench", "-P", "-g", str(groups), "-l", str(loops)]).stdout
    m = re.search(r"Time:\s*([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"no time in hackbench output: {out!r}")
    return {"seconds": float(m.group(1)), "groups": groups, "loops": loops}


def find_perf():
    """The perf binary, or None. Debian 12 ships perf itself as /usr/bin/perf; newer releases a
    wrapper and perf_<version> binaries (the wrapper refuses a kernel of another version: `perf bench`
    does not care). Looked up once, before anything is measured (the runner's ctx["perf"]): listing
    /usr/bin in the VM reads the host's folder over 9p."""
    found = sorted(glob.glob("/usr/bin/perf_*")) or ([shutil.which("perf")] if shutil.which("perf") else [])
    return found[-1] if found else None


def pipe(ctx):
    """perf bench sched pipe: two tasks ping-pong over a pipe; µs per round trip (lower is better)."""
    loops = 20000 if ctx["quick"] else 100000
    if not ctx["perf"]:
        raise RuntimeError("perf not installed (Debian: linux-perf)")
    out = _sh([ctx["perf"], "bench", "sched", "pipe", "-l", str(loops)]).stdout
    m = re.search(r"([0-9.]+)\s+usecs/op", out)
    if not m:
        raise RuntimeError(f"no usecs/op in perf output: {out!r}")
    return {"usecs_per_op": float(m.group(1)), "loops": loops}


def wakelat(ratio):
    """Wake-up latency under load: the wakelat probe (one sleeper per CPU, 10 ms period) while the
    code base builds over and over at `ratio` jobs/CPUs; p50/p99/p99.9 in µs (lower is better). With
    --trace, also where the latest wake-ups waited (vrqbench/wakeup_trace.py)."""

    def run(ctx):
        cb = ctx["codebase"]
        load = Background(ctx, f"make -s -C {cb} clean >/dev/null; make -s -C {cb} -j{_jobs(ctx, ratio)} prog >/dev/null")
        trace = ctx.get("trace")
        try:
            time.sleep(1)
            if trace:
                wakeup_trace.start()
            try:
                out = _sh([f"{ctx['probes']}/wakelat", str(ctx["secs"]), str(ctx["ncpu"]), "10000"]).stdout
            finally:
                traced = wakeup_trace.stop() if trace else None
        finally:
            load.stop()
        vals = dict(kv.split("=") for kv in out.split())
        res = {"p50_us": int(vals["p50"]), "p99_us": int(vals["p99"]), "p999_us": int(vals["p999"]),
               "max_us": int(vals["max"]), "samples": int(vals["samples"])}
        if traced is not None:
            res["trace"] = traced
        return res
    return run


# A request/worker run long enough for this many requests at least (a point with 100 ms requests on
# 2 CPUs runs 10 s, not the run's 4): its p99 is then the 3rd-latest request, not the latest
MIN_REQUESTS = 200


def reqlat(workers_per_cpu, work_us=1000, msg_per_cpu=False):
    """Saturated request/worker latency: message threads (one, or one per CPU) hand fixed-size requests
    (work_us of CPU work each) to `workers_per_cpu` x CPUs worker threads, each finished request followed
    at once by the next, so every CPU stays busy. Wake-up and request latency p50/p99/p99.9 in µs
    (lower is better) and requests per second (higher is better). Runs the run's seconds, or longer
    when that would give fewer than MIN_REQUESTS requests."""

    def run(ctx):
        ncpu = ctx["ncpu"]
        secs = max(ctx["secs"], MIN_REQUESTS * work_us / 1e6 / ncpu)
        msgs = ncpu if msg_per_cpu else 1
        out = _sh([f"{ctx['probes']}/reqlat", f"{secs:g}", str(ncpu * workers_per_cpu), str(work_us),
                   str(msgs)]).stdout
        vals = dict(kv.split("=") for kv in out.split())
        return {"wake_p50_us": int(vals["wake_p50"]), "wake_p99_us": int(vals["wake_p99"]),
                "wake_p999_us": int(vals["wake_p999"]), "req_p50_us": int(vals["req_p50"]),
                "req_p99_us": int(vals["req_p99"]), "req_p999_us": int(vals["req_p999"]),
                "rps": float(vals["rps"]), "requests": int(vals["requests"]), "secs": secs}
    return run


REQLAT_PERCENTILES = ["wake_p50_us", "wake_p99_us", "wake_p999_us", "req_p50_us", "req_p99_us", "req_p999_us"]

# schbench (Chris Mason's, vendored in bench/src/schbench): the sched_ext community's benchmark of this shape,
# run as its users run it -- its own work (a 100 us sleep, then matrix math over a 256 KB footprint under a
# per-CPU lock that the next worker spins on), its own defaults, only the workers per CPU chosen. Its requests
# take 50-120 ms of guest CPU on the instruction clock (QEMU 10.0.2, 2026-11-27), so a run lasts
# SCHBENCH_MIN_SECS at least: 150-220 requests on 2 CPUs.
SCHBENCH_MIN_SECS = 10
SCHBENCH_SECTIONS = {"Wakeup Latencies": "wake", "Request Latencies": "req"}
SCHBENCH_PERCENTILES = {"50.0": "p50", "99.0": "p99", "99.9": "p999"}


def parse_schbench(text):
    """schbench's final report (stderr) -> wake_/req_ p50/p99/p999 µs, rps and the requests counted.
    schbench prints a report every 10 s and a final one: the last of each section is the final one."""
    metrics, section = {}, None
    for line in (raw.strip() for raw in text.splitlines()):
        m = re.match(r"(\w[\w ]*?) percentiles \(\w+\) runtime \d+ \(s\) \((\d+) total samples\)", line)
        if m:
            section = SCHBENCH_SECTIONS.get(m.group(1))
            if section == "req":
                metrics["requests"] = int(m.group(2))
            continue
        m = re.match(r"\*?\s*([0-9.]+)th:\s*(\d+)", line)
        if m and section and m.group(1) in SCHBENCH_PERCENTILES:
            metrics[f"{section}_{SCHBENCH_PERCENTILES[m.group(1)]}_us"] = int(m.group(2))
            continue
        m = re.match(r"average rps:\s*([0-9.]+)", line)
        if m:
            metrics["rps"] = float(m.group(1))
    missing = [k for k in (*REQLAT_PERCENTILES, "rps", "requests") if k not in metrics]
    if missing:
        raise RuntimeError(f"schbench printed no {', '.join(missing)}: {text[-400:]!r}")
    return metrics


def schbench(workers_per_cpu):
    """schbench -m 1 -t (workers_per_cpu x CPUs) -r SECS: one message thread handing requests to its
    workers; wake-up and request latency p50/p99/p99.9 in µs (lower is better) and requests per second
    (higher is better), from its final report."""

    def run(ctx):
        secs = max(int(round(ctx["secs"])), SCHBENCH_MIN_SECS)
        out = _sh([f"{ctx['probes']}/schbench", "-m", "1", "-t", str(ctx["ncpu"] * workers_per_cpu), "-r",
                   str(secs)])
        return {**parse_schbench(out.stderr), "secs": secs}
    return run

# The request/worker surface (issue 29): CPU per request x workers per CPU x message threads, every point a
# workload of its own, `reqlat-WORK-wN-m1` (one message thread) or `-mcpu` (one per CPU); `reqlat` itself is
# the point 1ms-w2-m1. Selected together as `--workloads reqlat-surface`.
SURFACE_WORK = {"50us": 50, "1ms": 1000, "10ms": 10000, "100ms": 100000}
SURFACE_WORKERS = (1, 2, 4)
SURFACE_MSGS = ("m1", "mcpu")


def surface_points():
    """(workload name, request length's label, µs, workers per CPU, message threads) of every point."""
    return [(f"reqlat-{w}-w{n}-{m}", w, us, n, m) for w, us in SURFACE_WORK.items() for n in SURFACE_WORKERS
            for m in SURFACE_MSGS]


def interactive(jobs_per_cpu):
    """BFS group accounting's "interactive at any load": one CPU hog's progress (work per second) alone, or while
    `make -j(jobs_per_cpu x CPUs)` builds over and over (higher is better)."""

    def run(ctx):
        load = None
        if jobs_per_cpu:
            cb = ctx["codebase"]
            load = Background(ctx, f"make -s -C {cb} clean >/dev/null; make -s -k -C {cb} -j{ctx['ncpu'] * jobs_per_cpu} prog >/dev/null")
            time.sleep(1)
        try:
            out = _sh([f"{ctx['probes']}/hograte", str(ctx["secs"])]).stdout
        finally:
            if load:
                load.stop()
        return {"rate": float(out.split("=")[1])}
    return run


FRAME_WORK_US = 4000  # a quarter of a 60 Hz frame: a game's or compositor's main thread with room to spare


def frames(load):
    """Frame pacing (issue 29): a 60 Hz loop doing FRAME_WORK_US of CPU per frame (bench/src/frames.c)
    while `load` runs: "alone", "build" (make -j(2 x CPUs) over and over), "nice19" (2 x CPUs CPU hogs at
    nice 19) or "forks" (CPUs shell loops forking /bin/true). Frames late (done after the next vsync),
    vsyncs dropped, frame time p50/p99/max and wake-up delay p99 in µs (lower is better)."""

    def run(ctx):
        ncpu, cb = ctx["ncpu"], ctx.get("codebase")
        loads = {"alone": lambda: [],
                 "build": lambda: [Background(ctx, f"make -s -C {cb} clean >/dev/null; make -s -k -C {cb} "
                                                   f"-j{2 * ncpu} prog >/dev/null")],
                 "nice19": lambda: [Background(ctx, ":", nice=19) for _ in range(2 * ncpu)],
                 "forks": lambda: [Background(ctx, "/bin/true") for _ in range(ncpu)]}[load]()
        try:
            if loads:
                time.sleep(1)
            out = _sh([f"{ctx['probes']}/frames", str(ctx["secs"]), str(FRAME_WORK_US)]).stdout
        finally:
            for b in loads:
                b.stop()
        vals = dict(kv.split("=") for kv in out.split())
        return {"frame_p99_us": int(vals["frame_p99"]), "frame_p50_us": int(vals["frame_p50"]),
                "frame_max_us": int(vals["frame_max"]), "wake_p99_us": int(vals["wake_p99"]),
                "late": int(vals["late"]), "dropped": int(vals["dropped"]), "frames": int(vals["frames"])}
    return run


def forkwait(ctx):
    """The delayed-migration RFC's fork/wait pattern: fork -> exec /bin/true -> wait, children per
    second (higher)."""
    out = _sh([f"{ctx['probes']}/forkwait", str(ctx["secs"])]).stdout
    fields = dict(kv.split("=", 1) for kv in out.split())
    return {"rate": float(fields["rate"])}


def stress_ng_rate(output, stressor):
    """Bogo operations per second (real time) of `stressor` in stress-ng --metrics-brief output
    ("metrc: [PID] STRESSOR OPS REAL USR SYS OPS/S-REAL OPS/S-CPU"), or None."""
    m = re.search(rf"\]\s+{re.escape(stressor)}\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)", output)
    return float(m.group(1)) if m else None


def stress(stressor, per_cpu):
    """stress-ng's `stressor` with per_cpu x CPUs workers (at least 1) for the run's seconds: bogo
    operations per second (higher is better). The four loads --queue's default was chosen on
    (docs/measured.md), run only when named."""

    def run(ctx):
        workers = max(1, int(ctx["ncpu"] * per_cpu))
        res = _sh(["stress-ng", f"--{stressor}", str(workers), "-t", str(ctx["secs"]), "--metrics-brief"])
        rate = stress_ng_rate(res.stdout + res.stderr, stressor)
        if rate is None:
            raise RuntimeError(f"no {stressor} bogo ops/s in stress-ng output: {(res.stdout + res.stderr)[-300:]!r}")
        return {"ops_per_s": rate, "workers": workers}
    return run


# Which instrument each workload is measured on (vrqbench/instruments.py). Throughput is the work
# of several CPUs at once: only real parallelism (multi-threaded TCG or KVM, host clock) shows it.
# Latency, fairness and the scheduler's own cost are times within one machine: the instruction clock
# shows them free of the host's load.
THROUGHPUT = "parallel"
TIMING = "instructions"

# name -> runner, primary metric, whether higher is better, description, instrument; `percentiles`:
# the latency percentiles the report compares one by one; `codebase`: builds the generated code base
# (the instruction-clock boot stages the whole toolchain); `named`: run only when named (--workloads);
# `traceable`: --trace records its probe's wake-ups (vrqbench/wakeup_trace.py)
WORKLOADS = {
    "build-50": {"run": build(0.5), "primary": "seconds", "higher": False, "desc": "make -j(0.5 x CPUs)",
                 "instrument": THROUGHPUT, "codebase": True},
    "build-100": {"run": build(1.0), "primary": "seconds", "higher": False, "desc": "make -j(CPUs)",
                  "instrument": THROUGHPUT, "codebase": True},
    "build-150": {"run": build(1.5), "primary": "seconds", "higher": False, "desc": "make -j(1.5 x CPUs)",
                  "instrument": THROUGHPUT, "codebase": True},
    "build-100+50idle": {"run": build(1.0, 0.5), "primary": "seconds", "higher": False,
                         "desc": "make -j(CPUs) + SCHED_IDLE burners on half the CPUs",
                         "instrument": THROUGHPUT, "codebase": True},
    "messaging": {"run": messaging, "primary": "seconds", "higher": False, "desc": "hackbench -P",
                  "instrument": THROUGHPUT},
    "pipe": {"run": pipe, "primary": "usecs_per_op", "higher": False, "desc": "perf bench sched pipe",
             "instrument": TIMING},
    "wakelat-100": {"run": wakelat(1.0), "primary": "p99_us", "higher": False,
                    "desc": "wake-up latency while make -j(CPUs) runs", "instrument": TIMING, "codebase": True,
                    "percentiles": ["p50_us", "p99_us", "p999_us"], "traceable": True},
    "wakelat-150": {"run": wakelat(1.5), "primary": "p99_us", "higher": False,
                    "desc": "wake-up latency while make -j(1.5 x CPUs) runs", "instrument": TIMING,
                    "codebase": True, "percentiles": ["p50_us", "p99_us", "p999_us"], "traceable": True},
    "reqlat": {"run": reqlat(2), "primary": "req_p99_us", "higher": False,
               "desc": "request/worker: 1 message thread, 2 workers per CPU, 1 ms requests, saturated",
               "instrument": TIMING, "percentiles": REQLAT_PERCENTILES},
    "interactive-alone": {"run": interactive(0), "primary": "rate", "higher": True, "desc": "CPU hog alone",
                          "instrument": TIMING},
    "interactive-4x": {"run": interactive(4), "primary": "rate", "higher": True,
                       "desc": "CPU hog beside make -j(4 x CPUs)", "instrument": TIMING, "codebase": True},
    "interactive-16x": {"run": interactive(16), "primary": "rate", "higher": True,
                        "desc": "CPU hog beside make -j(16 x CPUs)", "instrument": TIMING, "codebase": True},
    **{f"frames-{load}": {"run": frames(load), "primary": "frame_p99_us", "higher": False,
                          "desc": f"60 Hz frames of 4 ms CPU {desc}", "instrument": TIMING,
                          "percentiles": ["frame_p50_us", "frame_p99_us", "wake_p99_us", "late", "dropped"],
                          "named": True, "group": "frames", **({"codebase": True} if load == "build" else {})}
       for load, desc in (("alone", "alone"), ("build", "beside make -j(2 x CPUs)"),
                          ("nice19", "beside 2 x CPUs nice-19 hogs"), ("forks", "beside CPUs fork/exec loops"))},
    "forkwait": {"run": forkwait, "primary": "rate", "higher": True, "desc": "fork -> exec -> wait chain",
                 "instrument": THROUGHPUT},
    # the loads the default --queue was chosen on (docs/measured.md)
    "stress-pipe": {"run": stress("pipe", 0.5), "primary": "ops_per_s", "higher": True,
                    "desc": "stress-ng --pipe (CPUs/2 workers)", "instrument": THROUGHPUT, "named": True},
    "stress-cpu": {"run": stress("cpu", 1), "primary": "ops_per_s", "higher": True,
                   "desc": "stress-ng --cpu (CPUs workers)", "instrument": THROUGHPUT, "named": True},
    "stress-fork": {"run": stress("fork", 0.5), "primary": "ops_per_s", "higher": True,
                    "desc": "stress-ng --fork (CPUs/2 workers)", "instrument": THROUGHPUT, "named": True},
    "stress-switch": {"run": stress("switch", 0.5), "primary": "ops_per_s", "higher": True,
                      "desc": "stress-ng --switch (CPUs/2 workers)", "instrument": THROUGHPUT, "named": True},
}

WORKLOADS.update({
    name: {"run": reqlat(n, us, m == "mcpu"), "primary": "req_p99_us", "higher": False,
           "desc": f"request/worker: {'1 message thread' if m == 'm1' else 'a message thread per CPU'}, {n} "
                   f"worker{'s' if n > 1 else ''} per CPU, {w} requests, saturated",
           "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "named": True, "group": "reqlat-surface"}
    for name, w, us, n, m in surface_points()
})

WORKLOADS.update({
    f"schbench-w{n}": {"run": schbench(n), "primary": "req_p99_us", "higher": False,
                       "desc": f"schbench -m 1 -t {n}x CPUs: its requests, 1 message thread, {n} worker"
                               f"{'s' if n > 1 else ''} per CPU",
                       "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "named": True, "group": "schbench"}
    for n in (1, 2, 4)
})

# names that select several workloads at once (--workloads)
WORKLOAD_GROUPS = {g: [name for name, spec in WORKLOADS.items() if spec.get("group") == g]
                   for g in ("reqlat-surface", "frames", "schbench")}

# what `bench run` measures when --workloads is not given
DEFAULT_WORKLOADS = [name for name, spec in WORKLOADS.items() if not spec.get("named")]

# VRQ's four build ratios, reported side by side
BUILD_FOUR = ["build-50", "build-100", "build-150", "build-100+50idle"]
