#!/usr/bin/python3
"""In-guest tests of scx_vrq, one pass per --queue mode: it loads, survives the sched_ext project's CI
stress, shares a CPU between nice levels as the deadline model predicts, keeps SCHED_IDLE in the
background without starving it into the watchdog, and unloads cleanly. Then single-mechanism tests,
among them a periodic sleeper among CPU hogs against the kernel's EEVDF in the same boot. (Bad flags,
refusals and CPU hotplug are in reliability_tests.py.)

Usage (as root on a sched_ext kernel, e.g. inside tools/vm/vm-run):
    tests/guest/scheduler_tests.py [--modes global,llc,cpu] [--features yield,group,depth,target,sleeper]
                                   [--stress-secs 30] [--share-secs 20] [--idle-secs 20]

--modes and --features pick parts of the suite (an empty list or "none" skips them all), so that
tools/test can run it as two VMs at once.
"""

import argparse
import os
import shutil
import subprocess
import time

from vrqtest import (HOG, POLICY_SIM, REPO, SCX_VRQ, Results, Scheduler, Stats, ci_stress_cmd, dmesg_len,
                     kernel_hz, kernel_log_problems, kill_groups, loaded, log, migrations_and_shares, nr_cpus,
                     nr_migrations, predicted_shares, probe_fields, runtime_ns, scx_ops, scx_state, start_hog,
                     stop_all, wait_started)

COUNTERS = ("dispatch_local", "direct_idle", "dispatch_steal", "steal_fail", "peeks", "keep_last", "preempt_kicks",
            "preempt_direct", "idle_kicks", "sel_prev", "sel_smt", "sel_llc", "sel_pkg", "sel_node", "sel_any",
            "sel_busy", "renewals", "sched_idle_rescues", "renewal_shrunk", "remainder_cut", "turn_start_cut",
            "niffies_rebase", "goidle_idle", "goidle_blocked", "goidle_needother", "max_queued")


def summary(stats):
    return " ".join(f"{k}={stats.get(k, 0)}" for k in COUNTERS)


# The BPF verifier's walk over every program at load, in instructions (the loader logs the kernel's
# verified_insns). It once grew to 423k, when a branch added to a static helper with six callers
# multiplied its states, and a reload after CPU hotplug beside four hogs on two emulated CPUs took a
# minute instead of ~20 s. The rule for the budget: the highest walk measured with the defaults over
# every --queue mode and every --group-accounting mode (docs/measured.md, the verifier's walk), plus 25%,
# rounded up to the next thousand -- room for a change's ordinary growth, while a helper's states
# multiplying (tens of thousands at once) fails here. A change that grows the walk on purpose measures
# it again and sets the budget by the same rule.
VERIFIED_INSNS_BUDGET = 103_000


def verified_insns(log_path):
    """The total the loader logged at its last load ("BPF programs loaded in S s: verified_insns=N (...)"),
    and that line; None if it logged none."""
    found = None
    with open(log_path) as f:
        for line in f:
            if "verified_insns=" in line:
                found = line.strip()
    if found is None:
        return None, ""
    return int(found.split("verified_insns=")[1].split()[0]), found


def test_load(r, sched, mode):
    r.check(f"{mode}/load", sched.loaded(), f"state={scx_state()} ops={scx_ops()}")
    total, line = verified_insns(sched.log_path)
    r.check(f"{mode}/the verifier's walk within its budget ({VERIFIED_INSNS_BUDGET} instructions)",
            total is not None and total <= VERIFIED_INSNS_BUDGET, line or "no verified_insns line in the log")
    r.figure(f"{mode} load: {line.split('[INFO] ')[-1]}")


def counters_while(stats, procs, settle, secs):
    """scx_vrq's counters over `secs` seconds while `procs` run, counted from `settle` seconds after
    they start; the processes are stopped after, whatever happens."""
    try:
        time.sleep(settle)
        stats.read()
        time.sleep(secs)
        return stats.read()
    finally:
        stop_all(procs)


def test_lone_task(r, sched, mode, secs=3):
    """A CPU hog with nothing else waiting keeps its CPU: its slice is renewed on the tick, with no
    trip through schedule() and dispatch to pick it again (renewed_on_tick, not keep_last)."""
    with Stats() as stats:
        hog = start_hog()
        wait_started([hog])
        c = counters_while(stats, [hog], 0.5, secs)
    renewed, kept = c.get("renewed_on_tick", 0), c.get("keep_last", 0)
    # (--queue cpu renews less: a task waiting on the other CPU's queue could be stolen, so it counts)
    r.check(f"{mode}/lone hog's slice renewed on the tick, not rescheduled", renewed >= 100 and renewed > kept,
            f"renewed_on_tick={renewed} keep_last={kept} in {secs} s")
    r.figure(f"{mode} lone hog {secs} s: renewed_on_tick={renewed} keep_last={kept}")


def test_stress(r, sched, mode, secs):
    """The sched_ext project's CI stress (scx CI 'test' job), scaled to this guest."""
    n = nr_cpus()
    with Stats() as stats:
        t0 = time.monotonic()
        res = subprocess.run(ci_stress_cmd(secs, n), capture_output=True, text=True, timeout=secs * 6 + 120)
        took = time.monotonic() - t0
        counters = stats.read()
    r.check(f"{mode}/stress exits 0", res.returncode == 0,
            f"stress-ng rc={res.returncode} in {took:.0f}s {res.stderr.strip()[-200:]}")
    r.check(f"{mode}/stress scheduler still loaded", sched.loaded(),
            f"state={scx_state()} alive={sched.alive()} {sched.tail()}")
    r.figure(f"stress {mode} {secs}s: {summary(counters)}")
    return counters


def cpu_time_over(pids, secs):
    """The CPU time (ns) each of `pids` receives over the next `secs` seconds."""
    start = [runtime_ns(p) for p in pids]
    time.sleep(secs)
    return [runtime_ns(p) - s for p, s in zip(pids, start)]


def measure_pinned(specs, secs, cpu):
    """Start hogs pinned to one CPU, let them settle, return each one's CPU time over `secs`."""
    hogs = [start_hog(cpu=cpu, nice=nice, idle=idle) for nice, idle in specs]
    try:
        wait_started(hogs)
        time.sleep(1.0)
        return cpu_time_over([h.pid for h in hogs], secs)
    finally:
        stop_all(hogs)


# nice 0 : nice 10 on one CPU within this fraction of the deadline model's ratio (tests/sim.h at the
# guest's tick: ~8:1). On the instruction clock every --queue mode measures 7.99-8.03:1, within 0.4%;
# the kernel's EEVDF gives its weights' 9.3:1 (1024 / 110), 16% off, which the 20% this was passes.
NICE_RATIO_TOLERANCE = 0.10
# A SCHED_IDLE hog's share of a CPU beside a normal hog: it runs only when rescued at --idle-bound-ms
# (docs/design.md, "SCHED_IDLE bound"): ~0.01% measured (2 ms in 20 s). A SCHED_IDLE task run as
# the lowest normal priority (nice 19) would get 3.8% by the model (tests/sim.h), which the 5% this was passes.
IDLE_SHARE_MAX = 0.01


def test_nice_share(r, sched, mode, secs):
    """nice 0 vs nice 10 pinned to one CPU share it as the deadline model predicts: their CPU ratio
    within NICE_RATIO_TOLERANCE (10%) of the model's."""
    cpu = nr_cpus() - 1
    run = measure_pinned([(0, False), (10, False)], secs, cpu)
    total = sum(run) or 1
    measured = run[1] / total
    shares = predicted_shares(["0", "10"])
    expected, model_ratio = shares[1], shares[0] / shares[1]
    ratio = run[0] / max(run[1], 1)
    ok = abs(ratio - model_ratio) <= NICE_RATIO_TOLERANCE * model_ratio
    r.check(f"{mode}/nice 0 vs 10 CPU ratio within {NICE_RATIO_TOLERANCE:.0%} of the model's", ok,
            f"nice0:nice10 = {ratio:.2f}, model {model_ratio:.2f} (+-{NICE_RATIO_TOLERANCE:.0%}: "
            f"{model_ratio * (1 - NICE_RATIO_TOLERANCE):.2f}-{model_ratio * (1 + NICE_RATIO_TOLERANCE):.2f}); "
            f"nice10 share {measured:.4f}, model {expected:.4f}")
    r.figure(f"nice {mode}: nice0/nice10 CPU ratio {ratio:.2f}, model {model_ratio:.2f}, nice10 share {measured:.4f}, "
             f"model {expected:.4f} ({secs}s, pinned to CPU {cpu})")


