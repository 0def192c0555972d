"""The results table (docs/measured.md) and the README's results summary, generated from committed
bench reports (`bench readme-table`).

A committed list of rows (bench/readme-table-rows.json) names, for each row, a report folder under
docs/results/, a workload, a metric (the workload's primary metric, one of its latency percentiles,
or another metric its runs record, e.g. reqlat's requests/s) and the scheduler the row is about. For
each row the table gives that scheduler's ratio to EEVDF in the same boot -- the Hodges-Lehmann
ratio with its interval and verdict, computed from the report's raw runs (results.jsonl) with the
same code as the report itself (vrqbench/stats.py: compare), and checked against the report's
summary.json wherever that holds the metric -- the instrument the report names in machine.json
(clock, QEMU version, vCPUs), the number of runs, the goal the row is measured against (from the row
list) and every peer of that report with its own ratio, and how many changes of the defaults the
scheduler it measured predates (the row list's "defaults_changes", judged by git ancestry).

The summary (one row per measure of the row list's "summary") applies the inclusion rule written in
docs/measured.md ("The inclusion rule"): of the rows of that measure on its instrument whose runs are at
least "min_runs" of each, those whose scheduler predates the fewest changes of the defaults; every such
boot counts, none is picked. The table is written between its markers in docs/measured.md, the summary
between its own in README.md, and nothing else in either file is touched; `--check` only compares, and
exits 1 when a file is not what the reports give (a hand-edited number, or a report regenerated
since)."""

import difflib
import json
import os
import re
import subprocess

from vrqbench import builds
from vrqbench import schedulers as schedmod
from vrqbench.report import BASELINE
from vrqbench.stats import NO_VERDICT, compare
from vrqbench.workloads import WORKLOADS

BEGIN = "<!-- results-table:begin -->"
END = "<!-- results-table:end -->"
SUMMARY_BEGIN = "<!-- results-summary:begin -->"
SUMMARY_END = "<!-- results-summary:end -->"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(REPO, "docs", "results")
ROWS = os.path.join(REPO, "bench", "readme-table-rows.json")
README = os.path.join(REPO, "README.md")
MEASURED = os.path.join(REPO, "docs", "measured.md")
MIN_RUNS = 6  # the inclusion rule's runs of each, unless the row list says otherwise ("min_runs")
SETUP = {"cpus": 2, "topology": "1:2:1"}  # the machine every summary boot ran on (the row list's "setup")
SUMMARY_WIDTH = 120  # the longest line of the summary
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


