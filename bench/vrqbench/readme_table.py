"""The README's results table, generated from committed bench reports (`bench readme-table`).

A committed list of rows (bench/readme-table-rows.json) names, for each row, a report folder under
docs/results/, a workload, a metric (the workload's primary metric, one of its latency percentiles,
or another metric its runs record, e.g. reqlat's requests/s) and the scheduler the row is about. For
each row the table gives that scheduler's ratio to EEVDF in the same boot -- the Hodges-Lehmann
ratio with its interval and verdict, computed from the report's raw runs (results.jsonl) with the
same code as the report itself (vrqbench/stats.py: compare), and checked against the report's
summary.json wherever that holds the metric -- the instrument the report names in machine.json
(clock, QEMU version, vCPUs), the number of runs, the goal the row is measured against (from the row
list) and every peer of that report with its own ratio. The table is written between the markers
below in README.md and nothing else in the file is touched; `--check` only compares, and exits 1
when the README's table is not what the reports give (a hand-edited number, or a report regenerated
since)."""

import difflib
import json
import os
import re

from vrqbench import schedulers as schedmod
from vrqbench.report import BASELINE
from vrqbench.stats import NO_VERDICT, compare
from vrqbench.workloads import WORKLOADS

BEGIN = "<!-- results-table:begin -->"
END = "<!-- results-table:end -->"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(REPO, "docs", "results")
ROWS = os.path.join(REPO, "bench", "readme-table-rows.json")
README = os.path.join(REPO, "README.md")
# how a metric is named in the table when the row does not name it
METRIC_NAMES = {"wake_p50_us": "wake-up p50", "wake_p99_us": "wake-up p99", "wake_p999_us": "wake-up p99.9",
                "req_p50_us": "request p50", "req_p99_us": "request p99", "req_p999_us": "request p99.9",
                "p50_us": "p50", "p99_us": "p99", "p999_us": "p99.9", "rps": "requests/s",
                "usecs_per_op": "µs per round trip", "rate": "rate", "seconds": "time"}
TOLERANCE = 1e-9  # summary.json against the recomputation: the same floats, up to JSON's round trip


class TableError(Exception):
    """A row the reports cannot give: a missing folder, workload, metric or scheduler, or a summary.json
    that disagrees with its own results.jsonl."""


def load_rows(path=ROWS):
    with open(path) as f:
        spec = json.load(f)
    if not isinstance(spec.get("rows"), list) or not spec["rows"]:
        raise TableError(f"{path}: no rows")
    for i, row in enumerate(spec["rows"]):
        missing = [k for k in ("report", "workload", "metric") if k not in row]
        if missing:
            raise TableError(f"{path}: row {i + 1} has no {', '.join(missing)}")
    return spec


def _read_report(results, name):
    folder = os.path.join(results, name)
    try:
        with open(os.path.join(folder, "plan.json")) as f:
            plan = json.load(f)
        with open(os.path.join(folder, "machine.json")) as f:
            machine = json.load(f)
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        recs = []
        with open(os.path.join(folder, "results.jsonl")) as f:
            for line in f:
                if line.strip():
                    recs.append(json.loads(line))
    except (OSError, ValueError) as e:
        raise TableError(f"{name}: {e}")
    return {"name": name, "plan": plan, "machine": machine, "summary": summary, "recs": recs}


def higher_is_better(workload, metric, row):
    """The metric's direction: the workload's for its primary metric, lower for its latency
    percentiles, and for any other metric what the row says (`"higher": true|false`)."""
    spec = WORKLOADS.get(workload)
    if spec is None:
        raise TableError(f"unknown workload {workload!r}")
    if "higher" in row:
        return bool(row["higher"])
    if metric == spec["primary"]:
        return spec["higher"]
    if metric in spec.get("percentiles", ()):
        return False
    raise TableError(f"{workload} {metric}: neither its primary metric nor a percentile; the row must say "
                     f"\"higher\": true or false")


def runs_of(rep, workload, scheduler, metric):
    """The metric's value in each of the scheduler's ok runs of the workload, in run order."""
    recs = sorted((r for r in rep["recs"] if r["workload"] == workload and r["scheduler"] == scheduler
                   and r["status"] == "ok"), key=lambda r: r["run"])
    return [v for v in ((r.get("metrics") or {}).get(metric) for r in recs) if v is not None]


