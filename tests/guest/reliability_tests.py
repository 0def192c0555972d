#!/usr/bin/python3
"""Reliability and security of scx_vrq: it stays loaded under the sched_ext project's CI stress and
stress-ng's scheduler-heavy stressors, 10,000 runnable threads, policy and nice churn and CPU hotplug; a
killed loader hands every task back to the kernel; bad input is refused in one line; only root controls
it, and an unprivileged user cannot starve a root task beyond the bound that docs/design.md states
("SCHED_IDLE bound"). After every test the kernel log must be free of BUG/WARNING/stall/sched_ext error
lines, and every scheduler exit nobody asked for counts as an ejection (must be 0).

Usage (as root on a sched_ext kernel, e.g. inside tools/vm/vm-run):
    tests/guest/reliability_tests.py [--short | --long] [--part all|untimed|timed] [--only NAME,...]
                                     [--stress-secs S] [--stress-runs N] [--hotplug-cycles N] ...
--short (the default, what tools/test runs) keeps the whole suite to a few minutes on 2 emulated CPUs;
--long is the issue's full form (10 stress runs of 45 s per --queue mode, 20 hotplug cycles, every
limit loaded on its own). Ends with a FIGURE line and "reliability: N passed, N failed".

--part: the timed tests (many threads, starvation) check waits against the bounds docs/design.md
states, in guest time; in the VM that is meaningful only on the instruction clock (vm-run --clock
instructions: on the host's clock an emulated vCPU's stalls count as waits), where the rest of the
suite would take several times longer. So tools/test and tools/reliability run the suite as two parts,
`untimed` in a VM on the host's clock and `timed` in one on the instruction clock (closing line
"reliability-timed: ..."); a test in the other part is neither run nor counted here. Natively, and
with the default `all`, one run has both; on a VM's host clock the timed bounds are then skipped.
"""

import argparse
import contextlib
import os
import random
import signal
import subprocess
import time

from vrqtest import (BPF_RESTART_REASON, KERNEL_RESTART_REASON, POLICY_SIM, SCX_VRQ, STATS_SOCK, Results, Scheduler,
                     Stats, as_user, ci_stress_cmd, dmesg_len, ejections, flag_default, hotpluggable_cpu,
                     kernel_log_problems, kill_groups, load_bound, load_reference, loaded, log, nr_cpus,
                     one_clear_line, run_cli,
                     scx_exits, scx_ops, scx_state, set_cpu_online, stalled_tasks, start_hog, stop_all, wait_for)

HOST_TESTS = os.path.dirname(POLICY_SIM)
# src/bpf/policy.h: VRQ_SAFE_ROUND_NS (half the 10 s watchdog) and VRQ_SLICE_TIMER_MIN_NS, in ms.
SAFE_ROUND_MS, SLICE_TIMER_MIN_MS = 5000, 0.05
# How far past the design's round (design_round_ms) a round of the many-threads test may go: each turn
# also costs a switch, a dispatch and the slice timer. Measured on the instruction clock (2 vCPUs): 8%
# at 1,000 threads (2 ms slices: round 1,084 ms, p99 gap 1,087 ms; 2026-11-26 at 76784db), 16% at
# 100,000 (100 us slices: 5.82 s; 2026-11-23 at 3a69aad).
THREADS_ROUND_MARGIN = 1.2
MANYTHREADS = os.path.join(HOST_TESTS, "manythreads")
NOBODY = 65534
# The unprivileged user's Python: root's PATH in the guest may point into /root, which nobody cannot read.
SYSTEM_PYTHON = "/usr/bin/python3"

# Per form: durations and counts. Short took ~12 minutes on 2 TCG vCPUs in CI (hotplug 3.5 of them). Its 1,000
# threads already need the slice to shrink (a fixed 6 ms slice holds 333 runnable tasks on 2 CPUs within
# --max-round-ms 1000). The long form's 100,000 need the floor to give way (at --min-slice-us 250 their
# round on 2 CPUs would be 12.5 s, past the watchdog) and a guest with ~8 GiB (tools/reliability --long).
FORMS = {
    "short": dict(modes="global,llc,cpu", stress_secs=15, stress_runs=1, stressor_secs=6, stressor_modes="llc",
                  threads=1000, threads_secs=20, churn_secs=12, hotplug_cycles=2, storm_secs=25,
                  fault_delays="0.6", limits_each=False, starve_secs=15, starve_policies="other,batch,idle"),
    "long": dict(modes="global,llc,cpu", stress_secs=45, stress_runs=10, stressor_secs=20,
                 stressor_modes="global,llc,cpu", threads=100000, threads_secs=40, churn_secs=60, hotplug_cycles=20,
                 storm_secs=90, fault_delays="0.1,0.3,0.6,0.8,0.95,1.1", limits_each=True, starve_secs=60,
                 starve_policies="other,batch,idle"),
}



class Suite:
    """Results plus the figures the closing line reports."""

    def __init__(self, opts):
        self.opts = opts
        self.r = Results()
        self.ejections = []
        self.stress_ok = {}          # mode -> (ok runs, runs)
        self.stressor_ok = {}        # stressor -> (ok runs, runs), over the modes
        self.hotplug_survived = 0
        self.hotplug_cycles = 0
        self.bad_inputs = 0
        self.bad_rejected = 0        # refused as promised: one line, exit 2
        self.limits_accepted = 0
        self.extra = []              # further figure fragments

    def check(self, name, ok, detail=""):
        return self.r.check(name, ok, detail)

    def figure(self, line):
        self.r.figure(line)


def run_test(s, name, fn, restarts_expected=False):
    """One test, then the kernel log since its start: any BUG/WARNING/stall/sched_ext error line fails
    it, and any scheduler exit nobody asked for is an ejection. Leaves sched_ext disabled."""
    if s.opts.only and name not in s.opts.only:
        s.r.skip(name, "not selected (--only)")
        return
    log(f"--- {name}")
    if scx_state() != "disabled":
        s.check(f"{name}/starts with sched_ext disabled", False, f"state={scx_state()} ops={scx_ops()}")
        return
    mark = dmesg_len()
    t0 = time.monotonic()
    try:
        fn(s)
    except Exception as e:  # a crashed test is a failed test, and the suite goes on
        s.check(f"{name}/ran to the end", False, f"{type(e).__name__}: {e}")
    finally:
        if not wait_for(lambda: scx_state() == "disabled", 30):
            s.check(f"{name}/left sched_ext disabled", False, f"state={scx_state()} ops={scx_ops()}")
    problems = kernel_log_problems(mark)
    s.check(f"{name}/kernel log clean", not problems, "; ".join(problems[:3]))
    ejected = ejections(mark, restarts_expected)
    s.ejections += [f"{name}: {e}" for e in ejected]
    s.check(f"{name}/no ejection", not ejected, "; ".join(ejected[:3]))
    log(f"--- {name} took {time.monotonic() - t0:.0f}s")


