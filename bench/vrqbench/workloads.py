"""The bench's workloads. Each workload is a real program run on the machine under test; each returns
a dict of metrics, one of which is its `primary` metric (with its direction). Each names the
instrument that can see what it measures (vrqbench/instruments.py): throughput needs real
parallelism, latency, fairness and scheduler cost need a clock the host's load cannot move."""

import glob
import math
import os
import re
import shutil
import subprocess
import time

from vrqbench import service, wakeup_trace


def _sh(cmd, timeout=3600, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True, **kw)


def _sampled(cmd, workers, count, secs, min_runnable, timeout=3600):
    """Run cmd as _sh does while a service.Sampler samples its `count` threads named `workers` over `secs`;
    (the completed process, the service figures)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = service.Sampler(proc.pid, workers, count, secs, min_runnable)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        figures = sampler.stop()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
    return subprocess.CompletedProcess(cmd, 0, out, err), figures


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

    def __init__(self, ctx, cmd, nice_idle=False, nice=0, cpu=None):
        prefix = ((["taskset", "-c", str(cpu)] if cpu is not None else []) + (["chrt", "-i", "0"] if nice_idle else [])
                  + (["nice", "-n", str(nice)] if nice else []))
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
        res, served = _sampled([f"{ctx['probes']}/reqlat", f"{secs:g}", str(ncpu * workers_per_cpu), str(work_us),
                                str(msgs)], "reqlat-worker", ncpu * workers_per_cpu, secs, 0)
        vals = dict(kv.split("=") for kv in res.stdout.split())
        return {"wake_p50_us": int(vals["wake_p50"]), "wake_p99_us": int(vals["wake_p99"]),
                "wake_p999_us": int(vals["wake_p999"]), "req_p50_us": int(vals["req_p50"]),
                "req_p99_us": int(vals["req_p99"]), "req_p999_us": int(vals["req_p999"]),
                "rps": float(vals["rps"]), "requests": int(vals["requests"]), "secs": secs, **served}
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
        workers = ctx["ncpu"] * workers_per_cpu
        out, served = _sampled([f"{ctx['probes']}/schbench", "-m", "1", "-t", str(workers), "-r", str(secs)],
                               "schbench-worker", workers, secs, 0)
        return {**parse_schbench(out.stderr), "secs": secs, **served}
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


# ---- open-loop request load (issue 45) ----

# Instruments whose CPUs run in parallel; on the instruction clock every vCPU draws on one instruction
# stream (parallel speed-up 1 by construction), so the machine does one CPU's work per second whatever its
# vCPUs.
PARALLEL_INSTRUMENTS = ("parallel", "native")


def _warming_up(ctx):
    """The staging's traced warm-up (vrqbench/guest.py) only needs each program's files: it runs the run's
    seconds, not the longer minimum a measured point needs."""
    return ctx.get("instrument") == "warm-up"


def parallel_cpus(ctx):
    """How many CPUs' work the machine does per second: its CPUs, or 1 on the instruction clock (and in that
    boot's warm-up)."""
    return ctx["ncpu"] if ctx.get("instrument") in PARALLEL_INSTRUMENTS else 1


def request_capacity(ctx, work_us):
    """The machine's nominal request capacity, requests/s: parallel CPUs x 1e6 / work_us. The open-loop loads
    are defined as a fraction of it, so that every scheduler in a boot gets the same arrivals; EEVDF's
    saturated closed-loop rate (the request surface's reqlat points) lies within a few % of it, the
    message threads' and switches' overhead."""
    return parallel_cpus(ctx) * 1e6 / work_us


# An open-loop point runs long enough for this many requests at least (whole seconds: a burst is a second's)
OPEN_MIN_REQUESTS = 100
OPEN_MSGS, OPEN_WORKERS_PER_MSG = 2, 2  # issue 45's shape: 2 message threads x 2 workers each
OPEN_WORK = {"25ms": 25000, "10ms": 10000, "1ms": 1000}
OPEN_LOADS = (30, 60, 90)
OPEN_ARRIVALS = ("burst", "even", "poisson")
OPEN_PERCENTILES = ["wake_p50_us", "wake_p99_us", "req_p50_us", "req_p99_us", "req_p999_us", "resp_p50_us",
                    "resp_p99_us", "resp_p999_us"]


