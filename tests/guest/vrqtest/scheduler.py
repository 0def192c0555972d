"""scx_vrq run as a user would: started through its CLI and stopped with Ctrl-C (Scheduler), read
through its stats socket (Stats), run once to completion (run_cli), its defaults as --help states
them, and the shares its deadline model predicts."""

import contextlib
import json
import os
import re
import signal
import socket
import struct
import subprocess
import time

from .env import OUT, POLICY_SIM, SCX_VRQ, nr_cpus, wait_for
from .kernel import kernel_hz, scx_ops, scx_state
from .load import thread_stats

STATS_SOCK = "/var/run/scx/root/stats"

# How long a load may take is not a fixed number of seconds: the guest emulates it, on machines of
# 3x different speeds, beside whatever load a test runs. The first load in this process (of any
# scheduler) is the reference measured in the same boot; later loads wait up to LOAD_BOUND_FACTOR
# times it (at least LOAD_BOUND_MIN_S), the first up to LOAD_FIRST_S -- past those, a load that has
# not finished has hung, not merely run slowly.
LOAD_BOUND_FACTOR, LOAD_BOUND_MIN_S, LOAD_FIRST_S = 10, 30, 600
_load_reference_s = None


def load_bound():
    """Seconds a load may take in this boot (see LOAD_BOUND_FACTOR)."""
    if _load_reference_s is None:
        return LOAD_FIRST_S
    return max(LOAD_BOUND_MIN_S, LOAD_BOUND_FACTOR * _load_reference_s)


def load_reference():
    """The first load's time in this process (None before one finished)."""
    return _load_reference_s


class Scheduler:
    """A sched_ext scheduler started as a user starts it and stopped with SIGINT like a user's Ctrl-C:
    scx_vrq with `args` (its CLI), or any command `cmd` (a variant binary, a peer scheduler). Its
    output goes to `log_path` (default OUT/NAME.log). It counts as loaded once sched_ext is enabled
    and, with `wait_stats` (the default), once it serves scx_vrq's stats socket -- False for a
    scheduler that serves none (the peers). stop() returns the exit status and keeps it in `rc`."""

    def __init__(self, *args, name="sched", cmd=None, log_path=None, wait_stats=True):
        if cmd is not None and args:
            raise ValueError("Scheduler: give scx_vrq's arguments or a whole command, not both")
        self.args = list(args)
        self.cmd = list(cmd) if cmd is not None else None
        self.log_path = log_path or os.path.join(OUT, f"{name}.log")
        self.wait_stats = wait_stats
        self.proc = None
        self.rc = None

    def command(self):
        return self.cmd if self.cmd is not None else [SCX_VRQ, *self.args]

    def start(self, timeout=None):
        """Start it and wait until it is loaded: up to `timeout` s, by default load_bound()."""
        global _load_reference_s
        if timeout is None:
            timeout = load_bound()
        self.logf = open(self.log_path, "w")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command(), stdout=self.logf, stderr=subprocess.STDOUT)
        # Loaded means enabled *and* serving stats: a socket file left by an earlier instance exists
        # before this one binds it, so only a successful connection counts.
        ok = wait_for(lambda: scx_state() == "enabled" and (not self.wait_stats or stats_ready())
                      or self.proc.poll() is not None, timeout)
        if not ok or self.proc.poll() is not None:
            what = f"scx_vrq {' '.join(self.args)}" if self.cmd is None else " ".join(self.cmd)
            why = f"exited {self.proc.poll()}" if self.proc.poll() is not None else f"not loaded after {timeout:.0f}s"
            raise RuntimeError(f"{what} did not load ({why}): state={scx_state()} log: {self.tail()}")
        if _load_reference_s is None:
            _load_reference_s = time.monotonic() - t0
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def loaded(self):
        return self.alive() and scx_state() == "enabled" and scx_ops().startswith("vrq")

    def stop(self, sig=signal.SIGINT, timeout=None, disabled_timeout=None):
        """Signal it if it still runs, wait `timeout` s for it to exit (then SIGKILL it), and up to
        `disabled_timeout` s for sched_ext to be disabled; both by default load_bound() (an unload
        hands every task back through the kernel, emulated work as a load is). Returns the exit
        status (also in `rc`)."""
        if self.proc is None:
            return None
        timeout = load_bound() if timeout is None else timeout
        disabled_timeout = load_bound() if disabled_timeout is None else disabled_timeout
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        wait_for(lambda: scx_state() == "disabled", disabled_timeout)
        self.rc = rc
        return rc

    def tail(self, n=5):
        try:
            with open(self.log_path) as f:
                return " | ".join(f.read().strip().splitlines()[-n:])
        except OSError:
            return ""


@contextlib.contextmanager
def loaded(*args, name="sched", timeout=None, unload=None, **kw):
    """`with loaded(ARGS..., name=NAME) as sched:` -- a Scheduler (same arguments) started for the
    block and stopped when it ends, exception or not; its exit status is then `sched.rc`. `unload`:
    a function of the scheduler that stops it instead of sched.stop() (a suite's own unload check).
    A start that fails raises RuntimeError, after stopping what it started (with sched.stop())."""
    sched = Scheduler(*args, name=name, **kw)
    try:
        sched.start(timeout)
    except BaseException:
        sched.stop()
        raise
    try:
        yield sched
    finally:
        if unload is not None:
            unload(sched)
        else:
            sched.stop()


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
    (the first since the connection was opened). `with Stats() as stats:` closes it after the block."""

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

    def quiet(self, timeout=10):
        """Wait until no thread of the scheduler serving this socket is runnable (three looks in a row,
        20 ms apart; up to `timeout` s). After a request the loader's statistics relay waits in a
        crossbeam channel, whose backoff runs PAUSE instructions before it blocks; single-threaded
        emulation runs the other vCPUs at each, so on the host's clock beside busy vCPUs that thread
        kept an idle CPU busy for a second or more (a placement test's wake-ups then went elsewhere).
        True when quiet."""
        cred = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", cred)[0]

        def runnable():
            return any(fields[0] == "R" for _, fields in thread_stats(pid).values())

        end, calm = time.monotonic() + timeout, 0
        while time.monotonic() < end and calm < 3:
            calm = 0 if runnable() else calm + 1
            time.sleep(0.02)
        return calm >= 3

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def flag_default(flag):
    """scx_vrq's default for `flag`, as its --help states it (one source of truth: src/cli.rs)."""
    text = subprocess.run([SCX_VRQ, "--help"], check=True, capture_output=True, text=True).stdout
    # from the flag's own entry (clap indents it at most 6 columns, "      --flag <VALUE>"), not a mention
    # in another flag's text, which is indented further (a wrapped line of --profile's help can start
    # with "--min-slice-us")
    m = re.search(r"^ {0,6}(?:-\w, )?" + re.escape(flag) + r"(?=[\s<=]).*?\[default: ([^\]]+)\]", text, re.S | re.M)
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


# What may follow a refusal's first line: clap's own help for a command-line error (a usage line, the valid
# values, a suggestion, where to read more), at most this many lines of it.
REFUSAL_HINT_LINES = 6


def one_clear_line(res, needle):
    """A refusal as the README promises it: failed, nothing on stdout, and the first line on stderr names
    the problem (`needle`) by itself; what follows it, if anything, is clap's short help for a command-line
    error (REFUSAL_HINT_LINES at most), never a backtrace or a log."""
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    return (res.returncode != 0 and bool(lines) and needle in lines[0] and len(lines) <= 1 + REFUSAL_HINT_LINES
            and not res.stdout.strip())