def stop_checked(s, name, sched, sig=signal.SIGTERM):
    """Unload as `timeout --preserve-status` does in the scx CI (SIGTERM): exit 0, state disabled."""
    rc = sched.stop(sig)
    return s.check(f"{name}: unloads with exit 0", rc == 0 and scx_state() == "disabled",
                   f"rc={rc} state={scx_state()} {sched.tail(2)}")


def loaded_checked(s, label, *args, name):
    """loaded() that unloads with stop_checked: SIGTERM, then the check that it exited 0 and left
    sched_ext disabled -- also when the block raised."""
    return loaded(*args, name=name, unload=lambda sched: stop_checked(s, label, sched))


# --- 1. the sched_ext project's CI stress ------------------------------------------------------------

def test_ci_stress(s):
    o = s.opts
    for mode in o.modes:
        ok_runs = 0
        for run in range(1, o.stress_runs + 1):
            name = f"stress/{mode} run {run}"
            sched = Scheduler("--queue", mode, name=f"rel-stress-{mode}-{run}").start()
            ok = False
            try:
                res = subprocess.run(ci_stress_cmd(o.stress_secs), capture_output=True, text=True,
                                     timeout=o.stress_secs * 6 + 120)
                ok = s.check(f"{name}: stress-ng exits 0", res.returncode == 0,
                             f"rc={res.returncode} {res.stderr.strip()[-200:]}")
                ok &= s.check(f"{name}: scheduler still loaded", sched.loaded(),
                              f"state={scx_state()} ops={scx_ops()} alive={sched.alive()} {sched.tail(2)}")
            finally:
                ok &= stop_checked(s, name, sched)
            ok_runs += ok
        s.stress_ok[mode] = (ok_runs, o.stress_runs)


# --- 2. more stressors, many threads, churn, hotplug --------------------------------------------------

# stress-ng 0.15's scheduler-heavy stressors ("sched" is `schedpolicy` there). Its cpu-online stressor
# only runs with --pathological (it "may hang or reboot the machine"); CPU hotplug is test_hotplug's and
# test_restart_storm's instead: every CPU going off or on line makes the kernel restart the scheduler.
STRESSORS = ["fork", "clone", "yield", "switch", "schedpolicy", "affinity"]


def test_stressors(s):
    o = s.opts
    n = str(nr_cpus())
    for mode in o.stressor_modes:
        with loaded_checked(s, f"stressors ({mode})", "--queue", mode, name=f"rel-stressors-{mode}") as sched:
            for st in STRESSORS:
                res = subprocess.run(["stress-ng", f"--{st}", n, "-t", str(o.stressor_secs), "--quiet"],
                                     capture_output=True, text=True, timeout=o.stressor_secs * 8 + 120)
                ok = s.check(f"stressor/{st} ({mode}): exits 0", res.returncode == 0,
                             f"rc={res.returncode} {res.stderr.strip()[-200:]}")
                ok &= s.check(f"stressor/{st} ({mode}): scheduler still loaded", sched.loaded(),
                              f"state={scx_state()} {sched.tail(2)}")
                good, runs = s.stressor_ok.get(st, (0, 0))
                s.stressor_ok[st] = (good + ok, runs + 1)
                if not sched.loaded():
                    break


# Kernel limits a process with N threads needs (each thread: a pid, a task, a stack mapping and its guard).
def thread_limits(n):
    return {"kernel/pid_max": max(32768, 2 * n + 1000), "kernel/threads-max": 2 * n + 1000,
            "vm/max_map_count": 4 * n + 65530}


@contextlib.contextmanager
def raised_limits(wanted):
    """Raise the /proc/sys limits in @wanted (never lower them) and put the old values back after."""
    old = {}
    try:
        for key, val in wanted.items():
            path = f"/proc/sys/{key}"
            with open(path) as f:
                cur = int(f.read().split()[0])
            if cur < val:
                old[path] = cur
                with open(path, "w") as f:
                    f.write(str(val))
        yield
    finally:
        for path, cur in old.items():
            with open(path, "w") as f:
                f.write(str(cur))


def clock_kind():
    """The guest's clock as tools/vm/vm-run sets VRQ_CLOCK: "instructions" (instruction-counted: guest
    time is the guest's own, free of the host's load and of emulated vCPU stalls), "host" (an emulated
    vCPU's stalls count as time), or "native" (not in the VM: a real machine's clock)."""
    return os.environ.get("VRQ_CLOCK") or "native"


def timed_clock():
    """True where waits measured in guest time can be held to the design's bounds: the instruction clock
    or a real machine; never an emulated guest on the host's clock."""
    return clock_kind() in ("instructions", "native")


def time_bound(s, name, ok, detail):
    """A check of a wait against a bound in guest time: a check where timed_clock(), else a skip that
    says why (the measured value stays in the figures)."""
    if timed_clock():
        return s.check(name, ok, detail)
    s.r.skip(name, f"the guest's clock is the host's (VRQ_CLOCK={clock_kind()}): an emulated vCPU's stalls count as "
                   f"waits; run with --part timed on the instruction clock (tools/test, tools/reliability do): {detail}")
    return True


def design_round_ms(threads, cpus, rr_ms, min_slice_us, max_round_ms):
    """One round of a queue of `threads` runnable tasks on `cpus` CPUs, in ms, as src/bpf/policy.h's
    vrq_effective_slice() gives the slice (docs/design.md, "Long queues"): tasks per CPU x slice, where
    the slice shrinks to fit --max-round-ms, never below --min-slice-us unless that floor would hold the
    round past half the 10 s watchdog (VRQ_SAFE_ROUND_NS), and never below 50 us
    (VRQ_SLICE_TIMER_MIN_NS). With the defaults: 1,000 threads on 2 CPUs, 1 s (2 ms slices); 100,000,
    5 s (100 us slices)."""
    per_cpu = threads // cpus
    slice_ms = rr_ms
    if per_cpu and per_cpu * slice_ms > max_round_ms:
        slice_ms = max_round_ms / per_cpu
        if slice_ms < min_slice_us / 1000:
            slice_ms = min_slice_us / 1000
            if per_cpu * slice_ms > SAFE_ROUND_MS:
                slice_ms = max(SAFE_ROUND_MS / per_cpu, SLICE_TIMER_MIN_MS)
    return per_cpu * min(slice_ms, rr_ms)


