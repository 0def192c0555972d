"""What one scheduling event costs (issue 47): each BPF callback's calls per second and mean run time
per call, and the share of all CPU time spent in the scheduler's BPF programs, on a fixed set of
workloads, for EEVDF, the floor (bench/src/floor: the least a sched_ext scheduler does), scx_vrq's
defaults and, with --mechanisms, scx_vrq with each mechanism's knob turned the other way.

    bench cost run [--mechanisms] [--runs N] [--out DIR] [--schedulers x,y] [--workloads a,b] [--no-build]
    bench cost report DIR

`run` is `bench run` with the cost preset: every workload on the instruction clock (guest time counts
instructions, so a callback's run time per call repeats run to run and host load cannot move it), the
full-size pipe (100,000 round trips) and hackbench (4 groups x 200 loops), 3 s of requests and of the
sleeper, a code base of 6 units, and writes DIR/cost.md beside the usual report. The figures come from the
kernel's BPF statistics (kernel.bpf_stats_enabled: run_time_ns and run_cnt of each program, read from
the loader's file descriptors around every step; guest.py), the step's guest seconds and /proc/schedstat.
The statistics themselves add two clock reads per call, counted in every scheduler's figure alike.
"""

import argparse
import os
import sys

from vrqbench import report as reportmod
from vrqbench.schedulers import SCHEDULERS, peer_of, peer_state
from vrqbench.stats import compare
from vrqbench.workloads import WORKLOADS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The fixed workloads: a pipe's ping-pong, issue 45's shortest requests, hackbench's messaging, a build,
# and an otherwise idle machine with one periodic waker (its own 1 ms timer, no other load).
WORKLOAD_SET = ["pipe", "reqlat-50us-w2-m1", "messaging", "build-100", "sleeper-1ms-h0-w0-timer"]
WORKLOAD_LABELS = {"pipe": "pipe ping-pong", "reqlat-50us-w2-m1": "50 µs requests, 2 workers per CPU",
                   "messaging": "hackbench -P", "build-100": "make -j(CPUs)",
                   "sleeper-1ms-h0-w0-timer": "idle, one 1 ms timer sleeper"}
SECS = 3          # the timed loads' length (reqlat, the sleeper)
BUILD_UNITS = 6   # C files in the build's code base

# EEVDF, the floor, scx_vrq's defaults and BFS (--profile bfs: every mechanism beyond BFS off, one queue)
BASE_SCHEDULERS = ["eevdf", "floor", "vrq-llc", "vrq-bfs"]
DEFAULTS = "vrq-llc"
# the other queue layouts (--queue), shown beside the defaults when named: what grows with the queues
QUEUE_MODES = ["vrq-global", "vrq-cpu"]
# each knob that gates a mechanism, turned the other way from its default (scheduler, the flags, what)
MECHANISMS = [
    ("vrq-global", "--queue global", "one queue for all CPUs (default: one per LLC)"),
    ("vrq-target-off", "--target-latency-ms 0", "target latency off"),
    ("vrq-short-run-off", "--short-run-us 0", "short runners not latency waiters"),
    ("vrq-short-run-renew-off", "--short-run-renew false", "no slice renewal at a short run's end"),
    ("vrq-under-share-off", "--under-share-first false", "under-share wake-ups not first"),
    ("vrq-wake-credit-50", "--wake-credit 50", "wake-up credit on (default off)"),
    ("vrq-sync-handoff-off", "--sync-handoff false", "no sync hand-off"),
    ("vrq-vfork-handoff-off", "--vfork-handoff false", "no vfork hand-off"),
    ("vrq-preempt-local-off", "--preempt-local false", "preempt the latest deadline's CPU (BFS)"),
    ("vrq-handoff-slice-off", "--handoff-slice false", "a hand-off does not keep the turn"),
    ("vrq-group-off", "--group-accounting off", "no group accounting (default: session)"),
    ("vrq-stay-behind-kthread-off", "--stay-behind-kthread false", "not kept behind a kernel thread"),
    ("vrq-depth", "--fork-depth-penalty", "fork-depth penalty on (default off)"),
    ("vrq-sticky", "--sticky", "sticky tasks on (default off)"),
    ("vrq-freq-50", "--freq-threshold 50", "frequency-aware selection on (default off)"),
]
PEERS = ["bpfland", "lavd", "flash", "cosmos", "beerland", "pandemonium", "p2dq", "cake"]