class _Defaults:
    """Which of the row list's changes of the defaults ("defaults_changes", oldest first) a scheduler's
    commit predates: a change is behind a commit when git finds it among the commit's ancestors."""

    def __init__(self, spec, repo=REPO):
        self.changes = [c["commit"] for c in spec.get("defaults_changes", [])]
        self.repo = repo
        self.cache = {}
        # every commit that changed the default knob values (src/knob-defaults.txt's history) is a change
        # of the defaults, listed or not
        listed = {self._full(c) for c in self.changes}
        self.changes += [c[:12] for c in builds.knob_default_changes(repo) if c not in listed]

    def _full(self, commit):
        r = subprocess.run(["git", "-C", self.repo, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}"],
                           capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else commit

    def _behind(self, change, commit):
        key = (change, commit)
        if key not in self.cache:
            try:
                r = subprocess.run(["git", "-C", self.repo, "merge-base", "--is-ancestor", change, commit],
                                   capture_output=True, text=True)
            except OSError as e:
                raise TableError(f"git: {e}")
            if r.returncode not in (0, 1):
                raise TableError(f"git cannot place {commit} against the change {change}: {r.stderr.strip()}")
            self.cache[key] = r.returncode == 0
        return self.cache[key]

    def since(self, commit):
        """The changes the commit predates (a list, oldest first); None when no commit is recorded."""
        if not commit:
            return None
        return [c for c in self.changes if not self._behind(c, commit)]


class _Reports:
    """The reports the row list names, each read once, and each row's judgement."""

    def __init__(self, spec, results):
        self.spec, self.results, self.reports, self.build_records = spec, results, {}, {}
        self.defaults = _Defaults(spec)

    def get(self, name):
        if name not in self.reports:
            self.reports[name] = _read_report(self.results, name)
        return self.reports[name]

    def built(self, name):
        """The commit of the scx_vrq defaults (vrq-llc) the report measured: the report's own record (its
        builds.json or the loader's startup line in its logs, bench/vrqbench/builds.py) where it has one, else
        the row list's "reports". Refused: a record that disagrees with the row list, a build from a dirty
        tree (its commit does not vouch for its sources), knob values other than the committed defaults'
        (src/knob-defaults.txt) where the commit predates no change of the defaults."""
        listed = self.spec.get("reports", {}).get(name, {}).get("scx_vrq")
        own = self.builds(name).get("vrq-llc", {})
        commit = own.get("commit")
        if not commit:
            return listed
        if listed and not (commit.startswith(listed) or listed.startswith(commit)):
            raise TableError(f"{name}: the row list says scx_vrq {listed}, the report's own record {commit}")
        if own.get("dirty"):
            raise TableError(f"{name}: scx_vrq {commit} was built from a dirty tree: its commit does not say what "
                             f"it ran; list the report under \"excluded\" with that reason")
        knobs, defaults = own.get("knobs") or {}, builds.knob_defaults(self.defaults.repo)
        # a knob one side does not have is a knob added (at the behaviour before it) or removed since
        if any(knobs[k] != defaults[k] for k in knobs.keys() & defaults.keys()) and not self.defaults.since(commit):
            raise TableError(f"{name}: vrq-llc ran knob values other than src/knob-defaults.txt's, yet its commit "
                             f"{commit} predates no change of the defaults")
        return commit[:7] if not listed else listed

    def builds(self, name):
        if name not in self.build_records:
            folder = os.path.join(self.results, name)
            self.build_records[name] = builds.report_builds(folder, self.get(name)["plan"])
        return self.build_records[name]

    def row(self, row):
        """(report, higher, judgement) of one row."""
        rep = self.get(row["report"])
        higher = higher_is_better(row["workload"], row["metric"], row)
        return rep, higher, judged(rep, row["workload"], row["metric"], row.get("scheduler", "vrq-llc"), higher)


def setup_of(rep, workload):
    """(instrument, vCPUs, topology, cgroup layout) of a report's workload: the machine it ran on."""
    inst = rep["plan"].get("instruments", {}).get(workload)
    m = rep["machine"].get("instruments", {}).get(inst, {}) if inst else {}
    return inst, m.get("cpus"), m.get("topology"), rep["plan"].get("cgroups")


def _measure_rows(spec, measure):
    return [i for i, row in enumerate(spec["rows"])
            if row["workload"] == measure["workload"] and row["metric"] == measure["metric"]
            and row.get("scheduler", "vrq-llc") == "vrq-llc"]


def summary_boots(spec, reps):
    """For each measure of the summary: (measure, every row index of it on its setup with enough runs
    as (index, report, judgement, changes since), the counted ones), by the inclusion rule."""
    min_runs = spec.get("min_runs", MIN_RUNS)
    setup = spec.get("setup", SETUP)
    out = []
    for measure in spec.get("summary", []):
        want = (measure["instrument"], setup["cpus"], setup["topology"], None)
        boots = []
        for i in _measure_rows(spec, measure):
            row = spec["rows"][i]
            rep, higher, c = reps.row(row)
            if setup_of(rep, row["workload"]) != want or min(c["runs"]) < min_runs:
                continue
            since = reps.defaults.since(reps.built(row["report"]))
            if since is None:
                raise TableError(f"{row['report']}: no scx_vrq commit recorded (the row list's \"reports\"), "
                                 f"so the inclusion rule cannot place it")
            boots.append((i, rep, c, since))
        newest = min((len(b[3]) for b in boots), default=None)
        out.append((measure, boots, [b for b in boots if len(b[3]) == newest]))
    return out


def uncovered(spec, results=RESULTS):
    """The boots the inclusion rule would count that the row list leaves out: every report under
    `results` that ran scx_vrq's defaults (vrq-llc) and EEVDF on a summary measure's workload, on its
    instrument and setup, with at least min_runs ok runs of each, and has no row for that measure and
    is not in the row list's "excluded". As (report, workload, metric), sorted."""
    min_runs = spec.get("min_runs", MIN_RUNS)
    setup = spec.get("setup", SETUP)
    have = {(r["report"], r["workload"], r["metric"]) for r in spec["rows"]
            if r.get("scheduler", "vrq-llc") == "vrq-llc"}
    excluded = spec.get("excluded", {})
    missing = []
    for name in sorted(os.listdir(results)) if os.path.isdir(results) else []:
        if name in excluded:
            continue
        try:
            with open(os.path.join(results, name, "plan.json")) as f:
                plan = json.load(f)
        except (OSError, ValueError):
            continue
        if not {BASELINE, "vrq-llc"} <= set(plan.get("schedulers", [])) or plan.get("runs", 0) < min_runs:
            continue
        wanted = [m for m in spec.get("summary", []) if m["workload"] in plan.get("workloads", [])
                  and (name, m["workload"], m["metric"]) not in have]
        if not wanted:
            continue
        rep = _read_report(results, name)
        for m in wanted:
            if setup_of(rep, m["workload"]) != (m["instrument"], setup["cpus"], setup["topology"], None):
                continue
            base, vals = (runs_of(rep, m["workload"], s, m["metric"]) for s in (BASELINE, "vrq-llc"))
            if min(len(base), len(vals)) >= min_runs:
                missing.append((name, m["workload"], m["metric"]))
    return missing


def build(spec, results=RESULTS, link_base=REPO, reps=None):
    """The table's markdown (without the markers) for the row list `spec`; report links relative to
    `link_base` (the folder of the file it goes into)."""
    reps = reps or _Reports(spec, results)
    counted = {b[0] for _, _, cs in summary_boots(spec, reps) for b in cs}
    lines = ["| measure | instrument | runs | scx_vrq ÷ EEVDF [interval] | verdict | goal | peers ÷ EEVDF | report "
             "| defaults changed since |",
             "|---|---|---|---|---|---|---|---|---|"]
    tally = {}
    for i, row in enumerate(spec["rows"]):
        name, w, metric = row["report"], row["workload"], row["metric"]
        rep, higher, c = reps.row(row)
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
        built = reps.built(name)
        since = reps.defaults.since(built) if reps.defaults.changes else None
        since_text = "—" if since is None else str(len(since))
        if i in counted:
            since_text += ", in the summary"
        link = os.path.relpath(os.path.join(reps.results, name, "report.md"), link_base)
        lines.append(f"| {label} | {instrument_text(rep, w)} | {runs} | {fmt_interval(c)} | {reading(c, higher)} | "
                     f"{row.get('goal', '—')} | {', '.join(peers) or 'none in this report'} | "
                     f"[{name}]({link})" + (f", scx_vrq {built}" if built else "") + f" | {since_text} |")
    t = {k: tally.get(k, 0) for k in ("better", "worse", "level", "n/a better", "n/a worse", "n/a overlap")}
    lines += ["", f"{len(spec['rows'])} rows. Verdicts (95% interval): {t['better']} better, {t['worse']} worse, "
                  f"{t['level']} level. Too few runs for a verdict (n/a): "
                  f"{t['n/a better'] + t['n/a worse'] + t['n/a overlap']}; in {t['n/a better']} of them every "
                  f"scx_vrq run was better than all of EEVDF's, in {t['n/a worse']} worse than all of them, in "
                  f"{t['n/a overlap']} the runs overlap."]
    return "\n".join(lines) + "\n"


def _span(cs):
    """`0.477 [0.467, 0.491]` for one judgement; for several `0.455–0.477 [0.439, 0.491]`: the range of
    their ratios and, in brackets, the span of their intervals (the lowest bound to the highest)."""
    if len(cs) == 1:
        c = cs[0]
        return f"{c['ratio']:.3f} [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"
    lo, hi = min(c["ratio"] for c in cs), max(c["ratio"] for c in cs)
    return (f"{lo:.3f}–{hi:.3f} [{min(c['ci'][0] for c in cs):.3f}, {max(c['ci'][1] for c in cs):.3f}]")


def _verdicts(cs):
    """The boots' verdicts: `**better**` for one boot, `**better** in all` for several that agree, `mixed: 2
    worse, 1 level` where they do not."""
    counts = {}
    for c in cs:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    if len(counts) == 1:
        v = next(iter(counts))
        return (f"**{v}**" if v in ("better", "worse") else v) + (" in all" if len(cs) > 1 else "")
    order = ("better", "worse", "level")
    return "mixed: " + ", ".join(f"{counts[v]} {v}" for v in order if v in counts)


def _best_peer(boots, measure, higher):
    """The peer that did best against scx_vrq directly in the counted boots: `cosmos 0.867 [0.80, 0.97]`
    (the peer's runs ÷ scx_vrq's, Hodges-Lehmann ratio and 95% interval); `—` when no peer ran in them."""
    best = None
    for _, rep, _, _ in boots:
        w, metric = measure["workload"], measure["metric"]
        for p in peers_of(rep):
            c = compare(runs_of(rep, w, "vrq-llc", metric), runs_of(rep, w, p, metric), higher)
            if c["ratio"] is None:
                continue
            if best is None or (c["ratio"] > best[1]["ratio"] if higher else c["ratio"] < best[1]["ratio"]):
                best = (p, c)
    if best is None:
        return "—"
    p, c = best
    ci = f" [{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]" if c["ci"] else ""
    return f"{p} {c['ratio']:.3f}{ci}"


def summary(spec, results=RESULTS, reps=None):
    """The README's summary (without the markers): one row per measure of the row list's "summary"."""
    reps = reps or _Reports(spec, results)
    min_runs = spec.get("min_runs", MIN_RUNS)
    lines = ["| measure | instrument | boots | scx_vrq ÷ EEVDF [interval] | verdict | best peer ÷ scx_vrq | since |",
             "|---|---|---|---|---|---|---|"]
    for measure, boots, counted in summary_boots(spec, reps):
        higher = higher_is_better(measure["workload"], measure["metric"], measure)
        name = measure["label"]
        inst = {"instructions": "instr.", "parallel": "parallel"}.get(measure["instrument"], measure["instrument"])
        if not counted:
            line = f"| {name} | {inst} | 0 | — | no boot of ≥ {min_runs} runs each | — | — |"
        else:
            cs = [b[2] for b in counted]
            verdict = measure.get("verdict") or _verdicts(cs)
            line = (f"| {name} | {inst} | {len(counted)} | {_span(cs)} | {verdict} | "
                    f"{_best_peer(counted, measure, higher)} | {len(counted[0][3])} |")
        if len(line) > SUMMARY_WIDTH:
            raise TableError(f"the summary's row for {measure['label']} is {len(line)} characters, more than "
                             f"{SUMMARY_WIDTH}: shorten its label")
        lines.append(line)
    return "\n".join(lines) + "\n"


def splice(text, table, begin=BEGIN, end=END):
    """Text with everything between the markers replaced by `table`."""
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < 0 or e < b or text.count(begin) != 1 or text.count(end) != 1:
        raise TableError(f"the file needs exactly one {begin} and one {end}, in that order")
    return text[:b + len(begin)] + "\n" + table + text[e:]


def _targets(readme, measured):
    """(file, the marker pairs it must hold): the repository's README holds the summary and
    docs/measured.md the table; any other file given holds whichever pairs it has."""
    if measured is None and os.path.abspath(readme) == README:
        return [(readme, "summary"), (MEASURED, "table")]
    files = [(readme, None)] + ([(measured, None)] if measured else [])
    return files


def run(readme=README, rows=ROWS, results=RESULTS, check=False, out=print, measured=None):
    """Write the summary into the README and the table into docs/measured.md (or into whichever of the
    two marker pairs a given `readme` holds), or with `check` only compare. Returns the exit status: 0
    when the files hold (or now hold) what the reports give, 1 when --check found one differs, 2 on a
    row the reports cannot give or a file without its markers."""
    changed = []
    try:
        spec = load_rows(rows)
        left_out = uncovered(spec, results)
        if left_out:
            raise TableError("the inclusion rule counts boots the row list leaves out (add their rows, or the "
                             "report to \"excluded\" with its reason): "
                             + "; ".join(f"{n} {w} {m}" for n, w, m in left_out))
        reps = _Reports(spec, results)
        for path, kind in _targets(readme, measured):
            with open(path) as f:
                text = f.read()
            new = text
            kinds = [kind] if kind else [k for k, b in (("table", BEGIN), ("summary", SUMMARY_BEGIN)) if b in text]
            if not kinds:
                raise TableError(f"{path} holds neither {BEGIN} nor {SUMMARY_BEGIN}")
            for k in kinds:
                if k == "table":
                    new = splice(new, build(spec, results, os.path.dirname(os.path.abspath(path)), reps))
                else:
                    new = splice(new, summary(spec, results, reps), SUMMARY_BEGIN, SUMMARY_END)
            changed.append((path, text, new))
    except (TableError, OSError, ValueError) as e:
        out(f"bench: readme-table: {e}")
        return 2
    rc = 0
    for path, text, new in changed:
        if check:
            if new == text:
                out(f"bench: readme-table: {path} holds what the reports give")
                continue
            out(f"bench: readme-table: {path}'s results differ from what the reports give "
                f"(bench/bench readme-table rewrites them):")
            out("".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), f"{path} (committed)",
                                             f"{path} (from the reports)", n=0)).rstrip("\n"))
            rc = 1
        elif new != text:
            with open(path, "w") as f:
                f.write(new)
            out(f"bench: readme-table: {path} rewritten between its markers")
        else:
            out(f"bench: readme-table: {path} already holds what the reports give")
    return rc