def run_manythreads(o):
    res = subprocess.run([MANYTHREADS, str(o.threads), str(o.threads_secs)], capture_output=True, text=True,
                         timeout=o.threads_secs * 10 + 300 + o.threads // 100)
    out = res.stdout.strip()
    return res, out, (dict(zip(out.split()[::2], out.split()[1::2])) if out else {})


def test_many_threads(s):
    """N runnable threads (short form 1,000, long form 100,000) on this machine's CPUs: with the default
    --max-round-ms 1000 the slice shrinks (down to --min-slice-us 250), and where even that floor would
    hold a round past half the watchdog, the floor gives way (100,000 threads on 2 CPUs: 100 us slices, a
    5 s round). Kernel threads' wake-ups (sched_ext's own watchdog work item among them) do not wait a
    round. Every thread must run and the scheduler must stay loaded -- sched_ext's verdict that no
    runnable task waited past the watchdog. Timed (time_bound), against the round the design gives
    (design_round_ms: 1 s for the short form's 1,000 threads on 2 CPUs) with THREADS_ROUND_MARGIN for
    the turns' own cost: the round (the median of the threads' longest gaps) and 99% of the longest gaps
    within one round, the longest of all within two (docs/design.md, "Long queues"); woken kernel threads
    never wait a round. On the host's clock in the VM those are skips
    with the figures: there the kernel counts turns in which a thread ran nothing (its emulated vCPU
    stalled), so a few threads see two or three rounds while no wait in the queue exceeds one
    (docs/measured.md, "Many threads"). The long form runs the same threads under the kernel's own
    scheduler after, and reports the throughput (iterations) of both."""
    o = s.opts
    rounds = {f: int(flag_default(f)) for f in ("--rr-interval-ms", "--min-slice-us", "--max-round-ms")}
    bound_ms = design_round_ms(o.threads, nr_cpus(), rounds["--rr-interval-ms"], rounds["--min-slice-us"],
                               rounds["--max-round-ms"])
    with raised_limits(thread_limits(o.threads)):
        with loaded_checked(s, "threads", name="rel-manythreads") as sched:
            with Stats() as stats:
                res, out, fields = run_manythreads(o)
                counters = stats.read()
            s.check(f"threads/{o.threads}: every thread ran",
                    res.returncode == 0 and fields.get("ran") == str(o.threads),
                    f"rc={res.returncode} {out} {res.stderr.strip()[-200:]}")
            s.check(f"threads/{o.threads}: scheduler still loaded (no task waited past the watchdog)",
                    sched.loaded(), f"state={scx_state()} {sched.tail(2)}")
            round_ms, gap_max_ms = float(fields.get("gap_p50_ms", "inf")), float(fields.get("gap_max_ms", "inf"))
            gap_p99_ms = float(fields.get("gap_p99_ms", "inf"))
            limit_ms = THREADS_ROUND_MARGIN * bound_ms
            design = (f"the design's round ({o.threads} threads on {nr_cpus()} CPUs at --max-round-ms "
                      f"{rounds['--max-round-ms']}: {bound_ms:.0f} ms, +{THREADS_ROUND_MARGIN - 1:.0%} for the turns' cost)")
            # The round itself, and no more than 1% of the threads passed over (a gap past 1.1 rounds).
            # Until a wake-up from an interrupt stopped counting as the interrupted task's hand-off
            # (2026-11-27), 1 to 11 of 1,000 threads per boot were: each preempted by a kernel thread's
            # wake-up moments into its turn, its deadline renewed as a short runner's, and passed over
            # for a round (a sched_switch trace; none with --short-run-renew false, none since the fix).
            passed_over = int(fields.get("over_1.1_rounds", o.threads))
            time_bound(s, f"threads/{o.threads}: the round (the median of the threads' longest gaps) within {design}: "
                          f"{limit_ms:.0f} ms, and 99% of the threads' longest gaps within it",
                       round_ms <= limit_ms and gap_p99_ms <= limit_ms,
                       f"round (median) {round_ms:.0f} ms, p99 gap {gap_p99_ms:.0f} ms, passed over {passed_over} "
                       f"of {o.threads}; {out}")
            per_cpu_floor_round_ms = o.threads / nr_cpus() * 0.25
            if per_cpu_floor_round_ms > 5000:
                s.check(f"threads/{o.threads}: the slice floor gave way (a 250 us floor would be a "
                        f"{per_cpu_floor_round_ms / 1000:.1f} s round)", counters.get("floor_gave_way", 0) > 0,
                        f"floor_gave_way={counters.get('floor_gave_way')} round_over={counters.get('round_over')}")
            time_bound(s, f"threads/{o.threads}: the longest gap of any thread within two rounds of {design}: "
                          f"{2 * limit_ms:.0f} ms", gap_max_ms <= 2 * limit_ms,
                       f"longest gap {gap_max_ms:.0f} ms, round (median) {round_ms:.0f} ms; {out}")
            # A woken kernel thread (sched_ext's watchdog work item among them) must not wait a round:
            # its longest wake-up wait within half the watchdog (histogram bucket edge 4.2 s). One that
            # used up its slice competes as a normal task and may (its requeued wait is reported).
            kt = counters.get("lat", {}).get("kthread", {})
            kt_wait_us = kt.get("wake_max_us", 0)
            s.check(f"threads/{o.threads}: woken kernel threads' wake-ups counted", kt.get("wake_n", 0) > 0,
                    f"kthread wake n={kt.get('wake_n')}")
            time_bound(s, f"threads/{o.threads}: woken kernel threads never waited a round (longest wake-up wait < 5 s)",
                       kt_wait_us < 5_000_000,
                       f"kthread wake n={kt.get('wake_n')} p99={kt.get('wake_p99_us')}us max={kt.get('wake_max_us')}us "
                       f"requeue max={kt.get('requeue_max_us')}us")
            s.extra.append(f"{o.threads} threads ({clock_kind()} clock): longest first "
                           f"wait {fields.get('first_run_max_ms')} ms, round {fields.get('gap_p50_ms')} ms (design "
                           f"{bound_ms:.0f} ms), longest gap "
                           f"{fields.get('gap_max_ms')} ms, floor_gave_way {counters.get('floor_gave_way')} "
                           f"round_over {counters.get('round_over')}, woken kernel threads' longest wait "
                           f"{kt_wait_us} us (bucket edge), p99 {kt.get('wake_p99_us')} us")
            s.figure(f"threads {o.threads} on {nr_cpus()} CPUs for {o.threads_secs}s "
                     f"({clock_kind()} clock): scx_vrq {out} design_round_ms {bound_ms:.0f} "
                     f"floor_gave_way {counters.get('floor_gave_way')} round_over {counters.get('round_over')} "
                     f"kthread_wait_max_us {kt_wait_us} kthread_wake_p99_us {kt.get('wake_p99_us')} "
                     f"normal_requeue_max_us {counters.get('lat', {}).get('normal', {}).get('requeue_max_us')} "
                     f"normal_wake_max_us {counters.get('lat', {}).get('normal', {}).get('wake_max_us')}")
        if s.opts.form == "long":
            # The kernel's own scheduler on the same load, for the figures (never checked: its gaps at
            # this count pass the watchdog by far, which is why sched_ext has one).
            _, eevdf_out, eevdf = run_manythreads(o)
            try:
                ratio = f"{int(fields['iterations']) / int(eevdf['iterations']):.3f}"
            except (KeyError, ValueError, ZeroDivisionError):
                ratio = "n/a"
            s.extra.append(f"{o.threads} threads under the kernel's scheduler: round {eevdf.get('gap_p50_ms')} ms, "
                           f"longest gap {eevdf.get('gap_max_ms')} ms, first wait {eevdf.get('first_run_max_ms')} ms; "
                           f"iterations scx_vrq/kernel {ratio}")
            s.figure(f"threads {o.threads} on {nr_cpus()} CPUs for {o.threads_secs}s: kernel scheduler {eevdf_out}; "
                     f"iterations scx_vrq/kernel {ratio}")


def test_policy_churn(s):
    """CPU hogs switched, while running, between SCHED_OTHER, SCHED_BATCH and SCHED_IDLE and across
    every nice level (root may also lower nice). None may be left unscheduled, the scheduler loaded."""
    o = s.opts
    rng = random.Random(5)
    changes = 0
    with loaded_checked(s, "churn", name="rel-churn") as sched:
        hogs = [start_hog() for _ in range(4 * nr_cpus())]
        try:
            pids = [h.pid for h in hogs]
            policies = [os.SCHED_OTHER, os.SCHED_BATCH, os.SCHED_IDLE]
            end = time.monotonic() + o.churn_secs
            while time.monotonic() < end:
                pid = rng.choice(pids)
                os.sched_setscheduler(pid, rng.choice(policies), os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, pid, rng.randint(-20, 19))
                changes += 1
                time.sleep(0.01)
            # Back to one policy; every hog must then make progress (an idle one within --idle-bound-ms).
            for pid in pids:
                os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, pid, 0)
            stalled = stalled_tasks(pids, 5)
            s.check("churn: no task left unscheduled", not stalled, f"stalled pids {stalled}")
            s.check("churn: scheduler still loaded", sched.loaded(), f"state={scx_state()} {sched.tail(2)}")
            s.figure(f"churn: {changes} policy+nice changes on {len(pids)} hogs in {o.churn_secs}s")
        finally:
            stop_all(hogs)