def parse_kv(text):
    """A probe's "key=value ..." line -> dict of strings."""
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def parse_reqlat_open(text):
    """reqlat's open-loop line -> metrics (µs, requests/s, the offered rate)."""
    v = parse_kv(text)
    m = {f"{k}_us": int(v[k]) for k in ("wake_p50", "wake_p99", "wake_p999", "req_p50", "req_p99", "req_p999",
                                         "resp_p50", "resp_p99", "resp_p999")}
    m.update(rps=float(v["rps"]), rate=float(v["rate"]), requests=int(v["requests"]), wakeups=int(v["wakeups"]))
    return m


def reqlat_open(work_us, load_pct, arrival):
    """Open-loop request load: requests arrive at load_pct % of the machine's nominal capacity
    (request_capacity) whatever the workers do, `arrival` "burst" (each second's requests posted at once,
    schbench -R's shape), "even" (evenly spaced: requests shorter than the gap never overlap, so below
    capacity nothing queues) or "poisson" (exponential gaps, the same seeded sequence every run), into the queues of OPEN_MSGS message threads with
    OPEN_WORKERS_PER_MSG workers each; requests of work_us of CPU. Request latency as service (a worker's
    start on the request to its end, as schbench's) and response (the request's arrival to its end: the
    queue's wait too), p50/p99/p99.9 µs; wake-up p50/p99 µs of an idle worker woken by a post; requests/s
    and the absolute rate offered (recorded: `rate`, `capacity`). Runs the run's seconds, or whole seconds
    enough for OPEN_MIN_REQUESTS requests."""

    def run(ctx):
        capacity = request_capacity(ctx, work_us)
        rate = capacity * load_pct / 100
        secs = int(ctx["secs"]) if _warming_up(ctx) else max(int(ctx["secs"]), math.ceil(OPEN_MIN_REQUESTS / rate))
        workers = OPEN_MSGS * OPEN_WORKERS_PER_MSG
        out, served = _sampled([f"{ctx['probes']}/reqlat", str(secs), str(workers), str(work_us), str(OPEN_MSGS),
                                f"{rate:g}", arrival], "reqlat-worker", workers, secs, service.BACKLOGGED)
        return {**parse_reqlat_open(out.stdout), "capacity": capacity, "load_pct": load_pct, "secs": secs,
                **served}
    return run


def open_points():
    """(workload name, request length's label, µs, load %, arrival) of every reqlat-open point."""
    return [(f"reqlat-open-{w}-{pct}-{a}", w, us, pct, a) for w, us in OPEN_WORK.items() for pct in OPEN_LOADS
            for a in OPEN_ARRIVALS]


# schbench's own requests-per-second mode (-R: each message thread posts its second's share at once), its
# requests its own (a 100 us sleep, then its matrix math). Its saturated rate per parallel CPU, EEVDF's with
# 2 workers per CPU (schbench-w2 on the instruction clock), defines its loads.
SCHBENCH_SATURATED_RPS_PER_CPU = 16.7
SCHBENCH_OPEN_LOADS = (60, 90)