# the callbacks a table shows by name (the rest are summed as "other"); the hot ones first
CALLBACKS = ["select_cpu", "enqueue", "dispatch", "running", "stopping", "runnable", "quiescent", "tick"]


def installed_peers():
    return [p for p in PEERS if peer_state(REPO, peer_of(p)) == "pinned"]


def callback(prog):
    """A BPF program's callback: its name after the scheduler's prefix (vrq_select_cpu, floor_enqueue,
    bpfland_running -> select_cpu, enqueue, running). The kernel keeps 15 characters of a program's name
    (floor_select_cpu reads floor_select_cp), so a cut name matches the callback it begins."""
    rest = prog.split("_", 1)[1] if "_" in prog else prog
    for cb in CALLBACKS:
        if rest == cb or (len(prog) == 15 and len(rest) >= 3 and cb.startswith(rest)):
            return cb
    return "other"


def per_step(rec, ncpu):
    """One step's figures: per callback (calls, ns), BPF ns in all, guest seconds, context switches, and
    the CPU time the machine had: guest seconds x `ncpu` parallel CPUs."""
    cbs = {}
    for prog, p in (rec.get("bpf") or {}).items():
        c = cbs.setdefault(callback(prog), [0, 0.0])
        c[0] += p["run_cnt"]
        c[1] += (p["ns_per_op"] or 0) * p["run_cnt"]
    return {"callbacks": cbs, "bpf_ns": sum(v[1] for v in cbs.values()), "secs": rec["seconds"],
            "switches": (rec.get("schedstat") or {}).get("sched_count"), "cpu_ns": rec["seconds"] * ncpu * 1e9}


def summarize(plan, recs, ncpu):
    """(workload, scheduler) -> the figures over its ok runs: per callback calls/s and ns/call, BPF share
    of CPU time, BPF ns per context switch, the primary metric's mean and its ratio to EEVDF."""
    runs = {}
    for r in recs:
        if r.get("status") == "ok":
            runs.setdefault((r["workload"], r["scheduler"]), []).append(r)
    out = {}
    for w in plan["workloads"]:
        primary, higher = WORKLOADS[w]["primary"], WORKLOADS[w]["higher"]
        base = [r["metrics"][primary] for r in runs.get((w, "eevdf"), [])]
        defaults = [r["metrics"][primary] for r in runs.get((w, DEFAULTS), [])]
        for s in plan["schedulers"]:
            rs = runs.get((w, s), [])
            if not rs:
                continue
            steps = [per_step(r, ncpu) for r in rs]
            secs = sum(x["secs"] for x in steps)
            cbs = {}
            for x in steps:
                for cb, (n, ns) in x["callbacks"].items():
                    c = cbs.setdefault(cb, [0, 0.0])
                    c[0] += n
                    c[1] += ns
            bpf_ns = sum(x["bpf_ns"] for x in steps)
            switches = sum(x["switches"] or 0 for x in steps)
            values = [r["metrics"][primary] for r in rs]
            per_call = {cb: {"per_s": n / secs, "ns": ns / n} for cb, (n, ns) in cbs.items() if n}
            per_run_ns = {cb: [x["callbacks"][cb][1] / x["callbacks"][cb][0] for x in steps
                               if x["callbacks"].get(cb, [0])[0]] for cb in cbs}
            rps = [r["metrics"].get("rps") for r in rs]
            out[(w, s)] = {
                "runs": len(rs), "metric": primary, "higher": higher, "mean": sum(values) / len(values),
                # requests/s beside a request load's primary metric (its latency): the measure
                "rps": sum(rps) / len(rps) if None not in rps else None,
                "rps_vs_eevdf": compare([r["metrics"].get("rps") for r in runs.get((w, "eevdf"), [])], rps, True)
                if s != "eevdf" and None not in rps else None,
                "rps_vs_defaults": compare([r["metrics"].get("rps") for r in runs.get((w, DEFAULTS), [])], rps, True)
                if s not in ("eevdf", DEFAULTS) and None not in rps else None,
                "vs_eevdf": compare(base, values, higher) if s != "eevdf" else None,
                "vs_defaults": compare(defaults, values, higher) if s not in ("eevdf", DEFAULTS) else None,
                "callbacks": per_call,
                # the spread of ns/call over the runs: (max - min) / mean, per callback
                "spread": {cb: (max(v) - min(v)) / (sum(v) / len(v)) for cb, v in per_run_ns.items() if v},
                "bpf_share": bpf_ns / sum(x["cpu_ns"] for x in steps),
                "bpf_ns_per_switch": bpf_ns / switches if switches else None,
                "switches_per_s": switches / secs,
                # per unit of the workload's work, where it has one: a request, a pipe round trip
                "bpf_ns_per_op": per_op(w, bpf_ns / secs, values, rps),
            }
    return out