def kernel_restarts(since):
    """Scheduler exits since dmesg line `since` that asked the loader for a restart: the kernel's (a
    hotplug event it could not hand to the scheduler) or scx_vrq's own (a CPU come on line that was off
    line when the topology was read)."""
    return sum(1 for _, reason in scx_exits(since) if reason in (KERNEL_RESTART_REASON, BPF_RESTART_REASON))


def hotplug_counters(stats):
    c = stats.read()
    return c.get("cpu_online", 0), c.get("cpu_offline", 0)


def hotplug_changes(cpu):
    """The CPU changes of one cycle: `cpu` off and on (a CPU taken down by hand), then every CPU but 0
    off and all back on (suspend and resume take every CPU but the boot CPU off line)."""
    others = [c for c in range(1, nr_cpus()) if os.path.exists(f"/sys/devices/system/cpu/cpu{c}/online")]
    return [("one", [(cpu, False)]), ("one", [(cpu, True)]),
            ("suspend", [(c, False) for c in reversed(others)]), ("resume", [(c, True) for c in others])]


def test_hotplug(s):
    """CPUs taken off line and back under load, in every --queue mode: one CPU (by hand), then every CPU
    but 0 (as suspend and resume do), --hotplug-cycles times. scx_vrq handles each change itself
    (ops.cpu_online / cpu_offline): it stays loaded, the kernel asks for no restart, no CPU-bound task --
    two hogs per CPU, one of them pinned to the CPU that leaves -- is left without CPU time after any
    change, and its counters count each change once."""
    o = s.opts
    cpu = hotpluggable_cpu()
    if cpu is None:
        s.check("hotplug: a CPU can go offline", False, "no hotpluggable CPU")
        return
    mark = dmesg_len()
    survived = total = 0
    for mode in o.modes:
        with loaded_checked(s, f"hotplug {mode}", "--queue", mode, name=f"rel-hotplug-{mode}") as sched:
            hogs = [start_hog() for _ in range(2 * nr_cpus() - 1)] + [start_hog(cpu=cpu)]
            offline = online = 0
            try:
                with Stats() as stats:
                    for cycle in range(1, o.hotplug_cycles + 1):
                        total += 1
                        ok = True
                        for what, changes in hotplug_changes(cpu):
                            before = kernel_restarts(mark)
                            for c, on in changes:
                                set_cpu_online(c, on)
                                online += on
                                offline += not on
                            stalled = stalled_tasks([h.pid for h in hogs], 2)
                            label = f"hotplug/{mode} cycle {cycle} {what} " + \
                                    ",".join(f"{c}{'+' if on else '-'}" for c, on in changes)
                            stayed = sched.loaded() and kernel_restarts(mark) == before
                            ok &= s.check(f"{label}: stays loaded, no restart", stayed,
                                          f"state={scx_state()} alive={sched.alive()} restarts "
                                          f"{kernel_restarts(mark) - before}" + ("" if stayed else " " + sched.tail(2)))
                            ok &= s.check(f"{label}: no task left unscheduled", not stalled, f"stalled {stalled}")
                            if not sched.loaded():
                                break
                        survived += ok
                        if not sched.loaded():
                            break
                    counted = hotplug_counters(stats)
                s.check(f"hotplug/{mode}: counters count each change once (online, offline)",
                        counted == (online, offline), f"counted {counted}, made {(online, offline)}")
            finally:
                for c in range(1, nr_cpus()):
                    set_cpu_online(c, True)
                stop_all(hogs)
    s.hotplug_survived = survived
    s.hotplug_cycles = total
    s.figure(f"hotplug: {survived}/{total} cycles (one CPU off/on, all but CPU 0 off/on) in "
             f"{','.join(o.modes)} kept scx_vrq loaded; {kernel_restarts(mark)} restarts")


def test_hotplug_storm(s):
    """CPU hotplug as fast as the machine allows (a change every 0.5 s) for --storm-secs beside a hog per
    CPU: scx_vrq stays loaded through it, with no restart, and no task is left unscheduled."""
    o = s.opts
    cpu = hotpluggable_cpu()
    if cpu is None:
        s.check("storm: a CPU can go offline", False, "no hotpluggable CPU")
        return
    mark = dmesg_len()
    with loaded_checked(s, "storm", name="rel-storm") as sched:
        hogs = [start_hog() for _ in range(nr_cpus())]
        t0 = time.monotonic()
        changes = 0
        try:
            while sched.loaded() and time.monotonic() - t0 < o.storm_secs:
                set_cpu_online(cpu, changes % 2 == 1)  # off, on, off, ...
                changes += 1
                time.sleep(0.5)
            set_cpu_online(cpu, True)
            stalled = stalled_tasks([h.pid for h in hogs], 2)
            s.check("storm: stayed loaded, no restart", sched.loaded() and kernel_restarts(mark) == 0,
                    f"state={scx_state()} alive={sched.alive()} restarts {kernel_restarts(mark)} {sched.tail(2)}")
            s.check("storm: no task left unscheduled", not stalled, f"stalled {stalled}")
            s.figure(f"hotplug storm: {changes} CPU changes every 0.5s for {time.monotonic() - t0:.0f}s, "
                     f"{kernel_restarts(mark)} restarts")
        finally:
            set_cpu_online(cpu, True)
            stop_all(hogs)


