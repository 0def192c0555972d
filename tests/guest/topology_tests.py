#!/usr/bin/python3
"""In-guest topology tests: on a guest of 2 packages x 2 cores x 2 threads (one LLC per package), a
waking task lands on the nearest idle CPU in the order of seed 001 (previous CPU, SMT sibling, LLC,
package, node, any), and the stats count it at that level. Then each --queue mode survives a short
stress on 8 CPUs, with the cross-queue steals counted.

Usage (as root on a sched_ext kernel with 8 CPUs numbered as QEMU's -smp 8,sockets=2,cores=2,threads=2):
    tests/guest/topology_tests.py
"""

import collections
import os
import subprocess
import time

from vrqtest import Results, Scheduler, Stats, log, nr_cpus, start_hog, stop_all

WAKES = 20
# Long enough that, even under single-threaded TCG (vCPUs take turns on one host thread), the task
# has really left its CPU before the timer fires, and the CPU it left has really gone idle.
SLEEP_S = 0.1


def current_cpu():
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def siblings(cpu, what):
    path = f"/sys/devices/system/cpu/cpu{cpu}/" + {
        "smt": "topology/thread_siblings_list",
        "llc": "cache/index3/shared_cpu_list",
    }[what]
    with open(path) as f:
        out = set()
        for part in f.read().strip().split(","):
            a, _, b = part.partition("-")
            out.update(range(int(a), int(b or a) + 1))
        return out


def cpu_idle_ticks():
    with open("/proc/stat") as f:
        return [int(l.split()[4]) for l in f if l.startswith("cpu") and l[3] != " "]


def running_tasks():
    """Runnable tasks and their CPUs, for diagnosing a failed case."""
    out = subprocess.run(["ps", "-eLo", "psr,stat,comm"], capture_output=True, text=True).stdout
    return sorted({(int(l.split()[0]), l.split()[2]) for l in out.splitlines()[1:] if l.split()[1].startswith("R")})


def wake_from(prev, allowed):
    """Make `prev` this task's previous CPU, then sleep and wake with `allowed`: the scheduler's
    select_cpu chooses among `allowed` starting from `prev`. Returns the CPU it woke on."""
    os.sched_setaffinity(0, {prev})
    os.sched_setaffinity(0, allowed)
    time.sleep(SLEEP_S)
    return current_cpu()


def test_selection_order(r):
    # Each case: CPUs kept busy, CPUs the task may use, where it must land, the counter that counts it.
    smt0 = siblings(0, "smt") - {0}
    llc0 = siblings(0, "llc") - siblings(0, "smt")
    far = set(range(nr_cpus())) - siblings(0, "llc")
    if not (smt0 and llc0 and far):
        r.check("topology/guest has SMT, LLC and a second package", False,
                f"smt={smt0} llc={llc0} far={far}")
        return
    one_smt, one_llc, one_far = min(smt0), min(llc0), min(far)
    cases = [
        ("SMT sibling", {0}, {0, one_smt, one_llc, one_far}, one_smt, "sel_smt"),
        ("same LLC", {0} | smt0, {0, one_smt, one_llc, one_far}, one_llc, "sel_llc"),
        ("other package, same node", siblings(0, "llc"), {0, one_smt, one_llc, one_far}, one_far,
         "sel_node"),
    ]
    sched = Scheduler("--queue", "llc", name="topology-select").start()
    try:
        for name, busy, allowed, expect_cpu, counter in cases:
            hogs = [start_hog(cpu=c) for c in sorted(busy)]
            time.sleep(0.5)
            stats = Stats()
            idle0 = cpu_idle_ticks()
            landed = [wake_from(0, allowed) for _ in range(WAKES)]
            idle1 = cpu_idle_ticks()
            counters = stats.read()
            stats.close()
            running = running_tasks()
            stop_all(hogs)
            hits = landed.count(expect_cpu)
            r.check(f"topology/select {name}: lands on CPU {expect_cpu}", hits >= 0.8 * WAKES,
                    f"{hits}/{WAKES} on CPU {expect_cpu} (busy {sorted(busy)}, allowed {sorted(allowed)}; "
                    f"woke on {dict(sorted(collections.Counter(landed).items()))}; idle ticks per CPU "
                    f"{[b - a for a, b in zip(idle0, idle1)]}; running: {running})")
            r.check(f"topology/select {name}: counted as {counter}", counters.get(counter, 0) >= 0.8 * WAKES,
                    f"{counter}={counters.get(counter)} sel_prev={counters.get('sel_prev')} "
                    f"sel_smt={counters.get('sel_smt')} sel_llc={counters.get('sel_llc')} "
                    f"sel_node={counters.get('sel_node')} sel_any={counters.get('sel_any')}")
            r.figure(f"select {name}: {hits}/{WAKES} woke on CPU {expect_cpu}; {counter}={counters.get(counter)}")
    finally:
        rc = sched.stop()
        r.check("topology/select unload", rc == 0, f"rc={rc}")


def test_modes_under_stress(r, secs=15):
    n = nr_cpus()
    for mode in ("global", "llc", "cpu"):
        sched = Scheduler("--queue", mode, name=f"topology-{mode}").start()
        try:
            stats = Stats()
            res = subprocess.run(["stress-ng", "-t", str(secs), "-c", str(n), "--pipe", str(n // 2),
                                  "--quiet"], capture_output=True, text=True, timeout=secs * 8 + 120)
            c = stats.read()
            stats.close()
            r.check(f"topology/{mode} stress on {n} CPUs", res.returncode == 0 and sched.loaded(),
                    f"rc={res.returncode} loaded={sched.loaded()}")
            if mode != "global":
                r.check(f"topology/{mode} idle CPUs take work from other queues",
                        c.get("dispatch_steal", 0) > 0 and c.get("peeks", 0) > 0,
                        f"steals={c.get('dispatch_steal')} peeks={c.get('peeks')}")
            r.figure(f"topology {mode} ({c.get('nr_queues')} queues): local={c.get('dispatch_local')} "
                     f"steal={c.get('dispatch_steal')} fail={c.get('steal_fail')} peeks={c.get('peeks')} "
                     f"sel prev/smt/llc/node/any={c.get('sel_prev')}/{c.get('sel_smt')}/{c.get('sel_llc')}/"
                     f"{c.get('sel_node')}/{c.get('sel_any')} rebase={c.get('niffies_rebase')}")
        finally:
            rc = sched.stop()
            r.check(f"topology/{mode} unload", rc == 0, f"rc={rc}")


def main():
    r = Results()
    log(f"guest: {os.uname().release}, {nr_cpus()} CPUs")
    test_selection_order(r)
    test_modes_under_stress(r)
    r.finish("topology")


if __name__ == "__main__":
    main()
