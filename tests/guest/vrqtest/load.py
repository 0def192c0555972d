"""Loads the tests run and what they got: CPU hogs, the sched_ext CI stress, CPU time, performance
levels injected through scx_vrq's test_cpuperf map."""

import os
import signal
import subprocess
import time

from .bpfmap import BpfMap
from .env import nr_cpus

HOG = "while :; do :; done"


def start_hog(cpu=None, nice=0, idle=False):
    cmd = []
    if cpu is not None:
        cmd += ["taskset", "-c", str(cpu)]
    if idle:
        cmd += ["chrt", "-i", "0"]
    cmd += ["nice", "-n", str(nice), "/bin/sh", "-c", HOG]
    return subprocess.Popen(cmd)


def wait_started(procs, timeout=60):
    """Wait until each of `procs` (start_hog's) has exec'd its hog, the shell running HOG, past taskset,
    chrt and nice. On the instruction clock the guest's time jumps ahead while a process waits for the
    host's files (an idle guest's clock skips to its next timer), so a fixed settle time after the start
    can pass before a hog runs at all. True when all have."""
    want = ["/bin/sh", "-c", HOG]

    def started(p):
        try:
            with open(f"/proc/{p.pid}/cmdline", "rb") as f:
                return f.read().decode(errors="replace").split("\0")[:3] == want
        except OSError:
            return False
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(started(p) for p in procs):
            return True
        time.sleep(0.05)
    return all(started(p) for p in procs)


def ci_stress_cmd(secs, n=None, extra=()):
    """The sched_ext project's CI stress as a command line: the stress-ng load the scx repository's CI
    'test' job runs every scheduler under (N CPU, N fork and N affinity workers, --aggressive),
    scaled to this guest -- N = its CPUs unless given -- for `secs` seconds. `extra`: stress-ng options
    a test adds to it. tests/guest/scheduler_tests.py, reliability_tests.py and topology_tests.py run
    it; docs/design.md quotes it."""
    n = str(nr_cpus() if n is None else n)
    return ["stress-ng", "-t", str(secs), "--aggressive", "-M", "-c", n, "-f", n, "--affinity", n,
            "--affinity-delay", "1", "--affinity-pin", *extra, "--quiet"]


def runtime_ns(pid):
    """CPU time the task has received, from /proc/PID/schedstat."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def nr_migrations(pid):
    """How often the task has moved to another CPU, from /proc/PID/sched (0 if the kernel does not say)."""
    with open(f"/proc/{pid}/sched") as f:
        for line in f:
            if line.startswith("se.nr_migrations"):
                return int(line.split(":")[1])
    return 0


def migrations_and_shares(pids, secs, stats):
    """Watch the tasks `pids` for `secs` seconds: how often they moved to another CPU (all of them
    together), each one's share of a CPU over that time, and the scheduler's counters over it (`stats`,
    a Stats)."""
    stats.read()
    m0, t0 = [nr_migrations(p) for p in pids], [runtime_ns(p) for p in pids]
    time.sleep(secs)
    m1, t1 = [nr_migrations(p) for p in pids], [runtime_ns(p) for p in pids]
    counters = stats.read()
    return sum(b - a for a, b in zip(m0, m1)), [(b - a) / (secs * 1e9) for a, b in zip(t0, t1)], counters


def stop_all(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def kill_groups(procs):
    """SIGKILL the process group each of `procs` leads (started with setsid / start_new_session, so
    that its whole tree goes) and reap the leaders; None entries and groups already gone are skipped."""
    for p in procs:
        if p is None:
            continue
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def cpu_times(pids):
    """CPU time (ns) of each pid now; 0 for a pid that is gone."""
    out = []
    for p in pids:
        try:
            out.append(runtime_ns(p))
        except OSError:
            out.append(0)
    return out


def cpu_jiffies():
    """{cpu: (busy, total)} jiffies from /proc/stat, for the CPUs on line."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *vals = line.split()
            if name.startswith("cpu") and name != "cpu":
                v = [int(x) for x in vals[:8]]
                out[int(name[3:])] = (sum(v) - v[3] - v[4], sum(v))
    return out


def thread_stats(pid):
    """{tid: (comm, the fields of /proc/PID/task/TID/stat after the comm)} of `pid`'s threads; {} once it is
    gone (a thread that ends meanwhile is left out). fields[0] is the state, fields[11] + fields[12] the
    CPU time in ticks, fields[36] the CPU it last ran on."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, _, rest = f.read().rpartition(")")
        except OSError:
            continue
        out[tid] = (head.partition("(")[2], rest.split())
    return out


def stalled_tasks(pids, secs):
    """The pids (CPU-bound tasks) that got no CPU time at all over the next `secs` seconds: runnable
    but unscheduled."""
    start = cpu_times(pids)
    time.sleep(secs)
    return [p for p, s, e in zip(pids, start, cpu_times(pids)) if e <= s]


# Performance levels the placement tests and bench/migration-check inject (of VRQ_PERF_ONE = 1024): a
# scaled CPU at 30% of its maximum, a warm one at full speed.
PERF_SCALED, PERF_FULL = 300, 1024


def inject_perf(scaled):
    """Give the CPUs in `scaled` a low performance level and the others full speed, through the
    scheduler's test_cpuperf map; then visit every CPU, so that each one looks at its level again
    (a CPU re-reads its own on its tick and when it looks for work -- an idle one does neither)."""
    _inject_per_cpu("test_cpuperf", lambda cpu: PERF_SCALED if cpu in scaled else PERF_FULL, 0.02)


def _inject_per_cpu(map_name, value_of, visit_secs):
    """Write value_of(cpu) for every CPU into the scheduler's test map `map_name`, then run on each CPU
    for `visit_secs`, so that each one reads its new value (an idle CPU reads nothing)."""
    m = BpfMap(map_name)
    try:
        for cpu in range(nr_cpus()):
            m.update_u32(cpu, value_of(cpu))
    finally:
        m.close()
    mask = os.sched_getaffinity(0)
    for cpu in range(nr_cpus()):
        os.sched_setaffinity(0, {cpu})
        end = time.monotonic() + visit_secs
        while time.monotonic() < end:
            pass
    os.sched_setaffinity(0, mask)


# Capacities the placement tests inject (of VRQ_PERF_ONE = 1024, the biggest CPU): a little CPU at half.
CAP_LITTLE, CAP_BIG = 512, 1024


def inject_cap(little):
    """Give the CPUs in `little` a little capacity and the others the biggest, through the scheduler's
    test_cpucap map; then visit every CPU long enough that its tick reads its capacity again (a tick
    reads it at most every 100 ms; an idle CPU does not tick)."""
    _inject_per_cpu("test_cpucap", lambda cpu: CAP_LITTLE if cpu in little else CAP_BIG, 0.25)


def probe_fields(out):
    """A probe's "k=v k=v" line (reqlat, wakelat, the suites' own probes) as {k: float}; words without
    "=" are skipped."""
    return {k: float(v) for k, v in (f.split("=", 1) for f in out.split() if "=" in f)}