def test_reload_for_new_cpu(s):
    """A CPU off line when scx_vrq loads has no place in its queues: when it comes on line, scx_vrq asks
    for a restart and the loader reloads, reading the topology again -- once; then the CPU going off
    and on line is handled without a restart. The reload may take as long as a load takes in this
    boot (load_bound: relative to the first load measured here), beside a hog per CPU."""
    cpu = hotpluggable_cpu()
    if cpu is None:
        s.check("reload: a CPU can go offline", False, "no hotpluggable CPU")
        return
    mark = dmesg_len()
    hogs = [start_hog() for _ in range(nr_cpus())]
    set_cpu_online(cpu, False)
    try:
        with loaded_checked(s, "reload", name="rel-reload") as sched:
            set_cpu_online(cpu, True)
            t0 = time.monotonic()
            back = wait_for(lambda: kernel_restarts(mark) == 1 and sched.loaded(), load_bound(), step=0.3)
            took = time.monotonic() - t0
            s.check("reload: a CPU new since the load makes scx_vrq reload by itself, once", back,
                    f"after {took:.1f}s (bound {load_bound():.0f}s): restarts {kernel_restarts(mark)} "
                    f"state={scx_state()} alive={sched.alive()} {sched.tail(2)}")
            for on in (False, True):
                set_cpu_online(cpu, on)
            time.sleep(1)
            s.check("reload: after the reload the CPU goes off and on line with no restart",
                    sched.loaded() and kernel_restarts(mark) == 1, f"restarts {kernel_restarts(mark)}")
            stalled = stalled_tasks([h.pid for h in hogs], 2)
            s.check("reload: no task left unscheduled", not stalled, f"stalled {stalled}")
            s.figure(f"reload for a new CPU: {took:.1f}s beside {len(hogs)} hogs (first load of this boot "
                     f"{load_reference() or 0:.1f}s)")
    finally:
        set_cpu_online(cpu, True)
        stop_all(hogs)


# --- 3. faults --------------------------------------------------------------------------------------

def test_faults(s):
    """The loader killed (SIGKILL, SIGTERM) while loaded and while loading: sched_ext ends up
    `disabled`, the kernel's scheduler runs every task (background hogs keep getting CPU time), and the
    next load works. Then a second instance is refused while one runs."""
    o = s.opts
    hogs = [start_hog() for _ in range(nr_cpus())]  # one per CPU: enough to see a stuck CPU, and loads stay fast
    pids = [h.pid for h in hogs]
    try:
        # How long a load takes here, to aim the "while loading" signals inside it.
        t0 = time.monotonic()
        with loaded(name="rel-fault-probe"):
            load_s = time.monotonic() - t0
        s.extra.append(f"load takes {load_s:.1f}s")
        cases = [(sig, None) for sig in (signal.SIGKILL, signal.SIGTERM)]
        cases += [(sig, d) for d in o.fault_delays for sig in (signal.SIGKILL, signal.SIGTERM)]
        states_at_kill = []
        for sig, frac in cases:
            when = "loaded" if frac is None else f"loading ({frac * load_s:.2f}s in)"
            name = f"fault/{sig.name} while {when}"
            logf = open(os.path.join(os.environ.get("VM_OUT", "/tmp"), "rel-fault.log"), "a")
            proc = subprocess.Popen([SCX_VRQ], stdout=logf, stderr=subprocess.STDOUT)
            if frac is None:
                wait_for(lambda: scx_state() == "enabled" and scx_ops().startswith("vrq"), load_bound())
            else:
                time.sleep(frac * load_s)
            state_at_kill = scx_state()
            proc.send_signal(sig)
            rc = proc.wait(60)
            logf.close()
            disabled = wait_for(lambda: scx_state() == "disabled", 30)
            # SIGTERM is handled (clean unload, exit 0) once the handler is installed, which is
            # almost at once; before that it kills like SIGKILL.
            rc_ok = rc == -signal.SIGKILL if sig == signal.SIGKILL else rc in (0, -signal.SIGTERM)
            s.check(f"{name}: state disabled", disabled and rc_ok,
                    f"state at kill {state_at_kill}, now {scx_state()}, rc={rc}")
            stalled = stalled_tasks(pids, 2)
            s.check(f"{name}: the kernel runs every task", not stalled, f"stalled {stalled}")
            states_at_kill.append(state_at_kill)
        # Nothing a killed loader leaves behind may stop the next load (each case above also began
        # with a load after the previous kill).
        again = Scheduler(name="rel-fault-again")
        try:
            again.start()
            s.check("fault/loads again after every kill", again.loaded())
        except RuntimeError as e:
            s.check("fault/loads again after every kill", False, str(e))
        finally:
            again.stop()
        s.figure(f"faults: {len(cases)} kills (load takes {load_s:.1f}s beside {len(pids)} hogs), sched_ext state "
                 f"at the signal: {', '.join(states_at_kill)}; disabled after each")
    finally:
        stop_all(hogs)

    first = Scheduler(name="rel-second-first").start()
    try:
        res = run_cli([])
        s.check("fault/second instance refused clearly", one_clear_line(res, "another sched_ext scheduler")
                and res.returncode == 1, f"rc={res.returncode} stderr={res.stderr.strip()!r}")
        s.check("fault/first instance unharmed", first.loaded(), f"state={scx_state()}")
    finally:
        stop_checked(s, "fault/first instance", first)


# --- 4. bad input -----------------------------------------------------------------------------------