def _summary_entry(rep, workload, metric, scheduler):
    """The report's own judgement of the metric for the scheduler, where summary.json holds it."""
    ws = rep["summary"].get("summary", {}).get(workload)
    if not ws:
        return None
    if metric == ws.get("primary"):
        return ws["schedulers"].get(scheduler)
    p = ws.get("percentiles", {}).get(metric)
    return p["schedulers"].get(scheduler) if p else None


def _same(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def judged(rep, workload, metric, scheduler, higher):
    """stats.compare of the scheduler's runs against EEVDF's, checked against summary.json."""
    if workload not in rep["plan"].get("workloads", []):
        raise TableError(f"{rep['name']}: no workload {workload}")
    if scheduler not in rep["plan"].get("schedulers", []):
        raise TableError(f"{rep['name']}: no scheduler {scheduler}")
    base, vals = runs_of(rep, workload, BASELINE, metric), runs_of(rep, workload, scheduler, metric)
    if not base or not vals:
        raise TableError(f"{rep['name']}: {workload} has no runs with {metric} for {BASELINE} and {scheduler}")
    c = compare(base, vals, higher)
    if c["ratio"] is None:
        raise TableError(f"{rep['name']}: {workload} {metric}: no ratio to EEVDF (a run that is not positive)")
    saved = _summary_entry(rep, workload, metric, scheduler)
    if saved is not None:
        for mine, theirs in (("ratio", "ratio_to_eevdf"), ("ci", "ci"), ("ci_level", "ci_level"),
                             ("verdict", "verdict")):
            if not _same(c[mine], saved.get(theirs)):
                raise TableError(f"{rep['name']}: summary.json's {workload} {metric} {scheduler} {theirs} "
                                 f"{saved.get(theirs)!r} is not what its results.jsonl gives ({c[mine]!r}): "
                                 f"regenerate it with bench/bench report")
    c["pairs"] = [v / b for b in base for v in vals]
    return c


def instrument_text(rep, workload):
    """`instruction clock, QEMU 10.0.2, 2 vCPUs` from the report's machine.json."""
    inst = rep["plan"].get("instruments", {}).get(workload)
    m = rep["machine"].get("instruments", {}).get(inst) if inst else None
    if not m:
        raise TableError(f"{rep['name']}: machine.json records no instrument for {workload}")
    name = {"instructions": "instruction clock", "parallel": "parallel, host clock"}.get(inst, inst)
    qemu = re.search(r"version (\S+)", m.get("qemu", ""))
    parts = [name]
    if qemu:
        parts.append(f"QEMU {qemu.group(1)}")
    if m.get("cpus"):
        parts.append(f"{m['cpus']} vCPUs")
    return ", ".join(parts)


def peers_of(rep):
    """The report's peers (the scx project's schedulers), in the plan's order."""
    return [s for s in rep["plan"].get("schedulers", []) if schedmod.peer_of(s)]


def fmt_interval(c):
    """`0.478 [90%: 0.459, 0.480]`, `0.919 [0.886, 0.959]`: the report's own form, the confidence shown
    only when it is not the 95% of a verdict."""
    text = f"{c['ratio']:.3f}"
    if c["ci"] is not None:
        shown = "" if c["ci_level"] >= 0.95 else f"{100 * c['ci_level']:.0f}%: "
        text += f" [{shown}{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"
    return text


def _side(c, higher):
    """For a ratio without a verdict: "better" or "worse" when every pairwise ratio (every run of the
    scheduler against every run of EEVDF) lies on that side of 1, else "overlap"."""
    pairs = c["pairs"]
    if all(p < 1 for p in pairs) or all(p > 1 for p in pairs):
        return "better" if (pairs[0] > 1) == higher else "worse"
    return "overlap"


def reading(c, higher):
    """The verdict (`**better**`, `**worse**`, `level`), and for n/a what the runs themselves show:
    `n/a: every run better than all of EEVDF's` (the widest interval, every pairwise ratio, on one side
    of 1) or `n/a: runs overlap EEVDF's`."""
    v = c["verdict"]
    if v == "level":
        return "level"
    if v != NO_VERDICT:
        return f"**{v}**"
    side = _side(c, higher)
    return "n/a: runs overlap EEVDF's" if side == "overlap" else f"n/a: every run {side} than all of EEVDF's"


def _tally(c, higher):
    return c["verdict"] if c["verdict"] != NO_VERDICT else "n/a " + _side(c, higher)


def build(spec, results=RESULTS, link_base=REPO):
    """The table's markdown (without the markers) for the row list `spec`; report links relative to
    `link_base` (the README's folder)."""
    reports = {}
    lines = ["| measure | instrument | runs | scx_vrq ÷ EEVDF [interval] | verdict | goal | peers ÷ EEVDF | report |",
             "|---|---|---|---|---|---|---|---|"]
    tally = {}
    for row in spec["rows"]:
        name, w, metric = row["report"], row["workload"], row["metric"]
        sched = row.get("scheduler", "vrq-llc")
        if name not in reports:
            reports[name] = _read_report(results, name)
        rep = reports[name]
        higher = higher_is_better(w, metric, row)
        c = judged(rep, w, metric, sched, higher)
        k = _tally(c, higher)
        tally[k] = tally.get(k, 0) + 1
        m, n = c["runs"]
        runs = f"{n} each" if m == n else f"EEVDF {m}, scx_vrq {n}"
        peers = []
        for p in peers_of(rep):
            pc = judged(rep, w, metric, p, higher)
            peers.append(f"{p} {pc['ratio']:.2f}")
        label = row.get("label") or f"{w} {METRIC_NAMES.get(metric, metric)}"
        label += f" ({'higher' if higher else 'lower'} is better)"
        built = spec.get("reports", {}).get(name, {}).get("scx_vrq")
        link = os.path.relpath(os.path.join(results, name, "report.md"), link_base)
        lines.append(f"| {label} | {instrument_text(rep, w)} | {runs} | {fmt_interval(c)} | {reading(c, higher)} | "
                     f"{row.get('goal', '—')} | {', '.join(peers) or 'none in this report'} | "
                     f"[{name}]({link})" + (f", scx_vrq {built}" if built else "") + " |")
    t = {k: tally.get(k, 0) for k in ("better", "worse", "level", "n/a better", "n/a worse", "n/a overlap")}
    lines += ["", f"{len(spec['rows'])} rows. Verdicts (95% interval): {t['better']} better, {t['worse']} worse, "
                  f"{t['level']} level. Too few runs for a verdict (n/a): "
                  f"{t['n/a better'] + t['n/a worse'] + t['n/a overlap']}; in {t['n/a better']} of them every "
                  f"scx_vrq run was better than all of EEVDF's, in {t['n/a worse']} worse than all of them, in "
                  f"{t['n/a overlap']} the runs overlap."]
    return "\n".join(lines) + "\n"


def splice(text, table):
    """README text with everything between the markers replaced by `table`."""
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise TableError(f"the README needs exactly one {BEGIN} and one {END}, in that order")
    return text[:b + len(BEGIN)] + "\n" + table + text[e:]


def run(readme=README, rows=ROWS, results=RESULTS, check=False, out=print):
    """Write the table into `readme` (or with `check` only compare). Returns the exit status: 0 when
    the README holds (or now holds) what the reports give, 1 when --check found it differs, 2 on a
    row the reports cannot give or a README without its markers."""
    try:
        table = build(load_rows(rows), results, os.path.dirname(os.path.abspath(readme)))
        with open(readme) as f:
            text = f.read()
        new = splice(text, table)
    except (TableError, OSError, ValueError) as e:
        out(f"bench: readme-table: {e}")
        return 2
    if check:
        if new == text:
            out(f"bench: readme-table: {readme} holds the table the reports give")
            return 0
        out(f"bench: readme-table: {readme}'s results table differs from what the reports give "
            f"(bench/bench readme-table rewrites it):")
        out("".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README (committed)",
                                         "README (from the reports)", n=0)).rstrip("\n"))
        return 1
    if new != text:
        with open(readme, "w") as f:
            f.write(new)
        out(f"bench: readme-table: {readme} rewritten between its markers")
    else:
        out(f"bench: readme-table: {readme} already holds the table the reports give")
    return 0
