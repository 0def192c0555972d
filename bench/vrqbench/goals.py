"""`bench goals DIR...`: the request/worker goals judged point by point, from saved results.

The goals are a scheduler's ratios to EEVDF in the same boot on every point of the request/worker surface
(reqlat-WORK-wN-m1|mcpu) and on schbench: wake-up p99 at most 0.5x, request p99 at most 1.0x,
requests/s at least 0.98x (1.0x on the parallel instrument, whose requests/s follow real parallel speed);
and no peer better than it on wake-up p99 and request p99 at once.

A goal is judged by the ratio's 95% interval (stats.compare), never by the ratio alone:
  met      the whole interval is on the goal's side of its line,
  not met  the whole interval is on the other side,
  on line  the interval holds the line (the runs cannot tell),
  n/a      too few runs for an interval (a verdict needs 4 of each).
A peer is better on both at once only when its runs against the scheduler's, in the same boot, give
intervals below 1 for both latencies (the peer's ÷ the scheduler's; `better` by the bench's own rule).

Several reports may be named: a point measured in more than one is judged from the last named, and its row
says which. A folder named as DIR=NAME judges the scheduler NAME there instead of --scheduler: a variant
that was, in that folder's boot, what the defaults are now (`vrq-handoff-slice` before the rule became the
default), so that one table can gather the newest runs of today's defaults; its row names the variant.
Nothing is random: the same results give the same table."""

import os

from vrqbench import report
from vrqbench.schedulers import peer_of
from vrqbench.stats import compare
from vrqbench.workloads import WORKLOAD_GROUPS

BASELINE = "eevdf"
DEFAULT_SCHEDULER = "vrq-llc"
# (metric, label, goal line, higher is better)
GOALS = (("wake_p99_us", "wake-up p99", 0.5, False),
         ("req_p99_us", "request p99", 1.0, False),
         ("rps", "requests/s", 0.98, True))
# requests/s on the parallel instrument: real parallel speed, held to EEVDF's own
PARALLEL_RPS_GOAL = 1.0
BOTH = ("wake_p99_us", "req_p99_us")
POINT_ORDER = WORKLOAD_GROUPS["reqlat-surface"] + ["reqlat"] + WORKLOAD_GROUPS["schbench"]


def judge(c, line, higher):
    """A goal's state from a comparison with EEVDF (stats.compare) and the goal's line."""
    if not c or c["ratio"] is None or c["verdict"] in (None, "n/a") or not c["ci"]:
        return "n/a"
    lo, hi = c["ci"]
    if higher:
        return "met" if lo >= line else "not met" if hi < line else "on line"
    return "met" if hi <= line else "not met" if lo > line else "on line"


def _runs(recs, workload, scheduler, metric):
    return [r["metrics"].get(metric) for r in recs
            if r["workload"] == workload and r["scheduler"] == scheduler and r.get("status") == "ok"]


def judge_point(plan, recs, workload, scheduler):
    """One point of one report: {"goals": {metric: (comparison, line, state)}, "peers": {peer: {metric:
    comparison}}, "better_on_both": [peers]}, or None when the scheduler or EEVDF has no run there."""
    if not _runs(recs, workload, scheduler, "req_p99_us") or not _runs(recs, workload, BASELINE, "req_p99_us"):
        return None
    parallel = report.instrument_of(plan, workload) == "parallel"
    goals = {}
    for metric, _, line, higher in GOALS:
        if metric == "rps" and parallel:
            line = PARALLEL_RPS_GOAL
        c = compare(_runs(recs, workload, BASELINE, metric), _runs(recs, workload, scheduler, metric), higher)
        goals[metric] = (c, line, judge(c, line, higher))
    peers, both = {}, []
    for s in plan["schedulers"]:
        if not peer_of(s):
            continue
        cs = {m: compare(_runs(recs, workload, scheduler, m), _runs(recs, workload, s, m), False) for m in BOTH}
        if all(c["ratio"] is None for c in cs.values()):
            continue
        peers[s] = cs
        if all(c["verdict"] == "better" for c in cs.values()):
            both.append(s)
    return {"goals": goals, "peers": peers, "better_on_both": both}