# Every flag beyond its limits or of the wrong type, and what the one error line must name.
# Limits (src/main.rs Opts): rr-interval-ms 1-1000, max-round-ms 10-5000, min-slice-us 50-100000 and
# at most rr_interval, idle-bound-ms 100-5000, yield-type 0-2, freq-threshold 0-100, migration-delay-us
# 0-10000 (needs freq-threshold), stats/monitor 0.1-3600 s.
BAD_INPUTS = [
    (["--queue", "numa"], "--queue"),
    (["--queue", "GLOBAL"], "--queue"),
    (["--queue", ""], "--queue"),
    (["--queue"], "--queue"),
    (["--rr-interval-ms", "0"], "--rr-interval-ms"),
    (["--rr-interval-ms", "1001"], "--rr-interval-ms"),
    (["--rr-interval-ms", "-1"], "'-1'"),  # clap takes -1 for a flag: the line names the value, not the flag
    (["--rr-interval-ms", "six"], "--rr-interval-ms"),
    (["--rr-interval-ms", "1.5"], "--rr-interval-ms"),
    (["--rr-interval-ms", "18446744073709551616"], "--rr-interval-ms"),
    (["--rr-interval-ms", ""], "--rr-interval-ms"),
    (["--rr-interval-ms"], "--rr-interval-ms"),
    (["--max-round-ms", "9"], "--max-round-ms"),
    (["--max-round-ms", "5001"], "--max-round-ms"),
    (["--max-round-ms", "1e3"], "--max-round-ms"),
    (["--min-slice-us", "49"], "--min-slice-us"),
    (["--min-slice-us", "100001"], "--min-slice-us"),
    (["--min-slice-us", "7000"], "--min-slice-us"),  # longer than the default 6 ms rr_interval
    (["--rr-interval-ms", "1", "--min-slice-us", "1001"], "--min-slice-us"),
    (["--min-slice-us", "x"], "--min-slice-us"),
    (["--idle-bound-ms", "99"], "--idle-bound-ms"),
    (["--idle-bound-ms", "5001"], "--idle-bound-ms"),
    (["--idle-bound-ms", "99999"], "--idle-bound-ms"),
    (["--idle-bound-ms", "2s"], "--idle-bound-ms"),
    (["--yield-type", "3"], "--yield-type"),
    (["--yield-type", "-1"], "'-1'"),
    (["--yield-type", "one"], "--yield-type"),
    (["--group-accounting", "process"], "--group-accounting"),
    (["--group-accounting", "1"], "--group-accounting"),
    (["--fork-depth-penalty=yes"], "--fork-depth-penalty"),
    (["--freq-threshold", "101"], "--freq-threshold"),
    (["--freq-threshold", "fast"], "--freq-threshold"),
    (["--migration-delay-us", "10001"], "--migration-delay-us"),
    (["--migration-delay-us", "50"], "--migration-delay-us"),  # without --freq-threshold: nothing is cold
    (["--freq-threshold", "80", "--migration-delay-us", "5ms"], "--migration-delay-us"),
    (["--sticky=1"], "--sticky"),
    (["--stats", "0"], "--stats"),
    (["--stats", "0.09"], "--stats"),
    (["--stats", "3601"], "--stats"),
    (["--stats", "-1"], "'-1'"),
    (["--stats", "nan"], "--stats"),
    (["--stats", "inf"], "--stats"),
    (["--stats", "two"], "--stats"),
    (["--monitor", "0"], "--monitor"),
    (["--monitor", "3601"], "--monitor"),
    (["--monitor", "x"], "--monitor"),
    (["--exit-dump-len", "-1"], "'-1'"),
    (["--exit-dump-len", "4294967296"], "--exit-dump-len"),
    (["--exit-dump-len", "big"], "--exit-dump-len"),
    (["--queue", "cpu", "--queue", "llc"], "--queue"),
    (["--no-such-flag"], "--no-such-flag"),
    (["--rr-interval"], "--rr-interval"),
    (["-x"], "-x"),
    (["extra-argument"], "extra-argument"),
]

# Values exactly at the limits: each must load, then unload cleanly. The short form loads them in
# three combined sets; the long form loads each on its own.
AT_LIMITS = [
    ["--rr-interval-ms", "1"], ["--rr-interval-ms", "1000"],
    ["--max-round-ms", "10"], ["--max-round-ms", "5000"],
    ["--min-slice-us", "50"], ["--rr-interval-ms", "100", "--min-slice-us", "100000"],
    ["--rr-interval-ms", "1", "--min-slice-us", "1000"],
    ["--idle-bound-ms", "100"], ["--idle-bound-ms", "5000"],
    ["--yield-type", "0"], ["--yield-type", "2"],
    ["--queue", "global"], ["--queue", "llc"], ["--queue", "cpu"],
    ["--group-accounting", "off"], ["--group-accounting", "thread"], ["--group-accounting", "session"],
    ["--fork-depth-penalty"],
    ["--freq-threshold", "0"], ["--freq-threshold", "100"],
    ["--freq-threshold", "1", "--migration-delay-us", "1"], ["--freq-threshold", "100", "--migration-delay-us", "10000"],
    ["--sticky"],
    ["--stats", "0.1"], ["--stats", "3600"],
    ["--exit-dump-len", "0"], ["--exit-dump-len", "65536"],
]
AT_LIMITS_COMBINED = [
    ["--rr-interval-ms", "1", "--min-slice-us", "1000", "--max-round-ms", "10", "--idle-bound-ms", "100",
     "--yield-type", "0", "--queue", "global", "--group-accounting", "thread", "--stats", "0.1"],
    ["--rr-interval-ms", "1000", "--min-slice-us", "100000", "--max-round-ms", "5000", "--idle-bound-ms", "5000",
     "--yield-type", "2", "--queue", "cpu", "--group-accounting", "session", "--fork-depth-penalty",
     "--stats", "3600", "--exit-dump-len", "65536"],
    ["--min-slice-us", "50", "--queue", "llc", "--group-accounting", "off", "--exit-dump-len", "0"],
    ["--freq-threshold", "100", "--migration-delay-us", "10000", "--sticky", "--queue", "cpu"],
    ["--freq-threshold", "1", "--migration-delay-us", "1"],
]


def test_bad_input(s):
    for args, needle in BAD_INPUTS:
        res = run_cli(args)
        s.bad_rejected += s.check(f"input/refused {' '.join(args)}", one_clear_line(res, needle)
                                  and res.returncode == 2, f"rc={res.returncode} stderr={res.stderr.strip()!r}")
        s.bad_inputs += 1
    res = run_cli([], user=NOBODY)
    s.check("input/not root refused", one_clear_line(res, "must be run as root") and res.returncode == 1,
            f"rc={res.returncode} stderr={res.stderr.strip()!r}")
    # A kernel without sched_ext: hide /sys/kernel/sched_ext in a private mount namespace.
    res = run_cli([], wrap=lambda c: ["unshare", "-m", "sh", "-c",
                                      'mount -t tmpfs none /sys/kernel/sched_ext && exec "$@"', "sh", *c])
    s.check("input/no sched_ext refused", one_clear_line(res, "has no sched_ext") and res.returncode == 1,
            f"rc={res.returncode} stderr={res.stderr.strip()!r}")
    # No kernel build configuration where libbpf looks for it (Debian's kernels have no /proc/config.gz):
    # hide /boot the same way. Without the preflight the load failed with a bare "Invalid argument".
    if os.path.exists("/proc/config.gz"):
        s.r.skip("input/no kernel config refused", "this kernel has /proc/config.gz")
    else:
        res = run_cli([], wrap=lambda c: ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /boot && exec "$@"',
                                          "sh", *c])
        s.check("input/no kernel config refused", one_clear_line(res, "build configuration is not readable")
                and res.returncode == 1, f"rc={res.returncode} stderr={res.stderr.strip()!r}")

    sets = AT_LIMITS if s.opts.limits_each else AT_LIMITS_COMBINED
    for args in sets:
        name = f"input/at limit {' '.join(args)}"
        sched = Scheduler(*args, name="rel-limit")
        try:
            sched.start()
            ok = s.check(f"{name}: loads", sched.loaded(), f"state={scx_state()}")
        except RuntimeError as e:
            ok = s.check(f"{name}: loads", False, str(e))
        finally:
            ok &= stop_checked(s, name, sched)
        s.limits_accepted += ok


