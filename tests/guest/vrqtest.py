"""Helpers for the in-guest tests: run scx_vrq as a user would (its CLI and its stats socket), start
CPU hogs, read what the kernel says (sched_ext state, per-task run time). Runs on a sched_ext kernel
as root (inside tools/vm/vm-run, or natively)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

from bpfmap import BpfMap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCX_VRQ = os.environ.get("VRQ_BIN", os.path.join(REPO, "target", "release", "scx_vrq"))
POLICY_SIM = os.path.join(REPO, "target", "host-tests", "policy-sim")
STATS_SOCK = "/var/run/scx/root/stats"
SCX_SYSFS = "/sys/kernel/sched_ext"
OUT = os.environ.get("VM_OUT", "/tmp")


def log(msg):
    print(msg, flush=True)


def scx_state():
    try:
        with open(f"{SCX_SYSFS}/state") as f:
            return f.read().strip()
    except OSError:
        return "missing"


def scx_ops():
    try:
        with open(f"{SCX_SYSFS}/root/ops") as f:
            return f.read().strip()
    except OSError:
        return ""


def wait_for(cond, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def nr_cpus():
    return os.cpu_count()


def kernel_hz():
    """CONFIG_HZ of the running kernel: sched_ext sees slice expiry at these ticks."""
    try:
        with open(f"/boot/config-{os.uname().release}") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    except OSError:
        pass
    return 250


class Scheduler:
    """scx_vrq started through its CLI; stopped with SIGINT like a user's Ctrl-C."""

    def __init__(self, *args, name="sched"):
        self.args = list(args)
        self.log_path = os.path.join(OUT, f"{name}.log")
        self.proc = None

    def start(self, timeout=30):
        self.logf = open(self.log_path, "w")
        self.proc = subprocess.Popen([SCX_VRQ, *self.args], stdout=self.logf, stderr=subprocess.STDOUT)
        # Loaded means enabled *and* serving stats: a socket file left by an earlier instance exists
        # before this one binds it, so only a successful connection counts.
        ok = wait_for(lambda: scx_state() == "enabled" and stats_ready() or self.proc.poll() is not None, timeout)
        if not ok or self.proc.poll() is not None:
            raise RuntimeError(f"scx_vrq {' '.join(self.args)} did not load: state={scx_state()} "
                               f"exit={self.proc.poll()} log: {self.tail()}")
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def loaded(self):
        return self.alive() and scx_state() == "enabled" and scx_ops().startswith("vrq")

    def stop(self, sig=signal.SIGINT, timeout=30):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        wait_for(lambda: scx_state() == "disabled", 10)
        return rc

    def tail(self, n=5):
        try:
            with open(self.log_path) as f:
                return " | ".join(f.read().strip().splitlines()[-n:])
        except OSError:
            return ""


def stats_ready(path=STATS_SOCK):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return True
    except OSError:
        return False
    finally:
        sock.close()