def test_idle_share(r, sched, mode, secs):
    """A SCHED_IDLE hog beside a normal hog on one CPU gets < IDLE_SHARE_MAX (1%), and the scheduler
    stays loaded (the idle task's wait is bounded below the watchdog)."""
    cpu = nr_cpus() - 1
    with Stats() as stats:
        run = measure_pinned([(0, False), (0, True)], secs, cpu)
        counters = stats.read()
    share = run[1] / (sum(run) or 1)
    r.check(f"{mode}/SCHED_IDLE share < {IDLE_SHARE_MAX:.0%}", share < IDLE_SHARE_MAX, f"idle share {share:.5f}")
    r.check(f"{mode}/SCHED_IDLE not starved into the watchdog", sched.loaded() and run[1] > 0,
            f"loaded={sched.loaded()} idle ran {run[1] / 1e6:.1f} ms, sched_idle_rescues={counters.get('sched_idle_rescues')}")
    r.figure(f"idle {mode}: SCHED_IDLE share {share:.4f} over {secs}s "
             f"(normal {run[0] / 1e9:.2f}s, idle {run[1] / 1e6:.1f}ms, sched_idle_rescues {counters.get('sched_idle_rescues')})")


def test_unload(r, sched, mode):
    rc = sched.stop()
    r.check(f"{mode}/unload", rc == 0 and scx_state() == "disabled", f"rc={rc} state={scx_state()}")


def test_yield_type(r, secs):
    """--yield-type: a task calling sched_yield() in a loop beside a CPU hog on one CPU keeps about half
    the CPU when yields do nothing (0), and next to nothing when each yield expires its slice (2)."""
    cpu = nr_cpus() - 1
    yielder = os.path.join(os.path.dirname(POLICY_SIM), "yielder")
    shares = {}
    for yt in (0, 1, 2):
        with loaded("--yield-type", str(yt), name=f"yield-{yt}"), Stats() as stats:
            procs = [subprocess.Popen(["taskset", "-c", str(cpu), yielder]), start_hog(cpu=cpu)]
            try:
                time.sleep(1)
                run = cpu_time_over([p.pid for p in procs], secs)
            finally:
                stop_all(procs)
            c = stats.read()
        shares[yt] = run[0] / (sum(run) or 1)
        r.check(f"yield/type {yt}: yields counted", c.get("yields", 0) > 0, f"yields={c.get('yields')}")
        r.figure(f"yield type {yt}: yielder's share beside a hog {shares[yt]:.3f} ({c.get('yields')} yields, {secs}s)")
    r.check("yield/type 0 ignores yields", shares[0] > 0.35, f"share {shares[0]:.3f}")
    r.check("yield/type 2 expires the slice", shares[2] < 0.2 and shares[2] < shares[0] / 2,
            f"share {shares[2]:.3f} vs {shares[0]:.3f} with type 0")


def test_group_accounting(r, secs):
    """BFS's group-accounting case, make -j128 beside a video encode: a CPU hog in one session beside a
    process tree of 16 x CPUs CPU-bound children in another. With --group-accounting session the hog
    keeps >= 80% of a CPU; with it off (plain BFS) it gets about its 1/(tasks) share. Before the hog
    starts, the tree alone: most of its deadlines are not stretched (the group's count weighs in only
    as other groups' tasks are runnable; this harness's own wake-ups stretch some, every one would be
    stretched with the count alone as the multiplier)."""
    n = 16 * nr_cpus()
    threadhog = os.path.join(os.path.dirname(POLICY_SIM), "threadhog")
    loads = {
        "session": f"for i in $(seq {n}); do /bin/sh -c '{HOG}' & done; wait",  # a process tree
        "thread": f"exec {threadhog} {n}",                                     # one process's threads
    }
    shares = {}
    alone = {}
    for mode in ("off", "session", "thread"):
        hog = tree = None
        with loaded("--group-accounting", mode, name=f"group-{mode}"):
            try:
                with Stats() as stats:
                    tree = subprocess.Popen(["setsid", "/bin/sh", "-c", loads.get(mode, loads["session"])])
                    if mode == "session":
                        # the tree alone: only this harness's wake-ups compete with it
                        time.sleep(2)
                        stats.read()
                        time.sleep(2)
                        alone = stats.read()
                    hog = subprocess.Popen(["setsid", "/bin/sh", "-c", HOG])
                    time.sleep(3)
                    shares[mode] = cpu_time_over([hog.pid], secs)[0] / (secs * 1e9)
                    c = stats.read()
            finally:
                kill_groups([hog, tree])
        r.figure(f"group {mode}: a CPU hog beside {n} CPU-bound {'threads of one process' if mode == 'thread' else 'children of one session'} gets "
                 f"{shares[mode]:.2f} of a CPU ({secs}s; group-stretched offsets {c.get('group_stretched')})")
    r.check("group/session: the hog keeps >= 80% of a CPU", shares["session"] >= 0.8, f"{shares['session']:.2f}")
    r.check("group/thread: the hog keeps >= 80% of a CPU", shares["thread"] >= 0.8, f"{shares['thread']:.2f}")
    r.check("group/off: plain BFS shares by task", shares["off"] < 0.5, f"{shares['off']:.2f}")
    stretched, renewed = alone.get("group_stretched", 0), alone.get("renewals", 0)
    r.figure(f"group session: the tree alone, 2s: {stretched} of {renewed} renewals' offsets stretched")
    r.check("group/session: a group alone is mostly ordered as without accounting (< 30% of its offsets "
            "stretched)", renewed > 0 and stretched < 0.3 * renewed, f"{stretched} of {renewed}")


def test_fork_depth_penalty(r, secs):
    """--fork-depth-penalty: a hog forked 4 levels deeper than another, both pinned to one CPU, gets
    less of it with the penalty on; about half with it off."""
    cpu = nr_cpus() - 1
    deep_cmd = f"sh -c \"sh -c 'sh -c \\\"{HOG}\\\"; :'; :\"; :"
    shares = {}
    for on in (False, True):
        procs = []
        with loaded(*(["--fork-depth-penalty"] if on else []), name=f"depth-{on}"):
            try:
                with Stats() as stats:
                    procs = [subprocess.Popen(["taskset", "-c", str(cpu), "/bin/sh", "-c", HOG],
                                              start_new_session=True),
                             subprocess.Popen(["taskset", "-c", str(cpu), "/bin/sh", "-c", deep_cmd],
                                              start_new_session=True)]
                    time.sleep(2)
                    run = cpu_time_over([procs[0].pid, deepest_descendant(procs[1].pid)], secs)
                    c = stats.read()
            finally:
                kill_groups(procs)
        shares[on] = run[0] / (sum(run) or 1)
        r.figure(f"fork depth penalty {'on' if on else 'off'}: the shallow hog's share of its CPU beside one "
                 f"4 forks deeper {shares[on]:.3f} ({secs}s; depth-stretched offsets {c.get('depth_stretched')})")
    r.check("fork-depth/off: equal shares", 0.35 < shares[False] < 0.65, f"{shares[False]:.3f}")
    r.check("fork-depth/on: the deeper hog yields", shares[True] > 0.7, f"{shares[True]:.3f}")


# The sleeper's period in the turn-end check of test_target_latency: long beside a 6 ms turn, so that the
# clock is back at real time's rate and the hogs' turns whole when it wakes.
TURN_END_SLEEP_US = 50000