# --- 5. security ------------------------------------------------------------------------------------

def paths_under(root, recursive=True):
    if not recursive:
        return [os.path.join(root, n) for n in os.listdir(root)]
    return [os.path.join(d, n) for d, dirs, files in os.walk(root) for n in dirs + files]


def world_writable(roots, shallow=()):
    """Every path under `roots` (links not followed) that any user may write, sticky dirs excepted;
    only the top level of the `shallow` ones (in the guest /tmp is the host's, over 9p: slow to walk)."""
    found = set()
    candidates = [p for r in roots for p in paths_under(r)] + [p for r in shallow for p in paths_under(r, False)]
    for p in candidates:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if st.st_mode & 0o002 and not st.st_mode & 0o1000 and not os.path.islink(p):
            found.add(p)
    return found


def test_security(s):
    """Only root loads or controls scx_vrq: the stats socket refuses other users, the loader ignores
    their signals, and it creates nothing world-writable."""
    roots = [d for d in ("/run", "/dev/shm", "/sys/fs/bpf") if os.path.isdir(d)]
    shallow = [d for d in ("/tmp", "/var/tmp") if os.path.isdir(d)]
    before = world_writable(roots, shallow)
    with loaded_checked(s, "security", name="rel-security") as sched:
        st = os.stat(STATS_SOCK)
        s.check("security/stats socket owned by root, not writable by others",
                st.st_uid == 0 and not st.st_mode & 0o022, f"mode {oct(st.st_mode & 0o7777)} uid {st.st_uid}")
        probe = (f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({STATS_SOCK!r}); "
                 "s.sendall(b'{\"req\": \"stats\", \"args\": {\"target\": \"top\"}}\\n'); print('CONNECTED')")
        res = subprocess.run(as_user(NOBODY, [SYSTEM_PYTHON, "-c", probe]), capture_output=True, text=True,
                             timeout=60)
        s.check("security/nobody cannot use the stats socket", "CONNECTED" not in res.stdout
                and "PermissionError" in res.stderr, f"rc={res.returncode} {res.stderr.strip()[-120:]}")
        res = subprocess.run(as_user(NOBODY, ["kill", "-TERM", str(sched.proc.pid)]), capture_output=True, text=True)
        time.sleep(1)
        s.check("security/nobody cannot stop it", res.returncode != 0 and sched.loaded(),
                f"kill rc={res.returncode} loaded={sched.loaded()}")
        res = subprocess.run(as_user(NOBODY, ["sh", "-c", "echo 0 > /sys/kernel/sched_ext/switch_all"]),
                             capture_output=True, text=True)
        s.check("security/nobody cannot write sched_ext's sysfs", res.returncode != 0 and sched.loaded(),
                f"rc={res.returncode}")
        res = run_cli(["--queue", "cpu"], user=NOBODY)
        s.check("security/nobody cannot load another", res.returncode == 1 and sched.loaded(),
                f"rc={res.returncode} {res.stderr.strip()!r}")
        created = sorted(world_writable(roots, shallow) - before)
        s.check("security/nothing world-writable created", not created, f"{created[:5]}")
        for d in ("/run/scx", "/run/scx/root"):
            if os.path.exists(d):
                m = os.stat(d).st_mode
                s.check(f"security/{d} not writable by others", not m & 0o022, oct(m & 0o7777))


# What the unprivileged user runs against a root task: CPU hogs, a fork storm, and hogs that keep
# switching themselves between SCHED_OTHER, SCHED_BATCH, SCHED_IDLE and raising their nice (all an
# unprivileged user may do: nice only goes up without CAP_SYS_NICE).
NOBODY_LOAD = r"""
import os, random, sys, time
hogs, storms, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
policies = [getattr(os, "SCHED_" + p.upper()) for p in sys.argv[4].split(",")]
end = time.monotonic() + secs
kids = []
for i in range(hogs):
    pid = os.fork()
    if pid == 0:
        rng = random.Random(i)
        n = 0
        while time.monotonic() < end:
            n += 1
            if i % 2 and n % 20000 == 0:   # every other hog plays policy and nice games
                try:
                    os.sched_setscheduler(0, rng.choice(policies), os.sched_param(0))
                    os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + 1))
                except OSError:
                    pass
        os._exit(0)
    kids.append(pid)
for i in range(storms):
    pid = os.fork()
    if pid == 0:
        while time.monotonic() < end:
            c = os.fork()
            if c == 0:
                os._exit(0)
            os.waitpid(c, 0)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
"""

# The root task: a nice-0 CPU-bound loop recording the longest gap between two of its iterations
# (time it spent off the CPU) and its CPU time.
ROOT_TASK = r"""
import sys, time
secs = float(sys.argv[1])
t0 = last = time.monotonic()
c0 = time.process_time()
gap = 0.0
while last - t0 < secs:
    now = time.monotonic()
    gap = max(gap, now - last)
    last = now
print(f"gap_ms {gap * 1000:.1f} cpu {(time.process_time() - c0) / (last - t0):.4f}")
"""