class Stats:
    """A client of scx_vrq's scx_stats socket. Each read returns the counters since the previous one
    (the first since the connection was opened)."""

    def __init__(self, path=STATS_SOCK):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # opens the "top" target: counting starts here

    def read(self):
        self.sock.sendall(json.dumps({"req": "stats", "args": {"target": "top"}}).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("stats socket closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        resp = json.loads(line)
        if resp.get("errno", 0) != 0:
            raise RuntimeError(f"stats error: {resp}")
        return resp["args"]["resp"]

    def close(self):
        self.sock.close()


HOG = "while :; do :; done"


def start_hog(cpu=None, nice=0, idle=False):
    cmd = []
    if cpu is not None:
        cmd += ["taskset", "-c", str(cpu)]
    if idle:
        cmd += ["chrt", "-i", "0"]
    cmd += ["nice", "-n", str(nice), "/bin/sh", "-c", HOG]
    return subprocess.Popen(cmd)


def runtime_ns(pid):
    """CPU time the task has received, from /proc/PID/schedstat."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def stop_all(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


# Performance levels the placement tests and bench/migration-check inject (of VRQ_PERF_ONE = 1024): a
# scaled CPU at 30% of its maximum, a warm one at full speed.
PERF_SCALED, PERF_FULL = 300, 1024


def inject_perf(scaled):
    """Give the CPUs in `scaled` a low performance level and the others full speed, through the
    scheduler's test_cpuperf map; then visit every CPU, so that each one looks at its level again
    (a CPU re-reads its own on its tick and when it looks for work -- an idle one does neither)."""
    m = BpfMap("test_cpuperf")
    try:
        for cpu in range(nr_cpus()):
            m.update_u32(cpu, PERF_SCALED if cpu in scaled else PERF_FULL)
    finally:
        m.close()
    mask = os.sched_getaffinity(0)
    for cpu in range(nr_cpus()):
        os.sched_setaffinity(0, {cpu})
        end = time.monotonic() + 0.02
        while time.monotonic() < end:
            pass
    os.sched_setaffinity(0, mask)


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


def flag_default(flag):
    """scx_vrq's default for `flag`, as its --help states it (one source of truth: src/cli.rs)."""
    text = subprocess.run([SCX_VRQ, "--help"], check=True, capture_output=True, text=True).stdout
    m = re.search(re.escape(flag) + r"\b.*?\[default: ([^\]]+)\]", text, re.S)
    if not m:
        raise RuntimeError(f"scx_vrq --help states no default for {flag}")
    return m.group(1)


def predicted_shares(tasks, rr_ms=6, seconds=60, idle_bound_ms=2000, target_ms=None):
    """Shares the deadline model predicts for always-runnable tasks on one CPU (tests/sim.h, the same
    policy functions as the scheduler), at this kernel's tick, with scx_vrq's --target-latency-ms
    (its default unless given): while the tasks wait, the queues' clock runs faster and the slice timer
    ends the shortened turns."""
    tick_ms = max(1, 1000 // kernel_hz())
    if target_ms is None:
        target_ms = int(flag_default("--target-latency-ms"))
    out = subprocess.run([POLICY_SIM, "--target-ms", str(target_ms), "--cpus", str(nr_cpus()), str(rr_ms),
                          str(tick_ms), str(seconds), str(idle_bound_ms), *tasks],
                         check=True, capture_output=True, text=True).stdout
    return [float(line.split()[1]) for line in out.strip().splitlines()]


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.figures = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            log(f"PASS {name}{': ' + detail if detail else ''}")
        else:
            self.failed += 1
            log(f"FAIL {name}{': ' + detail if detail else ''}")
        return ok

    def figure(self, line):
        self.figures.append(line)
        log(f"FIGURE {line}")

    def finish(self, suite):
        with open(os.path.join(OUT, f"{suite}-figures.txt"), "w") as f:
            f.write("\n".join(self.figures) + "\n")
        log(f"{suite}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


def kernel_log_problems(since_lines=0):
    """BUG / WARNING / stall / sched_ext error lines in the kernel log after line `since_lines`."""
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()[since_lines:]
    # "stall" as a word: RCU and sched_ext stall reports, not "Installing ..."
    bad = re.compile(r"BUG:|WARNING:|\bstall|Oops")
    problems = []
    for line in out:
        if bad.search(line):
            problems.append(line.strip())
        elif "sched_ext" in line and "error" in line.lower():
            problems.append(line.strip())
    return problems


def dmesg_len():
    return len(subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines())


# --- helpers of the reliability suite (tests/guest/reliability_tests.py) -----------------------------

# sched_ext logs every exit of a BPF scheduler as `sched_ext: BPF scheduler "NAME" disabled (REASON)`.
# These reasons are exits someone asked for: the loader unregistering (Ctrl-C, SIGTERM, SIGKILL closing
# its link) and the kernel asking for a restart (CPU hotplug). Anything else -- "runtime error",
# "scx_bpf_error", "runnable task stall" -- is an ejection.
ASKED_EXIT_REASONS = ("unregistered from user space",)
KERNEL_RESTART_REASON = "unregistered from the main kernel"


def scx_exits(since_lines=0):
    """(ops name, reason) of every BPF scheduler exit the kernel logged after line `since_lines`."""
    exits = []
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()[since_lines:]
    for line in out:
        if "sched_ext: BPF scheduler" in line and "disabled (" in line:
            name = line.split('"')[1] if line.count('"') >= 2 else "?"
            reason = line.rsplit("disabled (", 1)[1].rstrip().rstrip(")")
            exits.append((name, reason))
    return exits


def ejections(since_lines=0, restarts_expected=False):
    """Exits of the scheduler nobody asked for since `since_lines`. A kernel-asked restart counts as
    asked only where the test caused one (CPU hotplug)."""
    asked = ASKED_EXIT_REASONS + ((KERNEL_RESTART_REASON,) if restarts_expected else ())
    return [f"{name}: {reason}" for name, reason in scx_exits(since_lines) if reason not in asked]


def run_cli(args, user=None, wrap=None, timeout=60):
    """scx_vrq run once to completion (bad flags, refusals), optionally as another user or wrapped."""
    cmd = [SCX_VRQ, *args]
    if user is not None:
        cmd = as_user(user, cmd)
    if wrap is not None:
        cmd = wrap(cmd)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def as_user(uid, cmd):
    """`cmd` run with the real and effective uid/gid `uid` and no supplementary groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *cmd]


def one_clear_line(res, needle):
    """A refusal as the README promises it: failed, nothing on stdout, exactly one line on stderr,
    and that line names the problem (`needle`)."""
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    return res.returncode != 0 and len(lines) == 1 and needle in lines[0] and not res.stdout.strip()


def cpu_times(pids):
    """CPU time (ns) of each pid now; 0 for a pid that is gone."""
    out = []
    for p in pids:
        try:
            out.append(runtime_ns(p))
        except OSError:
            out.append(0)
    return out


def stalled_tasks(pids, secs):
    """The pids (CPU-bound tasks) that got no CPU time at all over the next `secs` seconds: runnable
    but unscheduled."""
    start = cpu_times(pids)
    time.sleep(secs)
    return [p for p, s, e in zip(pids, start, cpu_times(pids)) if e <= s]


def set_cpu_online(cpu, online):
    with open(f"/sys/devices/system/cpu/cpu{cpu}/online", "w") as f:
        f.write("1" if online else "0")


def hotpluggable_cpu():
    """The highest-numbered CPU that can go offline, or None."""
    for cpu in range(nr_cpus() - 1, 0, -1):
        if os.path.exists(f"/sys/devices/system/cpu/cpu{cpu}/online"):
            return cpu
    return None