def test_target_latency(r, secs, target_ms=2):
    """--target-latency-ms: the queues' clock speeds up only while latency waiters wait. Two CPU hogs
    pinned to one CPU never wake: their turns are BFS's, as the share model has them (the form that
    counted every waiting task shortened every one). A request/worker load (bench/src/reqlat: one
    message thread waking 2 workers per CPU) has latency waiters: turns are shortened or ended for
    them. Short runners (--short-run-us, on by default): reqlat's workers, queued again with their
    request half done, count as latency waiters; the hogs never do; with --short-run-us 0 nothing does. Their
    slices are renewed when a run ends with less left than their average run (--short-run-renew)."""
    cpu = nr_cpus() - 1
    reqlat = os.path.join(REPO, "target", "bench", "reqlat")

    def run_reqlat():
        return subprocess.run([reqlat, str(secs), str(2 * nr_cpus()), "1000"], capture_output=True, text=True,
                              timeout=secs * 10 + 60).stdout.strip()

    with loaded("--target-latency-ms", str(target_ms), name=f"target-{target_ms}"), Stats() as stats:
        c_hogs = counters_while(stats, [start_hog(cpu=cpu), start_hog(cpu=cpu)], 1, secs)
        stats.read()
        out = run_reqlat()
        c_req = stats.read()
        sleeper, c_sleeper = sleeper_among_hogs(cpu, secs // 2, stats)
    with loaded("--target-latency-ms", str(target_ms), "--under-share-first", "false",
                name=f"target-{target_ms}-under-share-off"), Stats() as stats:
        sleeper_turns, c_sleeper_turns = sleeper_among_hogs(cpu, secs // 2, stats, nr_hogs=2,
                                                            period_us=TURN_END_SLEEP_US)
    with loaded("--target-latency-ms", str(target_ms), "--short-run-us", "0",
                name=f"target-{target_ms}-short-run-off"), Stats() as stats:
        stats.read()
        run_reqlat()
        c_off = stats.read()
    with loaded("--target-latency-ms", str(target_ms), "--short-run-renew", "false",
                name=f"target-{target_ms}-short-run-renew-off"), Stats() as stats:
        stats.read()
        run_reqlat()
        c_renew_off = stats.read()
    miscounts = c_hogs.get("clock_miscount", 0) + c_req.get("clock_miscount", 0)
    hog_counts = {k: c_hogs.get(k, 0) for k in ("target_shortened", "turn_ended")}
    req_counts = {k: c_req.get(k, 0) for k in ("target_shortened", "turn_ended")}
    # The hogs take about secs / rr_interval turns. A kernel thread or the test's own tasks, woken while
    # they run, may shorten a few of them, as the rule says; counting every waiting task shortened all.
    turns = secs * 1000 // 6
    r.check(f"target {target_ms} ms/two pinned hogs: next to no turn shortened or ended (< 2% of ~{turns})",
            sum(hog_counts.values()) < turns // 50, f"{hog_counts} in {secs} s")
    r.check(f"target {target_ms} ms/request-worker load: turns shortened or ended for woken tasks",
            sum(req_counts.values()) > 0, f"{req_counts} ({out})")
    # The count of latency waiters never goes below 0: at -1 one latency waiter counted as none, and a
    # saturated load ran with the target off until its queues next emptied.
    r.check(f"target {target_ms} ms: the count of latency waiters never below 0 at a clock update",
            miscounts == 0, f"{miscounts} clock updates found it below 0")
    # Short runners: a hog's run passes --short-run-us (6 ms) in its first turn and never counts;
    # reqlat's workers (2 ms runs, each ended by the message thread they wake) count whenever they
    # wait with a request half done.
    short = {"hogs": c_hogs.get("short_run_waits", 0), "reqlat": c_req.get("short_run_waits", 0),
             "reqlat, --short-run-us 0": c_off.get("short_run_waits", 0)}
    r.check(f"target {target_ms} ms/two pinned hogs: no hog counted as a short runner (< 2% of ~{turns} turns)",
            short["hogs"] < turns // 50, f"{short}")
    r.check(f"target {target_ms} ms/request-worker load: workers queued again count as short runners",
            short["reqlat"] > 0, f"{short}")
    r.check(f"target {target_ms} ms/request-worker load, --short-run-us 0: nothing counts as a short runner",
            short["reqlat, --short-run-us 0"] == 0, f"{short}")
    # --short-run-renew: a worker's run ends at each hand-off with the rest of its slice; when that is
    # less than its average run (1 ms of work), the slice is renewed. A hog's run never ends. The
    # counter is the whole machine's: a task of the test's own or a kernel thread, new and so still
    # short on average, may be renewed once in a while (CI saw 1 in 10 s), so the bound is the one above.
    renews = {"hogs": c_hogs.get("short_run_renews", 0), "reqlat": c_req.get("short_run_renews", 0),
              "reqlat, --short-run-renew false": c_renew_off.get("short_run_renews", 0),
              "reqlat, --short-run-us 0": c_off.get("short_run_renews", 0)}
    r.check(f"target {target_ms} ms/two pinned hogs: no hog's slice renewed as a short runner's "
            f"(< 2% of ~{turns} turns)", renews["hogs"] < turns // 50, f"{renews}")
    r.check(f"target {target_ms} ms/request-worker load: workers' slices renewed at the end of a run",
            renews["reqlat"] > 0, f"{renews}")
    r.check(f"target {target_ms} ms/request-worker load, --short-run-renew false or --short-run-us 0: none renewed",
            renews["reqlat, --short-run-renew false"] == 0 and renews["reqlat, --short-run-us 0"] == 0,
            f"{renews}")
    # A latency waiter that cannot go first ends the longest turn that has run the turn its wait sets
    # (end_longest_turn's kick); the task kicked competes again in dispatch with a new deadline
    # (turn_over_dispatch; kept on its old one it would win again and the kick be lost), and the turn
    # that starts then is one at the waiters' rate. A turn can be over only if it began before the
    # waiter sped the clock up: between the sleeper's wake-ups (every TURN_END_SLEEP_US) nothing waits but
    # the other hog, no latency waiter, so the hogs' turns are rr_interval long, and the sleeper, which
    # cannot go first (--under-share-first false; with it on it preempts the hog directly), wakes into
    # one that ran past the 1 ms turn of one waiter on 2 CPUs most of the time. It waits for one turn
    # of that length, the target's: under 2x the target at the median. (Beside 8 hogs the clock never
    # slowed between its wake-ups, no turn was ever over and this counted 0-2 of ~500 wake-ups; and the
    # turn begun after a kick was given the rate of the last tick, a whole rr_interval: the sleeper waited
    # 8.2 ms at every wake-up, 2026-11-26.) With no latency waiter (two hogs) turns are BFS's, never over.
    turn_ends = {k: c_sleeper_turns.get(k, 0) for k in ("target_shortened", "turn_ended", "turn_over_dispatch")}
    turn_end_wakeups = secs // 2 * 1000000 // TURN_END_SLEEP_US
    turn_end_p50 = wakelat_fields(sleeper_turns).get("p50", float("inf"))
    over = {"hogs": c_hogs.get("turn_over_dispatch", 0),
            "sleeper beside 2 hogs, under-share off": c_sleeper_turns.get("turn_over_dispatch", 0),
            "reqlat": c_req.get("turn_over_dispatch", 0)}
    r.check(f"target {target_ms} ms/two pinned hogs: no turn over in dispatch (< 2% of ~{turns} turns)",
            over["hogs"] < turns // 50, f"{over}")
    turn_end_case = (f"target {target_ms} ms/a sleeper waking every {TURN_END_SLEEP_US // 1000} ms beside 2 pinned "
                     f"hogs, --under-share-first false")
    # how many of its wake-ups find the running turn over varies with their phase against the hogs'
    # turns: 54-101 of ~100 in four boots (2026-11-26); none with the kick gone
    r.check(f"{turn_end_case}: at least a quarter of its ~{turn_end_wakeups} wake-ups end the running turn",
            turn_ends["turn_ended"] > turn_end_wakeups // 4, f"counters {turn_ends} (wakelat: {sleeper_turns})")
    r.check(f"{turn_end_case}: its median wait within 2x the target ({2 * target_ms} ms)",
            turn_end_p50 < 2 * target_ms * 1000, f"p50 {turn_end_p50} us; counters {turn_ends}")
    # --under-share-first: the sleeper uses next to no CPU, so each of its wake-ups is under its share
    # beside the hogs and goes first. A hog never sleeps and never counts, but the counter is the whole
    # machine's: the test's own tasks and kernel threads wake under their share too (the two-hog phase
    # measures how often), so the sleeper's wake-ups are what the sleeper phase counts beyond that.
    sleeper_wakeups = secs // 2 * 100

    def beyond_background(counter):
        """A whole-machine counter in the two-hog phase and the sleeper phase, and what the sleeper phase
        (secs // 2 long) counts beyond the two-hog phase's rate (secs long)."""
        counts = {"two hogs": c_hogs.get(counter, 0), "sleeper among 8 hogs": c_sleeper.get(counter, 0)}
        return counts, counts["sleeper among 8 hogs"] - counts["two hogs"] * (secs // 2) / secs

    under, beyond = beyond_background("under_share")
    r.check(f"target {target_ms} ms/a periodic sleeper among 8 pinned hogs: most of its ~{sleeper_wakeups} wake-ups "
            f"go first as under its share", beyond > sleeper_wakeups // 2, f"{beyond:.0f} beyond the background: {under}")
    # --preempt-local, direct: the sleeper wakes on its own CPU (pinned there), ahead of every hog queued
    # and of the one running, so it goes onto that CPU's local DSQ with SCX_ENQ_PREEMPT rather than be
    # queued and the CPU kicked. Counted beyond what the two-hog phase shows in the background.
    direct, beyond_direct = beyond_background("preempt_direct")
    r.check(f"target {target_ms} ms/a periodic sleeper among 8 pinned hogs: most of its ~{sleeper_wakeups} wake-ups "
            f"preempt the running hog directly (no kick)", beyond_direct > sleeper_wakeups // 2,
            f"{beyond_direct:.0f} beyond the background: {direct}")
    r.figure(f"target {target_ms} ms: pinned hogs {hog_counts}; reqlat {req_counts}: {out}; short-runner waits {short}; "
             f"renewals {renews}; turns over in dispatch {over}; under-share wake-ups {under}; "
             f"direct local preemptions {direct}; a sleeper among 8 hogs: {sleeper}; with --under-share-first "
             f"false, beside 2 hogs waking every {TURN_END_SLEEP_US // 1000} ms: {sleeper_turns}, {turn_ends}")


def schedstat(pid):
    """(CPU time, time waiting runnable, turns) of a task, in ns and counts, from /proc/PID/schedstat."""
    with open(f"/proc/{pid}/schedstat") as f:
        run, wait, turns = (int(v) for v in f.read().split()[:3])
    return run, wait, turns


# The round target's bound (docs/design.md, "The wake-up rule and its bounds", answer 3): while every
# queued task per CPU x rr_interval would pass --round-target-ms, turns shorten so that a round fits it,
# so a CPU-bound task queued again after its turn waits less than the round target for its next one.
ROUND_TARGET_MS = 12
# Equal CPU hogs' CPU time over the test: each within this fraction of their mean.
ROUND_SHARE_TOLERANCE = 0.10


def test_round_target(r, secs, per_cpu=4):
    """--round-target-ms: `per_cpu` equal CPU hogs per CPU, unpinned. With the round target (the default)
    each hog's mean wait between its turns (the kernel's schedstat: time runnable but not running, per
    turn) is under the round target, and each gets its equal share within ROUND_SHARE_TOLERANCE. With
    --round-target-ms 0 turns are BFS's rr_interval and the wait is (per_cpu - 1) turns of it: the
    check binds (the second phase shows it, and is checked to)."""
    n = per_cpu * nr_cpus()

    def phase(*flags):
        with loaded(*flags, name="round-" + ("-".join(flags).replace("--", "") or "default")):
            hogs = [start_hog() for _ in range(n)]
            try:
                wait_started(hogs)
                time.sleep(1.0)
                before = [schedstat(h.pid) for h in hogs]
                time.sleep(secs)
                after = [schedstat(h.pid) for h in hogs]
            finally:
                stop_all(hogs)
        runs = [b[0] - a[0] for a, b in zip(before, after)]
        waits = [(b[1] - a[1]) / max(b[2] - a[2], 1) / 1e6 for a, b in zip(before, after)]
        mean = sum(runs) / len(runs)
        spread = max(abs(x - mean) for x in runs) / mean if mean else float("inf")
        return waits, spread

    waits, spread = phase("--round-target-ms", str(ROUND_TARGET_MS))
    waits_off, spread_off = phase("--round-target-ms", "0")
    case = f"round target {ROUND_TARGET_MS} ms/{per_cpu} hogs per CPU"
    shown = ", ".join(f"{w:.1f}" for w in sorted(waits))
    shown_off = ", ".join(f"{w:.1f}" for w in sorted(waits_off))
    r.check(f"{case}: every hog's mean wait between turns under {ROUND_TARGET_MS} ms", max(waits) < ROUND_TARGET_MS,
            f"ms per turn: {shown}; with --round-target-ms 0: {shown_off}")
    r.check(f"{case}: equal shares within {ROUND_SHARE_TOLERANCE:.0%}", spread <= ROUND_SHARE_TOLERANCE,
            f"largest distance from the mean {spread:.3f} (with --round-target-ms 0: {spread_off:.3f})")
    r.check(f"{case}, --round-target-ms 0: the bound binds (BFS's turns wait past it)",
            max(waits_off) >= ROUND_TARGET_MS, f"ms per turn: {shown_off}")
    r.figure(f"{case}: mean wait per turn {shown} ms (spread {spread:.3f}); --round-target-ms 0: {shown_off} ms "
             f"(spread {spread_off:.3f}); {secs} s")


def off_then_on(flag, counter, measure):
    """Load scx_vrq with the boolean `flag` false, then true; each time run `measure()` and read the
    counter `counter` over it. Returns {False: (what measure returned, the count), True: (...)}."""
    runs = {}
    for on in (False, True):
        with loaded(flag, "true" if on else "false", name=f"{flag.lstrip('-')}-{on}"), Stats() as stats:
            stats.read()
            measured = measure()
            runs[on] = (measured, stats.read().get(counter, 0))
    return runs


def test_handoff_slice(r, secs):
    """--handoff-slice (on by default), on reqlat with 10 ms requests and 4 workers per CPU (one message
    thread): a worker that posts its result wakes the message thread, which preempts it to hand it the
    next request. The worker keeps its turn (no turn-over renewal for the latency waiters' sake) and
    starts the next request on a whole slice, so it goes on at once. With it off (`--handoff-slice
    false`) the counter `handoff_slices` stays 0; on, it counts the workers, their wait for the next request
    (reqlat's wake-up p99, guest time on the instruction clock) is under half of what it is off,
    and the requests flow as fast (requests/s at least 0.98x, counted in guest time)."""
    reqlat = os.path.join(REPO, "target", "bench", "reqlat")

    def run_reqlat():
        return subprocess.run([reqlat, str(secs), str(4 * nr_cpus()), "10000", "1"], capture_output=True,
                              text=True, timeout=secs * 10 + 60).stdout.strip()
    runs = off_then_on("--handoff-slice", "handoff_slices", run_reqlat)
    (out_off, counted_off), (out_on, counted_on) = runs[False], runs[True]
    off, on = probe_fields(out_off), probe_fields(out_on)
    detail = f"on: handoff_slices {counted_on}, {out_on}; off: handoff_slices {counted_off}, {out_off}"
    r.check("handoff-slice/off (--handoff-slice false): handoff_slices 0", counted_off == 0, detail)
    r.check("handoff-slice/on (the default): 10 ms request workers preempted by their message thread keep "
            "their turn", counted_on > 0, detail)
    p99_on, p99_off = on.get("wake_p99", float("inf")), off.get("wake_p99", 0)
    r.check("handoff-slice/on: the workers' wake-up p99 under half of it off", p99_on < p99_off / 2,
            f"p99 {p99_on:.0f} us on, {p99_off:.0f} us off")
    rps_on, rps_off = on.get("rps", 0), off.get("rps", float("inf"))
    r.check("handoff-slice/on: requests/s at least 0.98x of it off", rps_on >= 0.98 * rps_off,
            f"{rps_on} on, {rps_off} off")
    r.figure(f"handoff-slice, reqlat 10 ms x {4 * nr_cpus()} workers, 1 message thread, {secs} s: {detail}")
    cpu = nr_cpus() - 1
    with loaded(name="handoff-service"), Stats() as stats:
        stats.read()
        ratio, times = handoff_service(cpu, secs)
        counted = stats.read()
    handoffs, repaid = counted.get("handoff_slices", 0), counted.get("slice_repaid", 0)
    detail = (f"spinner {ratio:.3f}x the hogs' mean, CPU ms {[round(t / 1e6) for t in times]}, "
              f"handoff_slices {handoffs}, slice_repaid {repaid}")
    r.check(f"handoff-slice/a task that hands off every {HANDOFF_RUN_US // 1000} ms of CPU gets its share beside "
            f"{HANDOFF_HOGS} hogs on CPU {cpu}: within {HANDOFF_SHARE_TOLERANCE:.0%} (the hand-offs repaid)",
            handoffs > 0 and abs(ratio - 1) <= HANDOFF_SHARE_TOLERANCE, detail)
    r.figure(f"handoff-slice service, {secs} s: {detail}")


# The hand-off's bound on service (docs/design.md, "The wake-up rule and its bounds"): a hand-off moves
# when a task's CPU time comes, never how much of it. A CPU-bound task that hands off to a partner every
# HANDOFF_RUN_US of its CPU time (a long runner: past --short-run-us), beside plain CPU hogs on one
# CPU, gets the same CPU time as each of them within HANDOFF_SHARE_TOLERANCE over the test. The interval
# is long enough that the top-ups add CPU time (at a few ms, shorter than a slice, they add next to none):
# without the repayment the spinner gets well over the tolerance more than the hogs.
HANDOFFER = os.path.join(REPO, "target", "host-tests", "handoffer")
HANDOFF_RUN_US = 20000
HANDOFF_HOGS = 3
HANDOFF_SHARE_TOLERANCE = 0.10


def handoff_service(cpu, secs):
    """A hand-off spinner (tests/handoffer.c) and HANDOFF_HOGS plain hogs pinned on `cpu`: the spinner's
    CPU time over `secs` as a multiple of the hogs' mean, and each one's CPU time (ns, spinner first)."""
    spinner = subprocess.Popen(["taskset", "-c", str(cpu), HANDOFFER, str(HANDOFF_RUN_US)],
                               stdout=subprocess.PIPE, text=True)
    hogs = []
    try:
        pid, _partner = (int(x) for x in spinner.stdout.readline().split())
        hogs = [start_hog(cpu=cpu) for _ in range(HANDOFF_HOGS)]
        wait_started(hogs)
        time.sleep(1.0)
        times = cpu_time_over([pid] + [h.pid for h in hogs], secs)
    finally:
        stop_all(hogs)
        spinner.kill()
        spinner.wait()
    hog_mean = sum(times[1:]) / len(times[1:])
    return (times[0] / hog_mean if hog_mean else float("inf")), times


TRACEFS = "/sys/kernel/tracing"


def tracefs_put(path, value):
    """Write `value` to the tracefs file `path` (relative to TRACEFS)."""
    with open(os.path.join(TRACEFS, path), "w") as f:
        f.write(value)


def spawned_on_parents_cpu(n):
    """Start `n` children with posix_spawn (glibc starts them with CLONE_VFORK: the parent sleeps until
    the child execs), one after another; how many were placed on the CPU their parent ran on just before
    (the fork's placement, tracefs sched_wakeup_new's target_cpu: what happens after it -- the exec, the
    parent's wake-up -- may move the child again, and does not count here)."""
    event = "events/sched/sched_wakeup_new"
    parent_cpus = {}
    tracefs_put("tracing_on", "1")
    tracefs_put("trace", "")
    tracefs_put(f"{event}/enable", "1")
    try:
        for _ in range(n):
            with open("/proc/thread-self/stat") as f:
                parent_cpu = int(f.read().rsplit(")", 1)[1].split()[36])
            pid = os.posix_spawn("/bin/true", ["true"], os.environ)
            os.waitpid(pid, 0)
            parent_cpus[pid] = parent_cpu
    finally:
        tracefs_put(f"{event}/enable", "0")
    placed = {}
    with open(os.path.join(TRACEFS, "trace")) as f:
        for line in f:
            if "sched_wakeup_new:" in line:
                fields = dict(kv.split("=", 1) for kv in line.split("sched_wakeup_new:", 1)[1].split() if "=" in kv)
                placed[int(fields["pid"])] = int(fields["target_cpu"])
    return sum(placed.get(pid) == cpu for pid, cpu in parent_cpus.items())


def test_vfork_handoff(r, secs, n=40):
    """--vfork-handoff (on by default): a child started with vfork runs on its parent's CPU, which the
    parent leaves until the child execs or exits (make and gcc start every compile so; sent to the idle
    CPU, successive compiles alternated CPUs). One process spawns `n` children in turn on an otherwise
    idle guest. On (the default) the counter `vfork_handoff` counts at least 90% of them and at least
    three quarters are placed on their parent's CPU; with --vfork-handoff false the counter stays 0 and at
    most half are (the fork goes to the idle CPU). The fork's placement is read (spawned_on_parents_cpu),
    not the CPU after the exec: with the rule off, the parent woken by the exec may preempt the child and
    send it back to the parent's CPU (24 of 40 read it there after their exec in one run on
    2026-11-27). Placement is decided in select_cpu from what is queued, not from timing. Then the exec
    rule's reach (test_exec_spares_only_the_parent)."""
    runs = off_then_on("--vfork-handoff", "vfork_handoff", lambda: spawned_on_parents_cpu(n))
    (same_off, counted_off), (same_on, counted_on) = runs[False], runs[True]
    detail = (f"on: {same_on}/{n} placed on the parent's CPU, vfork_handoff {counted_on}; off: {same_off}/{n}, "
              f"vfork_handoff {counted_off}")
    r.check("vfork/off (--vfork-handoff false): vfork_handoff 0, at most half the children placed on the parent's CPU",
            counted_off == 0 and same_off <= n // 2, detail)
    r.check("vfork/on (the default): 90% of the vfork children counted, three quarters placed on their parent's CPU",
            counted_on >= n * 9 // 10 and same_on >= n * 3 // 4, detail)
    r.figure(f"vfork hand-off, {n} posix_spawn children: {detail}")
    test_exec_spares_only_the_parent(r, secs)


FRAME_WORK_US = 4000   # the bench's frame: a quarter of a 60 Hz period


def frame_wakeups_beside_forks(secs):
    """The bench's frames-forks load: a 60 Hz loop doing FRAME_WORK_US of CPU per frame (target/bench/frames),
    its thread woken by a timer, beside one shell loop per CPU starting /bin/true (each child a vfork child
    that spends most of its life in execve), its wake-ups traced (vrqbench.wakeup_trace: timer, wake-up,
    switch). Returns (the probe's "k=v" line, the trace's breakdown: wait_p50_us, wait_p99_us, ... -- the
    wait from the wake-up to the switch to the thread, the scheduler's part)."""
    from vrqbench import wakeup_trace
    loops = [subprocess.Popen(["/bin/sh", "-c", "while :; do /bin/true; done"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True) for _ in range(nr_cpus())]
    try:
        time.sleep(0.5)
        wakeup_trace.start()
        out = subprocess.run([os.path.join(REPO, "target", "bench", "frames"), str(secs), str(FRAME_WORK_US)],
                             capture_output=True, text=True, timeout=secs * 10 + 60).stdout.strip()
        return out, wakeup_trace.stop(probe="frames")
    finally:
        kill_groups(loops)


def test_exec_spares_only_the_parent(r, secs):
    """--vfork-handoff's exec rule spares the waker only for its own parent's wake-up: a vfork child in
    execve that wakes its parent from its own context does not preempt for it (test_build_compilers_stay),
    but a timer's wake-up from an interrupt that comes while a child is in execve is not the child's and
    preempts as any wake-up does. Read as it was, the frame thread beside a fork storm waited for the
    exec: its wait from wake-up to switch-in p50/p99 71/1,936 us with the rule against 7/545 without it
    (traced, one run each, 2026-11-27 at 71303b2). On (the default) that wait's p50 is within twice its p50
    with --vfork-handoff false, +30 us (guest time on the instruction clock): 71303b2's scheduler failed it
    (56 us against 7), 8ecdc10's passed (23 against 7). The probe's own wake-up
    figures start at the vsync and hold the timer's delay: their p50 did not tell the two forms apart
    (337 and 341 us, 204 and 199 off). The shell, /bin/true and the probe are copied into guest RAM first:
    read from the host, a child's exec waits on the read instead of running."""
    from vrqbench import staging
    frames = os.path.join(REPO, "target", "bench", "frames")
    trace = "/run/vrq-frames-forks.trace"
    staging.trace(["/bin/sh", "-c", f"/bin/true; {frames} 0.2 1000 >/dev/null"], trace)
    with open(trace) as f:
        staging.stage(staging.traced_paths(f.read()))
    runs = off_then_on("--vfork-handoff", "vfork_handoff", lambda: frame_wakeups_beside_forks(secs))
    ((out_off, traced_off), _), ((out_on, traced_on), counted_on) = runs[False], runs[True]
    detail = (f"on: wait p50 {traced_on.get('wait_p50_us')} p99 {traced_on.get('wait_p99_us')} us of "
              f"{traced_on.get('traced')} wake-ups, vfork_handoff {counted_on}, {out_on}; off: wait p50 "
              f"{traced_off.get('wait_p50_us')} p99 {traced_off.get('wait_p99_us')} us, {out_off}")
    p50_on, p50_off = traced_on.get("wait_p50_us", float("inf")), traced_off.get("wait_p50_us", 0)
    r.check("vfork/exec rule: a timer's wake-up beside children in execve preempts (the frame thread's wait "
            "for a CPU, p50, within 2x of --vfork-handoff false's + 30 us)",
            counted_on > 0 and traced_on.get("traced", 0) > 0 and p50_on <= 2 * p50_off + 30, detail)
    r.figure(f"frames beside {nr_cpus()} fork loops, {secs} s: {detail}")


KTHREAD_KICK_MS = 20   # how often the kernel threads are woken beside the hog


def hog_migrations_beside_kworkers(secs):
    """An unpinned CPU hog while this process wakes every CPU's kworker every KTHREAD_KICK_MS
    (/proc/sys/vm/stat_refresh: the kernel refreshes its counters on each CPU and waits for them): the
    kworker on the hog's CPU preempts it, while this process sleeps and its CPU is idle. The hog's moves to
    another CPU over `secs` seconds."""
    hog = start_hog()
    try:
        wait_started([hog])
        time.sleep(0.5)
        m0 = nr_migrations(hog.pid)
        end = time.monotonic() + secs
        while time.monotonic() < end:
            with open("/proc/sys/vm/stat_refresh", "w") as f:
                f.write("1")
            time.sleep(KTHREAD_KICK_MS / 1000)
        return nr_migrations(hog.pid) - m0
    finally:
        stop_all([hog])


def test_stay_behind_kthread(r, secs):
    """--stay-behind-kthread (on by default): a task preempted by a kernel thread bound to its CPU, with
    nothing else waiting, resumes there right after it. A CPU hog beside kworkers woken on every CPU every
    KTHREAD_KICK_MS ms (hog_migrations_beside_kworkers): on, the counter `stayed_behind_kthread` counts
    the preemptions; off, it stays 0. The hog's moves are a figure only: the process waking the kworkers
    keeps the other CPU busy at those moments, rule or not (the build test below checks the moves where
    the other CPU is idle)."""
    runs = off_then_on("--stay-behind-kthread", "stayed_behind_kthread",
                       lambda: hog_migrations_beside_kworkers(secs))
    (moves_off, counted_off), (moves_on, counted_on) = runs[False], runs[True]
    detail = (f"on: hog moved {moves_on} times, stayed_behind_kthread {counted_on}; off: moved {moves_off}, "
              f"stayed_behind_kthread {counted_off}")
    r.check("kthread-stay/off (--stay-behind-kthread false): stayed_behind_kthread 0", counted_off == 0, detail)
    r.check("kthread-stay/on (the default): preempted by kworkers, the hog stays for its CPU", counted_on > 0,
            detail)
    r.figure(f"stay behind kthread, a hog beside kworkers woken every {KTHREAD_KICK_MS} ms, {secs} s: {detail}")


BUILD_UNITS = 3          # C files in the build test's code base (build-50 traced with 3)
HEAVY = ("cc1", "as")    # the compiler's and the assembler's processes, the build's CPU work


def heavy_moves_per_build(codebase_dir, builds):
    """`make -j1` of the code base `builds` times; how often its compilers' and assemblers' CPU work
    (HEAVY) changed CPU, each build: in the order they were switched in (tracefs sched_switch, filtered
    by the incoming task's name), a switch-in on another CPU than the one before -- a process moved in
    mid-run, or the next one started on the other CPU."""
    event = "events/sched/sched_switch"
    moves = []
    tracefs_put(f"{event}/filter", " || ".join(f'next_comm == "{c}"' for c in HEAVY))
    tracefs_put("tracing_on", "1")
    try:
        for _ in range(builds):
            subprocess.run(["make", "-s", "-C", codebase_dir, "clean"], check=True, capture_output=True)
            tracefs_put("trace", "")
            tracefs_put(f"{event}/enable", "1")
            subprocess.run(["make", "-s", "-C", codebase_dir, "-j1", "prog"], check=True, capture_output=True)
            tracefs_put(f"{event}/enable", "0")
            with open(os.path.join(TRACEFS, "trace")) as f:
                cpus = [line.split("[", 1)[1].split("]", 1)[0] for line in f if "sched_switch:" in line]
            moves.append(sum(a != b for a, b in zip(cpus, cpus[1:])))
    finally:
        tracefs_put(f"{event}/enable", "0")
        tracefs_put(f"{event}/filter", "0")
    return moves


def test_build_compilers_stay(r, secs, builds=3):
    """A build's compilers stay on one CPU: `make -j1` of a small C code base on the otherwise idle guest
    (the bench's build-50; make and gcc start cc1 and as with vfork). With the defaults each compile and
    assembly is handed its parent's CPU, its exec's wake-up of the parent does not preempt it
    (--vfork-handoff), and a compiler preempted by a kworker resumes behind it (--stay-behind-kthread).
    With both off the child went to the idle CPU, the parent woken at its exec preempted it there, and
    the idle CPU took a preempted compiler: cc1 and as changed CPU 4 times per build against 0 with the
    defaults on 2026-11-27 (7-13 in docs/results/2026-11-27-build50-trace, counted otherwise). Checked:
    with the defaults they change CPU under half as often as with both off, over `builds` builds each.
    The files the build opens are copied into guest RAM first (a read from the host would wait on it)."""
    from vrqbench import codebase, staging
    work = "/run/vrq-build-test"
    cb = codebase.generate(os.path.join(work, "codebase"), BUILD_UNITS)
    subprocess.run(["make", "-s", "-C", cb, "clean"], check=True, capture_output=True)
    staging.trace(["make", "-s", "-C", cb, "-j2", "prog"], os.path.join(work, "warm.trace"))
    with open(os.path.join(work, "warm.trace")) as f:
        staging.stage(staging.traced_paths(f.read(), exclude=[work]))
    runs = {}
    for on in (False, True):
        flags = [] if on else ["--vfork-handoff", "false", "--stay-behind-kthread", "false"]
        with loaded(*flags, name=f"build-stay-{on}"), Stats() as stats:
            stats.read()
            moves = heavy_moves_per_build(cb, builds)
            counters = stats.read()
            runs[on] = (moves, counters.get("vfork_handoff", 0), counters.get("stayed_behind_kthread", 0))
    (moves_off, _, _), (moves_on, vforks_on, stays_on) = runs[False], runs[True]
    detail = (f"defaults: cc1/as moves per build {moves_on}, vfork_handoff {vforks_on}, stayed_behind_kthread "
              f"{stays_on}; --vfork-handoff false --stay-behind-kthread false: {moves_off}")
    r.check("build/the compilers move under half as often with the defaults as with the vfork hand-off and "
            "--stay-behind-kthread off", sum(moves_on) < sum(moves_off) / 2, detail)
    r.figure(f"make -j1, {BUILD_UNITS} units, {builds} builds each: {detail}")


def test_sticky_in_queue(r, secs):
    """--sticky inside one shared queue (--queue global: every CPU serves one queue): one and a half CPU
    hogs per CPU, so one hog waits at a time. Off, a CPU whose hog's turn ends takes the earliest deadline,
    the hog that waited -- most often one that left another CPU -- and the hogs hop between CPUs about
    once a turn. On, a hog that left its CPU mid-work counts as one rr_interval later to the queue's
    other CPUs, so it goes on where it ran unless it would wait a turn longer. Checks: the counters say
    so (off: nothing made sticky; on: sticky tasks kept and passed over), at most half the migrations,
    and no hog starved (the 2:1 split one and a half hogs per CPU can leave gives the hogs that share a
    CPU 0.75 of the fair share)."""
    nr = nr_cpus()
    n = nr + max(1, nr // 2)
    fair = nr / n
    result = {}
    for label, extra in (("off", []), ("on", ["--sticky"])):
        hogs = []
        with loaded("--queue", "global", *extra, name=f"sticky-in-queue-{label}") as sched:
            try:
                hogs = [start_hog() for _ in range(n)]
                wait_started(hogs)
                time.sleep(1)
                with Stats() as stats:
                    migrations, shares, c = migrations_and_shares([h.pid for h in hogs], secs, stats)
            finally:
                stop_all(hogs)
        result[label] = (migrations, c, min(shares))
        r.check(f"sticky-in-queue {label}: unload", sched.rc == 0, f"rc={sched.rc}")
        r.figure(f"sticky in one queue {label}: {n} hogs on {nr} CPUs, {secs} s: {migrations} migrations; "
                 f"set={c.get('sticky_set')} kept={c.get('sticky_kept')} passed={c.get('sticky_passed')} "
                 f"stolen={c.get('sticky_stolen')}; shares {[round(x, 3) for x in shares]}, fair {fair:.3f}")
    off, on = result["off"], result["on"]
    r.check("sticky-in-queue off: nothing counted as sticky", off[1].get("sticky_set", 0) == 0,
            f"set={off[1].get('sticky_set')}")
    r.check("sticky-in-queue on: tasks made sticky, kept on their CPU and passed over by the others",
            all(on[1].get(k, 0) > 0 for k in ("sticky_set", "sticky_kept", "sticky_passed")),
            f"set={on[1].get('sticky_set')} kept={on[1].get('sticky_kept')} passed={on[1].get('sticky_passed')}")
    r.check("sticky-in-queue on: at most half the migrations of off", on[0] * 2 <= off[0], f"on {on[0]} vs off {off[0]}")
    r.check("sticky-in-queue on: no hog starved (min share >= 0.6 x fair)", on[2] >= 0.6 * fair,
            f"min share {on[2]:.3f}, fair {fair:.3f}")


WAKELAT = os.path.join(REPO, "target", "bench", "wakelat")


def sleeper_among_hogs(cpu, secs, stats=None, nr_hogs=8, period_us=10000):
    """A periodic sleeper (wakelat, `period_us` period, 10 ms unless told) among `nr_hogs` CPU hogs (8
    unless told), all pinned to `cpu`, for `secs` seconds: each of eight hogs waits seven turns, so it runs
    with its deadline passed, and a deadline renewed from now is later; the sleeper is served by going
    first as under its share (--under-share-first), else it waits its turn. wakelat's output
    ("samples=N p50=X p99=Y p999=Z max=W", us late), and the counters over its run if `stats` (with no
    sched_ext scheduler loaded it runs under the kernel's EEVDF, and `stats` must be None)."""
    hogs = [start_hog(cpu=cpu) for _ in range(nr_hogs)]
    try:
        wait_started(hogs)
        time.sleep(1)
        if stats is not None:
            stats.read()
        out = subprocess.run(["taskset", "-c", str(cpu), WAKELAT, str(secs), "1", str(period_us)],
                             capture_output=True, text=True, timeout=secs * 20 + 60).stdout.strip()
        return out, (stats.read() if stats is not None else {})
    finally:
        stop_all(hogs)


def wakelat_fields(out):
    """wakelat's "samples=N p50=X ..." as {name: int}; {} if it printed nothing."""
    return {k: int(v) for k, v in probe_fields(out).items()}


# The sleeper among hogs: docs/design.md ("A task woken under its share goes first", its bound). Its
# median wake-up latency must stay under half a tick -- a wake-up that waited for the running hog's turn
# to end would wait for a tick (slice ends are seen only there), half a tick at the median -- and within
# SLEEPER_EEVDF_RATIO of EEVDF's median measured in the same boot, which also preempts at once for a
# task owed CPU. The median, not p99: over ~500 wake-ups p99 is the 5th latest, moved by one kernel
# thread or harness task ahead of it (61-924 us between boots of the same code), while the median is the
# mechanism's (60 us in every boot; EEVDF 57 us); --under-share-first false: 9,999 us.
SLEEPER_EEVDF_RATIO = 1.5


def test_sleeper(r, secs):
    """A periodic sleeper among eight CPU hogs on one CPU wakes within the design's bound (see
    SLEEPER_EEVDF_RATIO), checked against the kernel's EEVDF on the same load in this boot; the same
    bound must reject scx_vrq with --under-share-first false (the sleeper then waits for turns)."""
    cpu = nr_cpus() - 1
    half_tick_us = 1e6 / kernel_hz() / 2
    runs = {}
    if scx_state() != "disabled":
        r.check("sleeper/EEVDF reference: no sched_ext scheduler loaded", False, f"state={scx_state()} ops={scx_ops()}")
        return
    runs["EEVDF"] = wakelat_fields(sleeper_among_hogs(cpu, secs)[0])
    for label, args in (("scx_vrq", ()), ("scx_vrq --under-share-first false", ("--under-share-first", "false"))):
        with loaded(*args, name="sleeper" + "-under-share-off" * bool(args)), Stats() as stats:
            out, c = sleeper_among_hogs(cpu, secs, stats)
        runs[label] = dict(wakelat_fields(out), under_share=c.get("under_share", 0))
    eevdf_p50 = runs["EEVDF"].get("p50")

    def within(w):
        p50 = w.get("p50")
        return (p50 is not None and eevdf_p50 and w.get("samples", 0) >= secs * 50
                and p50 < half_tick_us and p50 <= SLEEPER_EEVDF_RATIO * eevdf_p50)

    def said(label):
        w = runs[label]
        ratio = f"{w['p50'] / eevdf_p50:.2f}x" if eevdf_p50 and "p50" in w else "n/a"
        return f"{label} p50 {w.get('p50')} us ({ratio} EEVDF's), p99 {w.get('p99')} us, {w.get('samples')} wake-ups"

    bound = (f"median < half a tick ({half_tick_us:.0f} us) and <= {SLEEPER_EEVDF_RATIO}x EEVDF's median "
             f"({eevdf_p50} us) in this boot")
    r.check(f"sleeper/a periodic sleeper among 8 pinned hogs wakes within the design's bound: {bound}",
            within(runs["scx_vrq"]), said("scx_vrq"))
    r.check("sleeper/the bound tells the rule off: with --under-share-first false the sleeper waits for turns and "
            "fails it", not within(runs["scx_vrq --under-share-first false"]),
            said("scx_vrq --under-share-first false"))
    r.figure(f"sleeper among 8 hogs on CPU {cpu}, {secs}s, wake-up lateness (us): " + "; ".join(
        f"{label}: " + " ".join(f"{k}={v}" for k, v in w.items()) for label, w in runs.items()))


# The timer sleeper of the desktop's shape (an audio callback, a frame timer), 0.25-4 ms periods, beside 1-4
# CPU hogs, all on one vCPU with the other idle, measured by two tools: the real-time community's cyclictest
# at SCHED_OTHER (its default 50 us timer slack lets the kernel fire the timer that much late, so its
# medians sit ~50 us up), and the project's sleeper (bench/src/sleeper.c: the same clock_nanosleep to each
# period's boundary with a 1 ns slack, so that its lateness is the wake-up's alone). Only with one vCPU
# busy does this instrument show the scheduler: with every vCPU busy, single-threaded TCG delivers a
# timer interrupt to a vCPU that is not running late, by hundreds of microseconds at the median under
# EEVDF as well, and which vCPU the sleeper sits on decides its figure (docs/results/2026-11-28-timer-skew).
# The bound (docs/design.md, the wake-up rule): a woken task that has used less than its share preempts at
# once, so its median lateness is EEVDF's plus the wake-up path's own cost -- within TIMER_SLEEPER_SLACK_US
# of EEVDF's median or 2x it -- and no later than --profile bfs's (BFS's own wake-up preemption), in this
# boot. On the instruction clock each median repeats to its microsecond, so the second comparison has no
# slack: a rule beyond BFS that delays the sleeper fails it. The rule under it (a hog the sleeper's timer
# preempts is no waker handing off: in_own_context) is checked by its counter: the medians alone moved by
# less than it costs in some boots (the hogs' history decides).
TIMER_SLEEPER_POINTS = ((2, 1000), (2, 4000), (4, 250))  # (hogs, period in us)
TIMER_SLEEPER_SLACK_US = 10


def staged_copy(path):
    """A copy of the program at `path` in guest RAM (/run), made once: run from there, it reads nothing from the
    host inside a measured window, which would move the instruction clock."""
    staged = f"/run/vrq-{os.path.basename(path)}"
    if not os.path.exists(staged):
        shutil.copy(path, staged)
    return staged


def cyclictest_pinned(cpu, period_us, secs):
    """cyclictest (rt-tests) at SCHED_OTHER, one thread pinned to `cpu`: {samples, p50, p99} in us late,
    from its histogram; {} if it printed none. Staged in guest RAM first: a read from the host inside the
    window would move the instruction clock."""
    staged = staged_copy(shutil.which("cyclictest"))
    # -p 0 before --policy=other: -p 0 alone, or after it, runs the measuring thread at SCHED_FIFO 2
    out = subprocess.run(["taskset", "-c", str(cpu), staged, "-p", "0", "--policy=other", "-t1", "-i", str(period_us),
                          "-D", str(secs),
                          "-q", "-m", "-h", "20000"], capture_output=True, text=True, timeout=secs * 30 + 60).stdout
    hist = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit():
            hist[int(fields[0])] = int(fields[1])
    n = sum(hist.values())
    if not n:
        return {}
    res = {"samples": n}
    for name, q in (("p50", 0.5), ("p99", 0.99)):
        acc = 0
        for k in sorted(hist):
            acc += hist[k]
            if acc >= q * n:
                res[name] = k
                break
    return res


def sleeper_pinned(cpu, period_us, secs):
    """The project's periodic sleeper (bench/src/sleeper.c, timer source) pinned to `cpu`: {samples, p50,
    p99} in us late; {} if it printed none. Staged in guest RAM first, as cyclictest_pinned is."""
    staged = staged_copy(os.path.join(REPO, "target", "bench", "sleeper"))
    out = subprocess.run(["taskset", "-c", str(cpu), staged, str(secs), str(period_us), "0", "timer"],
                         capture_output=True, text=True, timeout=secs * 30 + 60).stdout
    fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
    return {k: int(fields[k]) for k in ("samples", "p50", "p99") if fields.get(k, "").isdigit()}


TIMER_SLEEPER_TOOLS = (("cyclictest", cyclictest_pinned), ("sleeper", sleeper_pinned))


def timer_sleeper_beside_hogs(cpu, nr_hogs, period_us, secs):
    """Each of TIMER_SLEEPER_TOOLS beside `nr_hogs` hogs pinned to the same `cpu`, started under whatever
    scheduler runs now (as a user starts them): {tool: its figures}."""
    hogs = [start_hog(cpu=cpu) for _ in range(nr_hogs)]
    try:
        wait_started(hogs)
        time.sleep(0.5)
        return {tool: measure(cpu, period_us, secs) for tool, measure in TIMER_SLEEPER_TOOLS}
    finally:
        stop_all(hogs)


def test_timer_sleeper(r, secs):
    """The desktop's timer sleeper (TIMER_SLEEPER_POINTS, each of TIMER_SLEEPER_TOOLS) beside CPU hogs on
    one vCPU: scx_vrq's median lateness within TIMER_SLEEPER_SLACK_US (or 2x) of EEVDF's and no later than
    --profile bfs's, at every point, each measured in this boot; the hogs never counted as short runners."""
    if not shutil.which("cyclictest"):
        r.skip("timer-sleeper/cyclictest beside hogs", "cyclictest not installed (rt-tests)")
        return
    if scx_state() != "disabled":
        r.check("timer-sleeper/EEVDF reference: no sched_ext scheduler loaded", False, f"state={scx_state()}")
        return
    cpu, secs = nr_cpus() - 1, max(3, secs // 3)
    runs = {"EEVDF": [timer_sleeper_beside_hogs(cpu, h, per, secs) for h, per in TIMER_SLEEPER_POINTS]}
    counts = {}
    for label, args in (("scx_vrq", ()), ("--profile bfs", ("--profile", "bfs"))):
        with loaded(*args, name="timer-sleeper" + "-bfs" * bool(args)), Stats() as stats:
            stats.read()
            stats.quiet()  # the loader's stats thread idle again before the first point
            runs[label] = [timer_sleeper_beside_hogs(cpu, h, per, secs) for h, per in TIMER_SLEEPER_POINTS]
            counts[label] = stats.read()
    # The rule under the medians: a hog a timer's wake-up preempts woke nobody (in_own_context), so it is
    # never taken for a waker handing off to its wakee -- which would end its run, count it as a short runner
    # and make it a latency waiter at each of its preemptions, one a period (short_run_waits).
    wakeups = sum(point[tool].get("samples", 0) for point in runs["scx_vrq"] for tool, _ in TIMER_SLEEPER_TOOLS)
    waits = counts["scx_vrq"].get("short_run_waits", 0)
    r.check(f"timer-sleeper/the hogs the sleepers' timers preempt are not taken for wakers handing off: "
            f"short_run_waits at most 2% of the sleepers' wake-ups", wakeups > 0 and waits <= 0.02 * wakeups,
            f"short_run_waits {waits}, handoff_slices {counts['scx_vrq'].get('handoff_slices', 0)}, "
            f"wake-ups {wakeups}")
    for i, (hogs, period) in enumerate(TIMER_SLEEPER_POINTS):
        for tool, _ in TIMER_SLEEPER_TOOLS:
            eevdf, vrq, bfs = (runs[k][i][tool].get("p50") for k in ("EEVDF", "scx_vrq", "--profile bfs"))
            detail = " ".join(f"{k}: {runs[k][i][tool]}" for k in runs)
            samples = runs["scx_vrq"][i][tool].get("samples", 0)
            ok = (None not in (eevdf, vrq, bfs) and samples >= secs * 500000 // period
                  and vrq <= max(2 * eevdf, eevdf + TIMER_SLEEPER_SLACK_US) and vrq <= bfs)
            r.check(f"timer-sleeper/{tool}, {period} us period beside {hogs} hogs on CPU {cpu}: median within "
                    f"{TIMER_SLEEPER_SLACK_US} us (or 2x) of EEVDF's and no later than --profile bfs's", ok, detail)
            r.figure(f"timer sleeper ({tool}), {period} us period, {hogs} hogs on CPU {cpu}, {secs} s: {detail}")


def deepest_descendant(pid):
    """The last descendant down a chain of single children (the CPU hog at the bottom)."""
    while True:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
        except OSError:
            return pid
        if not kids:
            return pid
        pid = int(kids[0])


def test_latency_histograms(r, mode, c):
    """The wait and turn-length histograms under the stress: normal tasks' waits and turns are counted,
    each class's bucket counts add up to its count, and every turn that ended was begun by a wait that
    ended (they differ by at most the turns in progress at the two readings, two per CPU; the
    tasks that were running when the scheduler was loaded had no wait to end)."""
    lat = c.get("lat", {})
    normal = lat.get("normal", {})
    r.check(f"{mode}/latency histograms: normal tasks' wake-up waits, requeued waits and turns counted",
            normal.get("wake_n", 0) > 0 and normal.get("requeue_n", 0) > 0 and normal.get("turn_n", 0) > 0,
            f"normal={ {k: normal.get(k) for k in ('wake_n', 'requeue_n', 'turn_n')} }")
    bad = [f"{cls}.{kind}: {sum(v.get(kind + '_hist', []))} != {v.get(kind + '_n')}"
           for cls, v in lat.items() for kind in ("wake", "requeue", "turn")
           if sum(v.get(kind + "_hist", [])) != v.get(kind + "_n")]
    r.check(f"{mode}/latency histograms: bucket counts add up to each count", lat and not bad, "; ".join(bad))
    waits = sum(v.get("wake_n", 0) + v.get("requeue_n", 0) for v in lat.values())
    turns = sum(v.get("turn_n", 0) for v in lat.values())
    r.check(f"{mode}/latency histograms: waits ended match turns ended", abs(waits - turns) <= 2 * nr_cpus() + 2,
            f"waits {waits} turns {turns}")
    ordered = all(v.get(f"{k}_p50_us", 0) <= v.get(f"{k}_p99_us", 0) <= v.get(f"{k}_max_us", 0)
                  for v in lat.values() for k in ("wake", "requeue", "turn"))
    r.check(f"{mode}/latency histograms: p50 <= p99 <= max", ordered, str(normal))
    r.figure(f"stress {mode} latency (normal): wake n={normal.get('wake_n')} p50<={normal.get('wake_p50_us')}us "
             f"p99<={normal.get('wake_p99_us')}us max<={normal.get('wake_max_us')}us; requeued "
             f"p99<={normal.get('requeue_p99_us')}us; turn p50<={normal.get('turn_p50_us')}us "
             f"p99<={normal.get('turn_p99_us')}us")


QUEUE_MODES = ("global", "llc", "cpu")
FEATURES = ("yield", "group", "depth", "target", "round", "sleeper", "timer-sleeper", "handoff", "sticky", "vfork", "kthread",
            "build")


def parts(ap, flag, arg, known):
    """The comma-separated list `arg` given to `flag` as a list, in the order given; "" or "none" is the empty list."""
    picked = [] if arg in ("", "none") else arg.split(",")
    unknown = [p for p in picked if p not in known]
    if unknown:
        ap.error(f"{flag}: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="global,llc,cpu", help="--queue modes to test, comma-separated")
    ap.add_argument("--features", default=",".join(FEATURES),
                    help="single-mechanism tests to run after the modes, comma-separated: " + ",".join(FEATURES))
    ap.add_argument("--stress-secs", type=int, default=30)
    ap.add_argument("--share-secs", type=int, default=20)
    ap.add_argument("--idle-secs", type=int, default=20,
                    help="the SCHED_IDLE test's length: twice sched_ext's watchdog (10 s), so a starved idle task would eject")
    opts = ap.parse_args()
    modes, features = parts(ap, "--modes", opts.modes, QUEUE_MODES), parts(ap, "--features", opts.features, FEATURES)

    r = Results()
    log(f"guest: {os.uname().release}, {nr_cpus()} CPUs, HZ from config; scx_vrq = {SCX_VRQ}")
    for mode in modes:
        mark = dmesg_len()
        try:
            sched = Scheduler("--queue", mode, name=f"sched-{mode}").start()
        except RuntimeError as e:
            r.check(f"{mode}/load", False, str(e))
            r.skip(f"{mode}/the mode's tests after the load (verifier budget, lone hog, stress, latency histograms, "
                   f"nice and SCHED_IDLE shares, unload, kernel log)", "it did not load")
            continue
        try:
            test_load(r, sched, mode)
            test_lone_task(r, sched, mode)
            test_latency_histograms(r, mode, test_stress(r, sched, mode, opts.stress_secs))
            test_nice_share(r, sched, mode, opts.share_secs)
            test_idle_share(r, sched, mode, opts.idle_secs)
        finally:
            test_unload(r, sched, mode)
        problems = kernel_log_problems(mark)
        r.check(f"{mode}/kernel log clean", not problems, "; ".join(problems[:3]))
    feature_tests = {"yield": test_yield_type, "group": test_group_accounting, "depth": test_fork_depth_penalty,
                     "target": test_target_latency, "round": test_round_target, "sleeper": test_sleeper,
                     "timer-sleeper": test_timer_sleeper, "handoff": test_handoff_slice,
                     "sticky": test_sticky_in_queue, "vfork": test_vfork_handoff,
                     "kthread": test_stay_behind_kthread, "build": test_build_compilers_stay}
    for feature in features:
        feature_tests[feature](r, opts.share_secs // 2)
    r.finish("scheduler")


if __name__ == "__main__":
    main()