def schbench_open_rate(ctx, load_pct):
    """schbench -R's rate at load_pct % of its saturated rate: rounded down to a multiple of its message threads
    (it divides the rate among them in integers), at least one request per message thread."""
    rate = SCHBENCH_SATURATED_RPS_PER_CPU * parallel_cpus(ctx) * load_pct / 100
    return max(OPEN_MSGS, int(rate // OPEN_MSGS) * OPEN_MSGS)


def schbench_open(load_pct):
    """schbench -m 2 -t CPUs -R RATE -r SECS (2 message threads, 2 workers per CPU in all): its request-per-second
    mode at load_pct % of its saturated rate (schbench_open_rate); wake-up and request (service) latency
    p50/p99/p99.9 µs, requests/s, the rate offered. A run lasts --secs or SCHBENCH_MIN_SECS."""

    def run(ctx):
        secs = max(int(round(ctx["secs"])), 1 if _warming_up(ctx) else SCHBENCH_MIN_SECS)
        rate = schbench_open_rate(ctx, load_pct)
        out, served = _sampled([f"{ctx['probes']}/schbench", "-m", str(OPEN_MSGS), "-t", str(ctx["ncpu"]), "-R",
                                str(rate), "-r", str(secs)], "schbench-worker", OPEN_MSGS * ctx["ncpu"], secs,
                               service.BACKLOGGED)
        return {**parse_schbench(out.stderr), "rate": float(rate), "load_pct": load_pct, "secs": secs, **served}
    return run


# ---- the sleeper wake-up surface (issue 46) ----

# A sleeper point runs long enough for this many periods at least (a 16 ms period: 4.8 s)
SLEEPER_MIN_PERIODS = 300
SLEEPER_SOURCES = ("timer", "futex", "pipe", "epoll", "signal")
SLEEPER_PERCENTILES = ["p50_us", "p99_us", "p999_us", "missed"]
# The central point; every other point moves one axis away from it, but for the hogs at nice 19, which are
# measured at each hog count. `cpu`: the CPU the sleeper and its hogs are pinned to. On single-threaded TCG
# a wake-up for a vCPU that is not the one running waits for its turn on the host thread, so with every vCPU
# busy a sleeper's figure follows the vCPU it sits on, not the scheduler (docs/results/2026-11-28-timer-skew):
# every point keeps one CPU busy and the other idle but for the waker of the event sources.
SLEEPER_CENTRE = {"period_us": 1000, "hogs": 2, "nice": 0, "work_pct": 0, "source": "timer", "cpu": 1}
SLEEPER_AXES = (("period_us", (250, 4000, 16000)), ("hogs", (0, 1, 4)), ("work_pct", (10, 50)),
                ("source", ("futex", "pipe", "epoll", "signal")), ("cpu", (0,)))
SLEEPER_NICE19_HOGS = (1, 2, 4)
# cyclictest's points (issue 46's table): (hogs, period µs), on the centre's CPU
CYCLICTEST_POINTS = ((0, 1000), (1, 1000), (2, 1000), (2, 4000))
CYCLICTEST_HIST_US = 100000


def _period_label(us):
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


def sleeper_name(period_us, hogs, nice, work_pct, source, cpu):
    return f"sleeper-{_period_label(period_us)}-h{hogs}{'n19' if nice == 19 else ''}-w{work_pct}-{source}-cpu{cpu}"


def sleeper_points():
    """Every point of the project probe's family: the centre, then one axis moved at a time, then the hogs at
    nice 19 at each of their counts."""
    points = [dict(SLEEPER_CENTRE)]
    for axis, values in SLEEPER_AXES:
        points += [dict(SLEEPER_CENTRE, **{axis: v}) for v in values]
    return points + [dict(SLEEPER_CENTRE, hogs=h, nice=19) for h in SLEEPER_NICE19_HOGS]


def parse_sleeper(text):
    """sleeper's line -> metrics: p50/p99/p99.9/max µs, samples, periods, missed, the waker's own lateness, and
    per CPU the sleeper woke on its samples and p50/p99 (cpuK_n, cpuK_p50_us, cpuK_p99_us)."""
    v = parse_kv(text)
    m = {f"{k}_us": int(v[k]) for k in ("p50", "p99", "p999", "max", "waker_p50", "waker_p99")}
    m.update({k: int(v[k]) for k in ("samples", "periods", "missed")})
    for k, val in v.items():
        cpu = re.fullmatch(r"cpu(\d+)_(n|p50|p99)", k)
        if cpu:
            m[f"cpu{cpu.group(1)}_{cpu.group(2)}" + ("" if cpu.group(2) == "n" else "_us")] = int(val)
    return m


def _hogs(ctx, per_cpu, nice=0, cpu=None):
    """per_cpu CPU hogs (shell loops) per CPU, each its own session, at `nice`; all on `cpu` when given (then
    per_cpu of them), else unpinned."""
    count = per_cpu if cpu is not None else per_cpu * ctx["ncpu"]
    hogs = [Background(ctx, ":", nice=nice, cpu=cpu) for _ in range(count)]
    if hogs:
        time.sleep(0.5)
    return hogs


def _sleeper_cpus(ctx, cpu):
    """(the measured CPU, the waker's CPU: the first other one); a point needs two CPUs."""
    if ctx["ncpu"] < 2 or cpu >= ctx["ncpu"]:
        raise RuntimeError(f"a sleeper point pins to CPU {cpu} and its waker to another: {ctx['ncpu']} CPU(s)")
    return cpu, 1 if cpu == 0 else 0


def sleeper(period_us, hogs, nice, work_pct, source, cpu):
    """The project's periodic sleeper (bench/src/sleeper.c) at SCHED_OTHER, pinned to `cpu` with `hogs` CPU hogs
    at `nice` pinned there too; every other CPU is idle but for the waker. Every period_us it is woken by
    `source` (its own timer; a futex, pipe, loopback UDP socket in epoll, or signal from a waker pinned to
    another CPU) and does work_pct % of the period in CPU work. So the scheduler decides when the woken sleeper
    runs among its hogs, not where: on the instruction clock a wake-up on one busy vCPU while another is busy
    waits for the vCPUs' turn-taking, which no scheduler controls. Wake-up p50/p99/p99.9 µs (lower is better)
    and missed periods; fails when a sample was taken on another CPU. Runs the run's seconds, or
    SLEEPER_MIN_PERIODS periods."""

    def run(ctx):
        secs = ctx["secs"] if _warming_up(ctx) else max(ctx["secs"], SLEEPER_MIN_PERIODS * period_us / 1e6)
        mine, waker = _sleeper_cpus(ctx, cpu)
        work_us = period_us * work_pct // 100
        loads = _hogs(ctx, hogs, nice, mine)
        try:
            cmd = ["taskset", "-c", str(mine), f"{ctx['probes']}/sleeper", f"{secs:g}", str(period_us), str(work_us),
                   source] + ([] if source == "timer" else [str(waker)])
            out = _sh(cmd).stdout
        finally:
            for b in loads:
                b.stop()
        m = parse_sleeper(out)
        if m.get(f"cpu{mine}_n") != m["samples"]:
            raise RuntimeError(f"the sleeper pinned to CPU {mine} took samples elsewhere: {out.strip()!r}")
        return {**m, "secs": secs}
    return run


def parse_cyclictest(text, period_us, secs):
    """cyclictest's histogram (-h, stdout) -> p50/p99/p99.9/max µs, samples, missed periods (the periods of the
    run without a cycle) and overflows (samples beyond the histogram: counted at the run's max, so a percentile
    that falls among them is the max)."""
    hist, total, overflows, maximum = {}, None, 0, None
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0].isdigit() and f[1].isdigit():
            hist[int(f[0])] = hist.get(int(f[0]), 0) + int(f[1])
        elif line.startswith("# Total:"):
            total = int(f[2])
        elif line.startswith("# Max Latencies:"):
            maximum = int(f[3])
        elif line.startswith("# Histogram Overflows:"):
            overflows = int(f[3])
    n = sum(hist.values()) + overflows
    if not n or maximum is None:
        raise RuntimeError(f"no histogram in cyclictest's output: {text[-300:]!r}")
    if overflows:
        hist[maximum] = hist.get(maximum, 0) + overflows
    m = {"samples": n, "overflows": overflows, "max_us": maximum,
         "missed": max(0, int(secs * 1e6 // period_us) - n)}
    for key, q in (("p50_us", 0.5), ("p99_us", 0.99), ("p999_us", 0.999)):
        acc = 0
        for k in sorted(hist):
            acc += hist[k]
            if acc >= q * n:
                m[key] = k
                break
    return m


def thread_policies(pid):
    """[(the scheduling policy: 0 SCHED_OTHER, 1 SCHED_FIFO, ...; the CPUs it may run on)] of each thread of
    process `pid`, from /proc/PID/task/*/stat (field 41) and sched_getaffinity."""
    threads = []
    for stat in glob.glob(f"/proc/{pid}/task/*/stat"):
        try:
            with open(stat) as f:
                text = f.read()
            cpus = os.sched_getaffinity(int(stat.split("/")[-2]))
        except OSError:
            continue
        threads.append((int(text[text.rindex(")") + 2:].split()[38]), cpus))
    return threads


CYCLICTEST_POLICY_CHECK_S = 0.5  # when its measuring thread is up and has its policy


def run_cyclictest(cmd, timeout):
    """Run cyclictest; (its stdout, the policy and CPUs of each of its threads, read while it ran)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(CYCLICTEST_POLICY_CHECK_S)
    threads = thread_policies(proc.pid)
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"cyclictest exited {proc.returncode}: {err[-300:]!r}")
    return out, threads


def cyclictest(hogs, period_us, cpu):
    """The real-time community's periodic timer-latency tool at SCHED_OTHER: `taskset -c CPU cyclictest -m -q
    -p 0 --policy=other -t 1 -i PERIOD -D SECS -h ...`, with `hogs` CPU hogs pinned to the same CPU and the
    others idle (see sleeper()). The order of -p and --policy matters: with --policy first, cyclictest 2.4
    turns -p 0 into SCHED_FIFO priority 2, so the run checks its threads' policy and CPUs and fails unless
    every one is SCHED_OTHER on CPU `cpu` alone. p50/p99/p99.9 µs late (lower is better) from its histogram,
    and missed periods."""

    def run(ctx):
        secs = int(ctx["secs"]) if _warming_up(ctx) else max(int(ctx["secs"]),
                                                             math.ceil(SLEEPER_MIN_PERIODS * period_us / 1e6))
        mine, _ = _sleeper_cpus(ctx, cpu)
        loads = _hogs(ctx, hogs, cpu=mine)
        try:
            out, threads = run_cyclictest(["taskset", "-c", str(mine), "cyclictest", "-m", "-q", "-p", "0",
                                           "--policy=other", "-t", "1", "-i", str(period_us), "-D", str(secs), "-h",
                                           str(CYCLICTEST_HIST_US)], timeout=secs * 30 + 60)
        finally:
            for b in loads:
                b.stop()
        if not threads or any(p != 0 for p, _ in threads):
            raise RuntimeError(f"cyclictest's threads ran at policies {[p for p, _ in threads]}, not SCHED_OTHER (0)")
        if any(cpus != {mine} for _, cpus in threads):
            raise RuntimeError(f"cyclictest's threads ran on CPUs {[sorted(c) for _, c in threads]}, not {mine} alone")
        return {**parse_cyclictest(out, period_us, secs), "secs": secs}
    return run


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
# `traceable`: --trace records its probe's wake-ups (vrqbench/wakeup_trace.py); `service`: its runs record each
# equal worker's CPU time over windows (vrqbench/service.py), judged beside its latencies
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
               "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "service": True},
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
           "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "service": True, "named": True, "group": "reqlat-surface"}
    for name, w, us, n, m in surface_points()
})

WORKLOADS.update({
    f"schbench-w{n}": {"run": schbench(n), "primary": "req_p99_us", "higher": False,
                       "desc": f"schbench -m 1 -t {n}x CPUs: its requests, 1 message thread, {n} worker"
                               f"{'s' if n > 1 else ''} per CPU",
                       "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "service": True, "named": True, "group": "schbench"}
    for n in (1, 2, 4)
})

WORKLOADS.update({
    name: {"run": reqlat_open(us, pct, a), "primary": "resp_p99_us", "higher": False,
           "desc": f"open-loop requests: {w} each, {pct}% of nominal capacity, "
                   f"{ {'burst': 'a second’s requests at once', 'even': 'evenly spaced', 'poisson': 'Poisson arrivals'}[a] }"
                   f", {OPEN_MSGS} message "
                   f"threads x {OPEN_WORKERS_PER_MSG} workers",
           "instrument": TIMING, "percentiles": OPEN_PERCENTILES, "service": True, "named": True, "group": "reqlat-open"}
    for name, w, us, pct, a in open_points()
})

WORKLOADS.update({
    f"schbench-open-{pct}": {"run": schbench_open(pct), "primary": "req_p99_us", "higher": False,
                             "desc": f"schbench -R at {pct}% of its saturated rate, {OPEN_MSGS} message threads, "
                                     "2 workers per CPU",
                             "instrument": TIMING, "percentiles": REQLAT_PERCENTILES, "service": True, "named": True,
                             "group": "reqlat-open"}
    for pct in SCHBENCH_OPEN_LOADS
})

WORKLOADS.update({
    sleeper_name(**p): {"run": sleeper(**p), "primary": "p99_us", "higher": False,
                        "desc": f"periodic sleeper ({p['source']}, {_period_label(p['period_us'])}, "
                                f"{p['work_pct']}% work) beside {p['hogs']} hog{'s' if p['hogs'] != 1 else ''}"
                                f"{' at nice 19' if p['nice'] else ''}, all on CPU {p['cpu']}",
                        "instrument": TIMING, "percentiles": SLEEPER_PERCENTILES, "named": True,
                        "group": "sleeper-surface"}
    for p in sleeper_points()
})

WORKLOADS.update({
    f"cyclictest-{_period_label(per)}-h{h}-cpu{SLEEPER_CENTRE['cpu']}": {
        "run": cyclictest(h, per, SLEEPER_CENTRE["cpu"]), "primary": "p99_us", "higher": False,
        "desc": f"cyclictest at SCHED_OTHER, {_period_label(per)} period, beside {h} hog{'s' if h != 1 else ''}, "
                f"all on CPU {SLEEPER_CENTRE['cpu']}",
        "instrument": TIMING, "percentiles": SLEEPER_PERCENTILES, "named": True, "group": "sleeper-surface"}
    for h, per in CYCLICTEST_POINTS
})

# names that select several workloads at once (--workloads)
WORKLOAD_GROUPS = {g: [name for name, spec in WORKLOADS.items() if spec.get("group") == g]
                   for g in ("reqlat-surface", "frames", "schbench", "reqlat-open", "sleeper-surface")}

# what `bench run` measures when --workloads is not given
DEFAULT_WORKLOADS = [name for name, spec in WORKLOADS.items() if not spec.get("named")]

# VRQ's four build ratios, reported side by side
BUILD_FOUR = ["build-50", "build-100", "build-150", "build-100+50idle"]