# the workloads whose work comes in units: how many per second of guest time, from the runs' metrics
def per_op(workload, bpf_ns_per_s, values, rps):
    """BPF ns per unit of work: per request (requests/s), per pipe round trip (µs per round trip), else
    None."""
    if None not in rps:
        rate = sum(rps) / len(rps)
    elif WORKLOADS[workload]["primary"] == "usecs_per_op":
        rate = 1e6 / (sum(values) / len(values))
    else:
        return None
    return bpf_ns_per_s / rate if rate else None


def _ns(v):
    return "—" if v is None else f"{v:,.0f}"


def _rate(v):
    if v is None:
        return "—"
    return f"{v / 1000:.1f}k" if v >= 1000 else f"{v:.0f}"


def _ratio(c):
    if not c or c.get("ratio") is None:
        return "—"
    lo, hi = c["ci"] or (None, None)
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None else ""
    return f"{c['ratio']:.3f}{ci}"


def workload_table(plan, summary, w, schedulers):
    """One workload: per scheduler the metric, its ratio to EEVDF, BPF's share of CPU time, BPF ns per
    context switch, and per callback calls/s and ns per call."""
    cbs = [cb for cb in CALLBACKS + ["other"]
           if any(cb in summary.get((w, s), {}).get("callbacks", {}) for s in schedulers)]
    with_rps = any(summary.get((w, s), {}).get("rps") is not None for s in schedulers)
    head = (["scheduler", f"{summary[(w, 'eevdf')]['metric'] if (w, 'eevdf') in summary else 'metric'}",
             "÷ EEVDF [interval]"] + (["requests/s", "÷ EEVDF [interval]"] if with_rps else []) + ["switches/s", "BPF % of CPU", "BPF ns per switch", "BPF ns per op"]
            + [f"{cb} calls/s · ns" for cb in cbs])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in schedulers:
        e = summary.get((w, s))
        if not e:
            continue
        cells = [s, f"{e['mean']:.2f}", _ratio(e["vs_eevdf"]) if s != "eevdf" else "1"]
        if with_rps:
            cells += [f"{e['rps']:.0f}" if e["rps"] is not None else "—", _ratio(e["rps_vs_eevdf"]) if s != "eevdf" else "1"]
        cells += [_rate(e["switches_per_s"]),
                 f"{100 * e['bpf_share']:.2f}" if s != "eevdf" else "—", _ns(e["bpf_ns_per_switch"])
                 if s != "eevdf" else "—", _ns(e["bpf_ns_per_op"]) if s != "eevdf" else "—"]
        for cb in cbs:
            c = e["callbacks"].get(cb)
            cells.append(f"{_rate(c['per_s'])} · {_ns(c['ns'])}" if c else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def mechanism_table(plan, summary):
    """Each mechanism's knob turned the other way against the defaults: per workload the change of BPF
    ns per context switch and the metric's ratio to the defaults; then per workload each callback's ns
    per call."""
    mechs = [m for m in MECHANISMS if m[0] in plan["schedulers"]] + (
        [("vrq-bfs", "--profile bfs", "every mechanism beyond BFS off")] if "vrq-bfs" in plan["schedulers"] else [])
    ws = [w for w in plan["workloads"] if (w, DEFAULTS) in summary]
    if not mechs or not ws:
        return []
    d = {w: summary[(w, DEFAULTS)] for w in ws}
    unit = {w: "bpf_ns_per_op" if d[w]["bpf_ns_per_op"] is not None else "bpf_ns_per_switch" for w in ws}
    lines = ["| flags | what | " + " | ".join(
        f"{w}: BPF ns per {'op' if unit[w] == 'bpf_ns_per_op' else 'switch'} (Δ) · metric ÷ defaults" for w in ws) + " |",
             "|---|---|" + "---|" * len(ws)]
    lines.append(f"| (defaults) | {DEFAULTS} | " + " | ".join(_ns(d[w][unit[w]]) for w in ws) + " |")
    for s, flags, what in mechs:
        cells = []
        for w in ws:
            e = summary.get((w, s))
            if not e or e[unit[w]] is None or d[w][unit[w]] is None:
                cells.append("—")
                continue
            delta = e[unit[w]] - d[w][unit[w]]
            rps = f" · requests/s {_ratio(e['rps_vs_defaults'])}" if e.get("rps_vs_defaults") else ""
            cells.append(f"{_ns(e[unit[w]])} ({delta:+,.0f}) · {_ratio(e['vs_defaults'])}{rps}")
        lines.append(f"| `{flags}` | {what} | " + " | ".join(cells) + " |")
    hot = ["select_cpu", "enqueue", "dispatch", "running", "stopping", "runnable", "quiescent"]
    for w in ws:
        lines += ["", f"Callbacks' ns per call in {w} (Δ against the defaults):", "",
                  "| flags | " + " | ".join(hot) + " |", "|---|" + "---|" * len(hot)]
        base = summary[(w, DEFAULTS)]["callbacks"]
        lines.append("| (defaults) | " + " | ".join(_ns((base.get(cb) or {}).get("ns")) for cb in hot) + " |")
        for s, flags, _ in mechs:
            e = summary.get((w, s))
            if not e:
                continue
            cells = []
            for cb in hot:
                x, y = (e["callbacks"].get(cb) or {}).get("ns"), (base.get(cb) or {}).get("ns")
                cells.append(f"{_ns(x)} ({x - y:+,.0f})" if x is not None and y is not None else _ns(x))
            lines.append(f"| `{flags}` | " + " | ".join(cells) + " |")
    return lines


def markdown(out):
    plan, recs, machine = reportmod.load(out)
    # On the instruction clock the vCPUs take turns on one instruction stream, and guest time advances with
    # it: the machine's CPU time is its guest time, whatever the vCPUs (workloads.parallel_cpus)
    clocked = all(reportmod.instrument_of(plan, w) == "instructions" for w in plan["workloads"])
    ncpu = 1 if clocked else (machine.get("cpus") or (plan.get("vm") or {}).get("cpus") or 1)
    summary = summarize(plan, recs, ncpu)
    scheds = plan["schedulers"]
    main = [s for s in scheds if s in BASE_SCHEDULERS or s in QUEUE_MODES or peer_of(s)]
    lines = ["# The cost of one scheduling event", ""]
    lines += reportmod.instrument_lines(plan, machine)
    missing = [p for p in PEERS if p not in scheds]
    cpu_time = ("their guest time: on the instruction clock the vCPUs take turns on one instruction stream and "
                "guest time advances with it, so a callback's ns are the instructions the machine executed during "
                "it" if clocked else f"their guest time × {ncpu} CPUs")
    lines += ["", f"{plan['runs']} run(s) of each workload per scheduler, interleaved in one boot. Per callback: calls "
              "per second of guest time and mean run time per call in ns (the kernel's BPF statistics, summed over "
              f"the runs); BPF % of CPU: all the scheduler's BPF run time over the CPU time the steps had ({cpu_time}); "
              "BPF ns per switch: that run time over the context switches /proc/schedstat counted; per op: over the "
              "requests (requests/s) or pipe round trips. The metric is the "
              "workload's primary one (mean of the runs), its ratio to EEVDF's runs in the same boot with the "
              "rank-sum interval (bench/README.md)."]
    if missing:
        lines += ["", "Peers not measured (not installed in this checkout's .bench-cache/peers, or not named): "
                  + ", ".join(missing) + "."]
    for w in plan["workloads"]:
        lines += ["", f"## {w}: {WORKLOAD_LABELS.get(w, WORKLOADS[w]['desc'])}", ""]
        lines += workload_table(plan, summary, w, main)
    mech = mechanism_table(plan, summary)
    if mech:
        lines += ["", "## Per mechanism: each knob the other way, against the defaults", "",
                  f"BPF ns per unit of work (a request, a pipe round trip; else per context switch) of the variant, "
                  f"its difference from {DEFAULTS}'s in the same boot, "
                  f"and the workload's metric (and requests/s) ÷ {DEFAULTS}'s with its interval.", ""]
        lines += mech
    spread = max((v for e in summary.values() for cb, v in e["spread"].items()
                  if cb in CALLBACKS[:5] and e["runs"] > 1), default=None)
    if spread is not None:
        lines += ["", f"Largest spread of a hot callback's ns per call over one scheduler's runs of one workload "
                  f"((max − min) / mean): {100 * spread:.1f}%."]
    return "\n".join(lines) + "\n", summary


def write_report(out):
    text, _ = markdown(out)
    with open(os.path.join(out, "cost.md"), "w") as f:
        f.write(text)
    return os.path.join(out, "cost.md")


def cmd_cost(a):
    from vrqbench import cli  # the runner's entry; imported here, as cli imports this module
    if a.action == "report":
        if not os.path.exists(os.path.join(a.dir or "", "plan.json")):
            sys.exit(f"bench cost: {a.dir} is not a bench results folder (no plan.json)")
        print(f"bench cost: {write_report(os.path.abspath(a.dir))}")
        return 0
    scheds = a.schedulers.split(",") if a.schedulers else (
        BASE_SCHEDULERS + installed_peers() + ([m[0] for m in MECHANISMS] if a.mechanisms else []))
    workloads = a.workloads or ",".join(WORKLOAD_SET)
    argv = ["run", "--instrument", "instructions", "--workloads", workloads, "--schedulers", ",".join(scheds),
            "--runs", str(a.runs), "--secs", str(SECS), "--build-units", str(BUILD_UNITS), "--cpus", str(a.cpus),
            "--timeout", str(a.timeout)] + (["--out", a.out] if a.out else []) + (["--no-build"] if a.no_build else [])
    if a.topology:
        argv += ["--topology", a.topology]
    args = cli.parser().parse_args(argv)
    if not args.out:
        import time
        args.out = os.path.join(REPO, "bench-results", "cost-" + time.strftime("%Y%m%d-%H%M%S"))
    rc = cli.cmd_run(args)
    if os.path.exists(os.path.join(args.out, "results.jsonl")):
        print(f"bench cost: {write_report(os.path.abspath(args.out))}", flush=True)
    return rc


def add_parser(sub):
    c = sub.add_parser("cost", help="what one scheduling event costs: BPF run time per callback and call, calls/s, "
                       "BPF's share of CPU time, on fixed workloads (bench/vrqbench/cost.py)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("action", choices=["run", "report"])
    c.add_argument("dir", nargs="?", help="report: the results folder")
    c.add_argument("--mechanisms", action="store_true", help="also each mechanism's knob the other way")
    c.add_argument("--runs", type=int, default=3, help="runs per workload and scheduler (default 3)")
    c.add_argument("--schedulers", help="comma-separated (bench list; eevdf always added); default EEVDF, the "
                   "floor, scx_vrq's defaults and --profile bfs, and each peer installed")
    c.add_argument("--workloads", help="comma-separated; default " + ",".join(WORKLOAD_SET))
    c.add_argument("--out", help="results folder (an existing one is resumed)")
    c.add_argument("--cpus", type=int, default=2, help="VM vCPUs (default 2)")
    c.add_argument("--topology", help="VM sockets:cores:threads (default 1:CPUS:1)")
    c.add_argument("--timeout", type=int, default=36000, help="time limit of the VM boot in seconds")
    c.add_argument("--no-build", action="store_true", help="use target/release/scx_vrq as it is")
    c.set_defaults(fn=cmd_cost)