def user_cpu(uid):
    """{pid: CPU time (ns)} of the live processes of `uid`."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                with open(f"/proc/{pid}/schedstat") as f:
                    out[int(pid)] = int(f.read().split()[0])
        except OSError:
            pass
    return out


def test_starvation(s):
    """An unprivileged user's hogs, fork storm and SCHED_IDLE/nice games against one root nice-0 task.
    The bound (docs/design.md, "SCHED_IDLE bound"): the root task waits at most one round of its queue
    -- runnable tasks per CPU x rr_interval, at most --max-round-ms (1 s) while the slice can shrink --
    and gets at least about its fair share, CPUs / runnable tasks. Checked: its longest gap within
    --max-round-ms (timed: time_bound), its CPU share > 1/4 of the fair share."""
    o = s.opts
    max_round_ms = int(flag_default("--max-round-ms"))
    hogs, storms = 8 * nr_cpus(), nr_cpus()
    load = None
    with loaded_checked(s, "starve", name="rel-starve") as sched:
        try:
            load = subprocess.Popen(as_user(NOBODY, [SYSTEM_PYTHON, "-c", NOBODY_LOAD, str(hogs), str(storms),
                                                     str(o.starve_secs * 3 + 30), o.starve_policies]),
                                    start_new_session=True)
            # Let the load build up: every hog and storm started (on the instruction clock the guest's
            # time jumps ahead while its Python waits for the host's files), then a moment more.
            wait_for(lambda: len(user_cpu(NOBODY)) > hogs + storms, 120)
            time.sleep(3)
            nobody_before = user_cpu(NOBODY)
            res = subprocess.run([SYSTEM_PYTHON, "-c", ROOT_TASK, str(o.starve_secs)], capture_output=True,
                                 text=True, timeout=o.starve_secs * 10 + 60)
            f = res.stdout.split()
            gap_ms, share = float(f[1]), float(f[3])
            fair = nr_cpus() / (hogs + storms + 1)
            time_bound(s, f"starve/root task's longest wait within one round, at most --max-round-ms ({max_round_ms} ms)",
                       gap_ms <= max_round_ms, f"gap {gap_ms:.0f} ms ({clock_kind()} clock)")
            s.check("starve/root task gets > 1/4 of its fair share", share > fair / 4,
                    f"share {share:.3f} CPU, fair {fair:.3f}")
            still_loaded = s.check("starve/scheduler still loaded", sched.loaded(),
                                   f"state={scx_state()} {sched.tail(2)}")
            # An ejection hands the rest of the measurement to the kernel's scheduler: say so with the figures.
            under = "under scx_vrq" if still_loaded else "PARTLY UNDER THE KERNEL'S SCHEDULER (ejected)"
            # What nobody's long-lived tasks (the hogs) got over the same time, each.
            after = user_cpu(NOBODY)
            hog_shares = sorted((after[p] - t) / 1e9 / o.starve_secs
                                for p, t in nobody_before.items() if p in after)
            nobody_share = sum(hog_shares)
            # The bound means something only with the load there throughout: nobody's lasting tasks got
            # more than half a CPU (with group accounting the root task, alone in its session, gets about
            # a whole CPU and they the rest).
            s.check("starve/nobody's load ran beside the root task (its lasting tasks got > 0.5 CPU)",
                    len(hog_shares) >= hogs and nobody_share > 0.5,
                    f"{len(hog_shares)} lasting tasks got {nobody_share:.2f} CPUs")
            s.figure(f"starvation: root nice-0 task beside {hogs} nobody hogs (half switching among "
                     f"{o.starve_policies} and raising nice) + {storms} fork storms on {nr_cpus()} CPUs for "
                     f"{o.starve_secs}s, {under}, {clock_kind()} clock: longest gap {gap_ms:.0f} ms "
                     f"(bound {max_round_ms} ms), CPU {share:.3f} (fair {fair:.3f}); "
                     f"nobody's {len(hog_shares)} lasting tasks got {nobody_share:.2f} CPUs "
                     f"(each: {' '.join(f'{x:.2f}' for x in hog_shares)})")
            s.extra.append(f"root task beside nobody's load ({under}): longest gap {gap_ms:.0f} ms, "
                           f"CPU {share:.3f} (fair {fair:.3f})")
        finally:
            kill_groups([load])


# ------------------------------------------------------------------------------------------------------

TESTS = [  # (name, function, restarts expected)
    ("stress", test_ci_stress, False),
    ("stressors", test_stressors, False),
    ("threads", test_many_threads, False),
    ("churn", test_policy_churn, False),
    ("hotplug", test_hotplug, False),
    ("storm", test_hotplug_storm, False),
    ("reload", test_reload_for_new_cpu, True),
    ("faults", test_faults, False),
    ("input", test_bad_input, False),
    ("security", test_security, False),
    ("starve", test_starvation, False),
]
# The tests whose checks are waits in guest time (--part timed; the others are --part untimed).
TIMED = ("threads", "starve")
PARTS = {"all": "reliability", "untimed": "reliability", "timed": "reliability-timed"}  # part -> closing line


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    form = ap.add_mutually_exclusive_group()
    form.add_argument("--short", action="store_const", dest="form", const="short", help="CI form (default)")
    form.add_argument("--long", action="store_const", dest="form", const="long", help="the full form")
    ap.add_argument("--part", choices=PARTS, default="all",
                    help=f"the timed tests ({','.join(TIMED)}), the others, or all (see above)")
    ap.add_argument("--only", help=f"comma-separated tests: {','.join(t[0] for t in TESTS)}")
    for key, val in FORMS["short"].items():
        flag = "--" + key.replace("_", "-")
        if isinstance(val, bool):
            ap.add_argument(flag, type=lambda v: v in ("1", "yes", "true"), default=None)
        else:
            ap.add_argument(flag, type=type(val), default=None)
    opts = ap.parse_args()
    opts.form = opts.form or "short"
    for key, val in FORMS[opts.form].items():
        if getattr(opts, key) is None:
            setattr(opts, key, val)
    opts.modes = opts.modes.split(",")
    opts.stressor_modes = opts.stressor_modes.split(",")
    opts.fault_delays = [float(d) for d in opts.fault_delays.split(",") if d]
    opts.only = set(opts.only.split(",")) if opts.only else None

    s = Suite(opts)
    log(f"reliability ({opts.form}, part {opts.part}): {os.uname().release}, {nr_cpus()} CPUs, "
        f"{clock_kind()} clock; scx_vrq = {SCX_VRQ}")
    t0 = time.monotonic()
    for name, fn, restarts in TESTS:
        if opts.part != "all" and (name in TIMED) != (opts.part == "timed"):
            log(f"--- {name}: in the {'timed' if name in TIMED else 'untimed'} part (--part), run on its own")
            continue
        run_test(s, name, fn, restarts)

    stress = ", ".join(f"{m} {ok}/{n}" for m, (ok, n) in s.stress_ok.items())
    stress_ok = sum(ok for ok, _ in s.stress_ok.values())
    stress_runs = sum(n for _, n in s.stress_ok.values())
    stressors = ", ".join(f"{st} {ok}/{n}" for st, (ok, n) in s.stressor_ok.items())
    s.check("no ejections in the whole suite", not s.ejections, "; ".join(s.ejections[:5]))
    s.figure(f"reliability ({opts.form}, part {opts.part}, {nr_cpus()} CPUs, {clock_kind()} clock, "
             f"{time.monotonic() - t0:.0f}s): "
             f"stress {stress_ok}/{stress_runs} runs ok ({stress}); stressors {stressors}; "
             f"hotplug {s.hotplug_survived}/{s.hotplug_cycles} cycles survived; "
             f"{s.bad_rejected}/{s.bad_inputs} bad inputs rejected; {s.limits_accepted} at-limit loads ok; "
             f"{'; '.join(s.extra)}; ejections {len(s.ejections)}")
    s.r.finish(PARTS[opts.part])


if __name__ == "__main__":
    main()
