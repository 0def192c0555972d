#!/usr/bin/python3
"""What scx_vrq's hot callbacks cost per call, against a committed budget (issue 47).

With scx_vrq's defaults loaded, a fixed load runs -- a pipe ping-pong (perf bench sched pipe) and a
short request load (the bench's reqlat probe: 50 µs requests to 2 workers per CPU) -- and the kernel's
BPF statistics (kernel.bpf_stats_enabled: run_time_ns and run_cnt of each program, read from the
loader's file descriptors) give each callback's mean run time per call. On the instruction clock
(tools/vm/vm-run --clock instructions) guest time counts instructions, so that figure is the
callback's instructions and repeats from boot to boot; each hot callback must stay within BUDGET_NS
plus MARGIN. A change that makes one dearer fails here: raise its budget in the same commit, with the
measurement (docs/measured.md), if the cost is meant. On any other clock the figures follow the host
and are only printed (the checks are skipped).

Usage (as root on a sched_ext kernel, e.g. inside tools/vm/vm-run --clock instructions):
    tests/guest/cost_tests.py [--loops N] [--req-secs S] [--print-budget]

--print-budget prints the measured figures as BUDGET_NS reads them, to update it after a meant change.
Ends with "cost: N passed, N failed, K skipped".
"""

import argparse
import glob
import os
import subprocess

from vrqtest import OUT, REPO, Results, loaded, log, nr_cpus, prog_name

# Mean run time per call on the instruction clock (guest ns = instructions), scx_vrq's defaults, the
# load below, 2 vCPUs (1:2:1). Measured in CI's own VM; the runs repeat within a fraction of a
# percent (docs/measured.md: "The cost of one scheduling event").
BUDGET_NS = {
    "select_cpu": 0,
    "enqueue": 0,
    "dispatch": 0,
    "running": 0,
    "stopping": 0,
}
# Above the budget by more than this fails. The figures repeat to a fraction of a percent; one hash map
# lookup more on a hot path costs more than this (docs/measured.md).
MARGIN = 0.03
# Fewer calls than this and a callback's mean says little: the load did not exercise it.
MIN_CALLS = 2000


def instruction_clock():
    """True when tools/vm/vm-run booted this guest with --clock instructions (its `instrument` file in
    $VM_OUT), False otherwise (another clock, or natively)."""
    try:
        with open(os.path.join(OUT, "instrument")) as f:
            return any(line.strip() == "clock: instructions" for line in f)
    except OSError:
        return False


def bpf_stats(pid):
    """callback -> [run_time_ns, run_cnt] of scx_vrq's BPF programs, from the loader's fds."""
    out = {}
    for fd in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(fd) as f:
                info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        if "prog_id" in info and "run_time_ns" in info:
            name = prog_name(info["prog_id"].strip()) or ""
            cb = name[4:] if name.startswith("vrq_") else name
            out[cb] = [int(info["run_time_ns"]), int(info["run_cnt"])]
    return out


def perf():
    found = sorted(glob.glob("/usr/bin/perf_*"))
    return found[-1] if found else "perf"


def measure(loops, req_secs):
    """The fixed load under scx_vrq's defaults: callback -> (ns per call, calls)."""
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    reqlat = os.path.join(REPO, "target", "bench", "reqlat")
    with loaded(name="cost") as sched:
        before = bpf_stats(sched.proc.pid)
        subprocess.run([perf(), "bench", "sched", "pipe", "-l", str(loops)], check=True, capture_output=True,
                       timeout=600)
        subprocess.run([reqlat, str(req_secs), str(2 * nr_cpus()), "50", "1"], check=True, capture_output=True,
                       timeout=600)
        after = bpf_stats(sched.proc.pid)
    out = {}
    for cb, (ns, n) in after.items():
        b = before.get(cb, [0, 0])
        calls = n - b[1]
        out[cb] = ((ns - b[0]) / calls if calls else None, calls)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loops", type=int, default=20000, help="pipe round trips (default 20000)")
    ap.add_argument("--req-secs", type=float, default=2, help="seconds of 50 µs requests (default 2)")
    ap.add_argument("--print-budget", action="store_true", help="print the figures as BUDGET_NS reads them")
    a = ap.parse_args()
    if a.loops < 1 or a.req_secs <= 0:
        ap.error("--loops and --req-secs must be positive")
    r = Results()
    figures = measure(a.loops, a.req_secs)
    line = " ".join(f"{cb}={ns:.0f}ns/{n}" for cb, (ns, n) in sorted(figures.items()) if ns is not None)
    r.figure(f"cost per call (pipe -l {a.loops}, reqlat 50us x {2 * nr_cpus()} workers {a.req_secs:g}s): {line}")
    if a.print_budget:
        log("BUDGET_NS = {\n" + "".join(f'    "{cb}": {figures[cb][0]:.0f},\n' for cb in BUDGET_NS
                                          if figures.get(cb, (None,))[0] is not None) + "}")
    clocked = instruction_clock()
    for cb, budget in BUDGET_NS.items():
        ns, calls = figures.get(cb, (None, 0))
        name = f"{cb}: per call within its budget ({budget} ns + {100 * MARGIN:.0f}%)"
        if not clocked:
            r.skip(name, "not on the instruction clock (tools/vm/vm-run --clock instructions): figures follow "
                   "the host")
            continue
        if ns is None or calls < MIN_CALLS:
            r.check(name, False, f"{calls} calls: the load no longer exercises {cb}")
            continue
        r.check(name, ns <= budget * (1 + MARGIN), f"{ns:.0f} ns per call over {calls} calls ({ns / budget:.3f}x)")
    r.finish("cost")


if __name__ == "__main__":
    main()