def folder_and_scheduler(entry, scheduler=DEFAULT_SCHEDULER):
    """(folder, scheduler judged there) from a DIR or DIR=NAME argument."""
    d, sep, name = entry.rpartition("=")
    if sep and d and name and "/" not in name and not os.path.exists(entry):
        return d, name
    return entry, scheduler


def collect(dirs, scheduler=DEFAULT_SCHEDULER):
    """{point: (dir, judged point)} over the reports in `dirs` (DIR or DIR=NAME), the last named winning;
    a judged point holds the scheduler judged in it under "scheduler"."""
    points = {}
    for entry in dirs:
        d, judged = folder_and_scheduler(entry, scheduler)
        plan, recs, _ = report.load(d)
        for w in plan["workloads"]:
            if w not in POINT_ORDER:
                continue
            j = judge_point(plan, recs, w, judged)
            if j is not None:
                points[w] = (d, {**j, "scheduler": judged})
    return {w: points[w] for w in POINT_ORDER if w in points}


def _fmt(c, state):
    ci = f" [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]" if c.get("ci") else ""
    ratio = "—" if c.get("ratio") is None else f"{c['ratio']:.3f}"
    return f"{ratio}{ci} **{state}**" if state in ("met", "not met") else f"{ratio}{ci} {state}"


def markdown(points, scheduler=DEFAULT_SCHEDULER):
    """The goal table, one row per point, and a count of each state per goal."""
    head = " | ".join(f"{label} (goal {'≥' if higher else '≤'} {line:g}×)" for _, label, line, higher in GOALS)
    lines = [f"{scheduler} ÷ EEVDF in the same boot, Hodges–Lehmann ratio [95% interval] and the goal's state "
             f"(met / not met: the whole interval on one side of the goal's line; on line: it holds the line). "
             f"Peers better on both: the peer ÷ {scheduler}, wake-up p99 / request p99, both intervals below 1.\n",
             f"| point | {head} | peers better on both | report |",
             "|---|" + "---|" * len(GOALS) + "---|---|"]
    if any(j.get("scheduler", scheduler) != scheduler for _, j in points.values()):
        lines[0] = lines[0].rstrip("\n") + (f" A report followed by a variant's name is judged by that variant "
                                             f"(DIR=NAME: what {scheduler}'s defaults are now) instead.\n")
    counts = {m: {} for m, *_ in GOALS}
    with_peer = []
    for w, (d, j) in points.items():
        cells = []
        for metric, *_ in GOALS:
            c, line, state = j["goals"][metric]
            counts[metric][state] = counts[metric].get(state, 0) + 1
            shown = _fmt(c, state)
            if metric == "rps" and line != GOALS[2][2]:
                shown += f" (goal ≥ {line:g}×, parallel)"
            cells.append(shown)
        peers = ", ".join(f"{p} ({j['peers'][p]['wake_p99_us']['ratio']:.3f} / "
                          f"{j['peers'][p]['req_p99_us']['ratio']:.3f})" for p in j["better_on_both"]) or "none"
        if j["better_on_both"]:
            with_peer.append(w)
        if not j["peers"]:
            peers = "no peer run"
        folder = os.path.basename(os.path.normpath(d))
        if j.get("scheduler", scheduler) != scheduler:
            folder += f" ({j['scheduler']})"
        lines.append(f"| {w} | " + " | ".join(cells) + f" | {peers} | {folder} |")
    lines.append("")
    order = ("met", "on line", "not met", "n/a")
    for metric, label, *_ in GOALS:
        lines.append(f"- {label}: " + ", ".join(f"{counts[metric].get(s, 0)} {s}" for s in order)
                     + f" of {len(points)} points")
    with_runs = [w for w, (_, j) in points.items() if j["peers"]]
    lines.append(f"- a peer better on both at once at {len(with_peer)} of the {len(with_runs)} points with peer runs"
                 + (f" ({', '.join(with_peer)})" if with_peer else ""))
    return "\n".join(lines) + "\n"


def run(dirs, scheduler=DEFAULT_SCHEDULER, out=None):
    points = collect(dirs, scheduler)
    if not points:
        raise SystemExit(f"bench goals: no request/worker point with runs of both the judged scheduler and eevdf in "
                         f"{', '.join(dirs)}")
    text = markdown(points, scheduler)
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        print(text, end="")
    return 0
