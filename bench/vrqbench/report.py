"""Turn a bench run's results.jsonl into report.md (tables laid out like VRQ's), summary.json and
one PNG per workload. `bench report DIR` runs this alone, on saved results.

Every ratio to EEVDF is the Hodges-Lehmann ratio with its distribution-free 95% confidence interval
(vrqbench/stats.py: compare): better or worse only when the interval excludes 1, level when it holds
it, no verdict (n/a) when the runs are too few for the interval to exclude 1. Nothing random: the
same results.jsonl gives the same report.md and summary.json byte for byte."""

import json
import os
import sys

from vrqbench import builds, service
from vrqbench.stats import CONFIDENCE, METHOD, MIN_RUNS, NO_VERDICT, compare, ratio, summarize, trimmed_mean
from vrqbench.workloads import BUILD_FOUR, WORKLOAD_GROUPS, WORKLOADS

SCHEDSTAT_COLS = ("sched_count", "sched_goidle", "ttwu_count", "ttwu_local", "run_delay", "pcount")
BASELINE = "eevdf"
UNRECORDED = "unrecorded"  # results saved before the bench recorded instruments


def load(out):
    recs = []
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    machine = {}
    if os.path.exists(os.path.join(out, "machine.json")):
        with open(os.path.join(out, "machine.json")) as f:
            machine = json.load(f)
    return plan, recs, machine


def instrument_of(plan, workload):
    return plan.get("instruments", {}).get(workload, UNRECORDED)


def _judged(values_by_scheduler, higher):
    """Per scheduler, for one metric of one workload: the trimmed mean, the ratio of trimmed means to
    EEVDF's (VRQ's figure, `ratio_of_means`) and the comparison with EEVDF's runs (stats.compare):
    the Hodges-Lehmann ratio (`ratio_to_eevdf`), its interval (`ci`, `ci_level`) and verdict. EEVDF
    itself: ratio 1, no interval, no verdict."""
    base_vals = values_by_scheduler.get(BASELINE, [])
    base = trimmed_mean(base_vals)
    per = {}
    for s, vals in values_by_scheduler.items():
        mean = trimmed_mean(vals)
        if s == BASELINE:
            c = {"ratio": 1.0 if mean is not None else None, "ci": None, "ci_level": None, "verdict": None}
        else:
            c = compare(base_vals, vals, higher)
        per[s] = {"mean": mean, "ratio_to_eevdf": c["ratio"], "ci": c["ci"], "ci_level": c["ci_level"],
                  "verdict": c["verdict"], "ratio_of_means": ratio(mean, base)}
    return per


AGAIN = "-again"


def _again_pairs(schedulers):
    """The A/A pairs of a plan: each scheduler named ORIGINAL-again (the same command under another name)
    whose ORIGINAL is in the plan too, mapped to ORIGINAL."""
    return {s: s[:-len(AGAIN)] for s in schedulers if s.endswith(AGAIN) and s[:-len(AGAIN)] in schedulers}


def _as_ratio(c):
    """stats.compare's result in the shape fmt_ratio reads."""
    return {"ratio_to_eevdf": c["ratio"], "ci": c["ci"], "ci_level": c["ci_level"], "verdict": c["verdict"]}


def judges_rps(primary, metrics):
    """Is requests/s judged beside a workload's primary metric? Where its runs (@metrics: each run's metrics)
    record it -- the request/worker loads: reqlat, its surface points, schbench -- and it is not the primary
    metric itself. bench/vs-baseline asks the same."""
    return primary != "rps" and any("rps" in m for m in metrics)


def summarize_run(plan, recs):
    """Per workload: its instrument, and per scheduler status counts, the primary metric's statistics,
    its ratio to EEVDF with the interval and verdict (and VRQ's ratio of trimmed means), the mean
    schedstat deltas and BPF cost; for latency workloads each percentile judged the same way; and how
    many measured steps waited on the host's files."""
    out = {}
    for w in plan["workloads"]:
        spec = WORKLOADS[w]
        primary = spec["primary"]
        ws = {"primary": primary, "higher_is_better": spec["higher"], "desc": spec["desc"],
              "instrument": instrument_of(plan, w), "schedulers": {}}
        ok_by_scheduler = {}
        for s in plan["schedulers"]:
            rs = [r for r in recs if r["workload"] == w and r["scheduler"] == s]
            ok = [r for r in rs if r["status"] == "ok"]
            ok_by_scheduler[s] = ok
            vals = [(r.get("metrics") or {}).get(primary) for r in ok]
            ws["schedulers"][s] = {
                "runs": len(rs),
                "ok": len(ok),
                "failures": {st: sum(1 for r in rs if r["status"] == st) for st in ("load_failed", "ejected", "error")
                             if any(r["status"] == st for r in rs)},
                "values": vals,
                **summarize(vals),
                "schedstat": {c: _mean([r["schedstat"][c] for r in ok if "schedstat" in r]) for c in SCHEDSTAT_COLS},
                "bpf_ns_per_op": _mean([_bpf_cost(r) for r in ok if r.get("bpf")]),
            }
        judged = _judged({s: e["values"] for s, e in ws["schedulers"].items()}, spec["higher"])
        for s, e in ws["schedulers"].items():
            for k in ("ratio_to_eevdf", "ci", "ci_level", "verdict", "ratio_of_means"):
                e[k] = judged[s][k]
        if spec.get("percentiles"):
            ws["percentiles"] = {}
            for p in spec["percentiles"]:
                ws["percentiles"][p] = {"schedulers": _judged({s: [(r.get("metrics") or {}).get(p) for r in ok]
                                                               for s, ok in ok_by_scheduler.items()}, False)}
        served = {m: {s: [(r.get("metrics") or {}).get(m) for r in ok] for s, ok in ok_by_scheduler.items()}
                  for m in (service.METRICS if spec.get("service") else ())}
        served = {m: v for m, v in served.items() if any(x is not None for vals in v.values() for x in vals)}
        if served:
            # each equal worker's CPU time over windows (vrqbench/service.py), beside the latencies; none where
            # no window had two workers to compare (or the runs predate the figures)
            ws["service"] = {m: {"schedulers": _judged(v, service.HIGHER.get(m, False))} for m, v in served.items()}
        if judges_rps(primary, ((r.get("metrics") or {}) for ok in ok_by_scheduler.values() for r in ok)):
            # a request/worker load's throughput beside its latency (the surface's table)
            ws["rps"] = {"schedulers": _judged({s: [(r.get("metrics") or {}).get("rps") for r in ok]
                                                for s, ok in ok_by_scheduler.items()}, True)}
        again = _again_pairs(plan["schedulers"])
        if again:
            ws["again"] = {}
            for copy, original in again.items():
                values = {name: [(r.get("metrics") or {}).get(primary) for r in ok_by_scheduler[name]]
                          for name in (copy, original)}
                entry = {"against": original, primary: _as_ratio(compare(values[original], values[copy],
                                                                          spec["higher"]))}
                for p in (*spec.get("percentiles", ()), *served):
                    pv = {name: [(r.get("metrics") or {}).get(p) for r in ok_by_scheduler[name]]
                          for name in (copy, original)}
                    entry[p] = _as_ratio(compare(pv[original], pv[copy], service.HIGHER.get(p, False)))
                ws["again"][copy] = entry
        traced = {s: [r["metrics"]["trace"] for r in ok if "trace" in (r.get("metrics") or {})]
                  for s, ok in ok_by_scheduler.items()}
        if any(traced.values()):
            ws["trace"] = {s: _trace_means(t) for s, t in traced.items() if t}
        measured = [r for r in recs if r["workload"] == w and r.get("host_file_waits") is not None]
        waited = [r for r in measured if r["host_file_waits"] > 0]
        ws["host_file_waits"] = {"steps_measured": len(measured), "steps_waited": len(waited),
                                 "requests": sum(r["host_file_waits"] for r in waited)}
        out[w] = ws
    return out


TRACE_COLS = (("traced", "traced"), ("timer_p99_us", "timer delay p99"), ("wait_p99_us", "wait for a CPU p99"),
              ("tail", "latest 1%"), ("tail_on_idle_cpu", "of them on an idle CPU"),
              ("tail_resched_set", "on a CPU told to reschedule"), ("tail_resched_lazy", "told lazily"),
              ("tail_queued", "queued"),
              ("tail_timer_p50_us", "their timer delay p50"), ("tail_wait_p50_us", "their wait p50"))


def _trace_means(runs):
    """The means over a scheduler's traced runs of vrqbench/wakeup_trace.breakdown(), with the latest
    wake-ups that were neither on an idle CPU nor on one told to reschedule, at once or lazily
    (tail_queued): those waited because the scheduler queued them."""
    rows = [dict(t, tail_queued=t["tail"] - t["tail_on_idle_cpu"] - t["tail_resched_set"] - t["tail_resched_lazy"])
            for t in runs if t.get("traced")]
    return {k: _mean([r[k] for r in rows]) for k, _ in TRACE_COLS} if rows else {"traced": 0}


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _bpf_cost(rec):
    """Mean ns per BPF program invocation over all the scheduler's programs in one run."""
    cnt = sum(p["run_cnt"] for p in rec["bpf"].values())
    ns = sum((p["ns_per_op"] or 0) * p["run_cnt"] for p in rec["bpf"].values())
    return ns / cnt if cnt else None


def _fmt(v, digits=2):
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _fmt_count(v):
    """A mean over runs of counts or whole µs: whole when it is, else one decimal."""
    if v is None:
        return "—"
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"


def fmt_ratio(e):
    """A ratio to EEVDF (an entry of _judged) with its interval and verdict: `0.909 [0.850, 0.970]
    better`, `1.030 [0.950, 1.100] ~` (level: the interval holds 1), and with too few runs for a
    verdict the widest interval they give with its confidence, `1.047 [90%: 0.930, 1.200] n/a`;
    EEVDF's own `1.000`."""
    r = e.get("ratio_to_eevdf")
    if r is None:
        return "—"
    text = f"{r:.3f}"
    ci = e.get("ci")
    if ci is not None:
        level = e.get("ci_level")
        shown = "" if level >= float(CONFIDENCE) else f"{100 * level:.0f}%: "
        text += f" [{shown}{ci[0]:.3f}, {ci[1]:.3f}]"
    mark = {"level": "~", "better": "better", "worse": "worse", NO_VERDICT: NO_VERDICT}.get(e.get("verdict"))
    return f"{text} {mark}" if mark else text


def instrument_lines(plan, machine):
    """One line per instrument the run used: what it is (QEMU version, thread mode, clock, vCPUs) and
    which workloads it measured."""
    by_instrument = {}
    for w in plan["workloads"]:
        by_instrument.setdefault(instrument_of(plan, w), []).append(w)
    recorded = machine.get("instruments", {})
    lines = []
    for inst, ws in by_instrument.items():
        m = recorded.get(inst)
        if m:
            desc = m.get("desc", "?")
            if m.get("cpus"):
                desc += f"; {m['cpus']} vCPUs ({m.get('topology', '?')}) on {m.get('host_cores', '?')} host cores"
            if m.get("staged_files") is not None:
                desc += f"; {m['staged_files']} files staged into guest RAM before measuring"
        elif inst == UNRECORDED:
            desc = machine.get("instrument", "not recorded")
        else:
            desc = "no boot recorded yet"
        lines.append(f"- **{inst}**: {desc}. Measured: {', '.join(ws)}.")
    return lines


def build_lines(built):
    """One line per scx_vrq scheduler: its build (commit, dirty, sha256) and the knob values it ran with."""
    lines = []
    for s, b in built.items():
        commit = (f"commit {b['commit']}{', dirty tree' if b.get('dirty') else ''}" if b.get("commit")
                  else "no commit recorded")
        sha = f", sha256 {b['sha256'][:16]}" if b.get("sha256") else ""
        knobs = b.get("knobs")
        knob_text = (f"; knobs (fingerprint {builds.fingerprint(knobs)}"
                     f"{', not the same in every run' if b.get('knobs_differ') else ''}): "
                     + " ".join(f"{k}={v}" for k, v in knobs.items())) if knobs else "; knobs not logged"
        lines.append(f"- `{s}`: scx_vrq {b.get('version') or '?'} ({commit}{sha}){knob_text}")
    return lines


def markdown(plan, summary, machine, built=None):
    lines = ["# scx_vrq bench report", ""]
    lines.append(f"Machine under test: {machine.get('cpus', '?')} CPUs, {machine.get('cpu_model', '?')}, kernel "
                 f"{machine.get('kernel', '?')}{' (virtualized)' if machine.get('virtualized') else ''}.")
    lines.append(f"Mode: {'quick' if plan['quick'] else 'full'}, {plan['runs']} runs per scheduler and workload, "
                 f"schedulers interleaved in one boot per instrument (each once per round, their order changing "
                 f"each round). Mean = the mean with the minimum and maximum dropped (VRQ's method) when there are "
                 f"3 or more runs.")
    if plan.get("cgroups") == "sessions":
        lines.append("cgroups: laid out as systemd lays out login sessions (`--cgroups sessions`): the measured "
                     "programs in one session's scope under `user.slice/user-0.slice`, each background load (a build beside "
                     "a probe, SCHED_IDLE burners) in a session scope of its own, cpu controller on, every weight "
                     "100 (bench/vrqbench/sessions.py).")
    if plan.get("peer_versions"):
        lines.append("Peers: " + ", ".join(f"{c} {v}" for c, v in plan["peer_versions"].items()) + ".")
    if built:
        lines += ["", "Builds (bench/vrqbench/builds.py: builds.json and each scheduler's startup line):", "",
                  *build_lines(built)]
    lines.append("")
    lines.append("Instruments (every number below comes from the instrument named at its workload):")
    lines.append("")
    lines += instrument_lines(plan, machine)
    lines.append("")
    lines.append(f"Ratios are to EEVDF in the same boot: the Hodges–Lehmann ratio (the median of the ratios of "
                 f"each of a scheduler's runs to each of EEVDF's) and in brackets its {100 * float(CONFIDENCE):.0f}% "
                 f"confidence interval, distribution-free (from the Mann–Whitney rank-sum distribution; "
                 f"bench/README.md). `better` or `worse` only when the interval excludes 1, `~` (level) when "
                 f"it holds 1. With fewer runs than such an interval needs to exclude 1 ({MIN_RUNS} of each; "
                 f"3 and 3 cannot: their smallest two-sided p-value is 0.1) the widest interval the runs give, "
                 f"all their pairwise ratios, is shown with its own confidence (`[90%: …]` for 3 and 3) and "
                 f"there is no verdict: `{NO_VERDICT}`.")
    lines.append("")
    present = [w for w in BUILD_FOUR if w in summary]
    if present:
        insts = sorted({summary[w]["instrument"] for w in present})
        lines.append(f"## Build throughput, ratio to EEVDF (instrument: {', '.join(insts)}; time: below 1 is faster)")
        lines.append("")
        lines.append("| scheduler | " + " | ".join(present) + " |")
        lines.append("|---|" + "---|" * len(present))
        for s in plan["schedulers"]:
            lines.append(f"| {s} | " + " | ".join(fmt_ratio(summary[w]["schedulers"][s]) for w in present) + " |")
        lines.append("")
    lines += surface_lines(plan, summary)
    lines += sleeper_lines(plan, summary)
    lines += open_lines(plan, summary)
    for w, ws in summary.items():
        better = "higher is better" if ws["higher_is_better"] else "lower is better"
        lines.append(f"## {w}: {ws['desc']} ({ws['primary']}, {better})")
        lines.append("")
        lines.append(f"Instrument: {ws['instrument']}. Ratio to EEVDF: of {ws['primary']}, with its "
                     f"{100 * float(CONFIDENCE):.0f}% interval.")
        waits = ws["host_file_waits"]
        if waits["steps_waited"]:
            lines.append(f"Warning: {waits['steps_waited']} of {waits['steps_measured']} measured steps waited on "
                         f"the host's files ({waits['requests']} 9p interrupts): staging left something out, and "
                         f"their times include the host's.")
        lines.append("")
        lines.append("| scheduler | ok/runs | mean | median | stdev | ratio to EEVDF [95% CI] | "
                     + " | ".join(SCHEDSTAT_COLS) + " | BPF ns/op | failures |")
        lines.append("|---|" + "---|" * (7 + len(SCHEDSTAT_COLS)))
        for s, e in ws["schedulers"].items():
            fails = ", ".join(f"{k} {v}" for k, v in e["failures"].items()) or "—"
            lines.append(f"| {s} | {e['ok']}/{e['runs']} | {_fmt(e['mean'])} | {_fmt(e['median'])} | "
                         f"{_fmt(e['stdev'])} | {fmt_ratio(e)} | "
                         + " | ".join(_fmt(e["schedstat"][c], 0) for c in SCHEDSTAT_COLS)
                         + f" | {_fmt(e['bpf_ns_per_op'], 0)} | {fails} |")
        lines.append("")
        if ws.get("percentiles"):
            names = list(ws["percentiles"])
            lines.append("Latency percentiles: mean µs, and in parentheses the ratio to EEVDF with its interval "
                         "and verdict, each percentile judged on its own runs.")
            lines.append("")
            lines.append("| scheduler | " + " | ".join(names) + " |")
            lines.append("|---|" + "---|" * len(names))
            for s in ws["schedulers"]:
                cells = []
                for p in names:
                    e = ws["percentiles"][p]["schedulers"][s]
                    cells.append(f"{_fmt(e['mean'], 0)} ({fmt_ratio(e)})")
                lines.append(f"| {s} | " + " | ".join(cells) + " |")
            lines.append("")
        if ws.get("service"):
            lines += service_table(ws)
        if ws.get("trace"):
            lines.append("Where the latest 1% of wake-ups waited (`--trace`, vrqbench/wakeup_trace.py; µs, means over "
                         "the runs). On an idle CPU, or on one told to reschedule at once, the wait is the "
                         "machine's (on the instruction clock: the other vCPU's turn); told lazily (preempt at "
                         "the next tick) or queued, the scheduler's. "
                         "Tracing adds work to every switch: these explain the figures above, they are not "
                         "compared with them.")
            lines.append("")
            lines.append("| scheduler | " + " | ".join(name for _, name in TRACE_COLS) + " |")
            lines.append("|---|" + "---|" * len(TRACE_COLS))
            for s, t in ws["trace"].items():
                lines.append(f"| {s} | " + " | ".join(_fmt_count(t.get(k)) for k, _ in TRACE_COLS) + " |")
            lines.append("")
        if ws.get("again"):
            lines.append("A/A: each scheduler run again under another name against itself (the same command, "
                         "interleaved in the same boot), the same rule: the copy's runs ÷ the original's. Every "
                         "verdict here is a false one (5% expected per cell).")
            lines.append("")
            measures = [m for m in next(iter(ws["again"].values())) if m != "against"]
            lines.append("| copy ÷ original | " + " | ".join(measures) + " |")
            lines.append("|---|" + "---|" * len(measures))
            for copy, entry in ws["again"].items():
                lines.append(f"| {copy} ÷ {entry['against']} | " + " | ".join(fmt_ratio(entry[m]) for m in measures)
                             + " |")
            lines.append("")
        lines.append(f"![{w}](plots/{w}.png)")
        lines.append("")
    return "\n".join(lines)


SERVICE_LABELS = {"service_window_p50": "service max/min p50", "service_window_max": "service max/min worst",
                  "service_jain_p50": "Jain p50", "service_total_max_min": "service max/min run"}
# the service figures the surface and open-loop tables show beside the latencies (all four: each workload's own)
SERVICE_COLS = (("service_window_p50", SERVICE_LABELS["service_window_p50"]),
                ("service_total_max_min", SERVICE_LABELS["service_total_max_min"]))
SURFACE_COLS = (("wake_p50_us", "wake-up p50"), ("wake_p99_us", "wake-up p99"), ("wake_p999_us", "wake-up p99.9"),
                ("req_p99_us", "request p99"), ("req_p999_us", "request p99.9"), *SERVICE_COLS)


def _metric(ws, key):
    """A workload's judged entry of a latency percentile or a service figure, or None when it has none."""
    return ws.get("percentiles", {}).get(key) or ws.get("service", {}).get(key)


def _digits(key):
    """Decimals to show a metric's mean with: whole µs, two for the service max/min, three for Jain's index (the
    differences that matter there lie in the third)."""
    return 3 if key == "service_jain_p50" else 2 if key in SERVICE_LABELS else 0


def service_table(ws):
    """A workload's service figures (vrqbench/service.py): per scheduler each one's mean and ratio to EEVDF."""
    names = list(ws["service"])
    lines = [f"Service (each equal worker's CPU time per {service.WINDOW_S * 1000:g} ms window of guest time, "
             "bench/README.md): max/min among "
             "the workers counted in a window, its median and worst window, Jain's index (1 is equal, higher is "
             "better), and over the run; mean of the runs, and in parentheses the ratio to EEVDF with its interval "
             "and verdict.", "",
             "| scheduler | " + " | ".join(SERVICE_LABELS[m] for m in names) + " |", "|---|" + "---|" * len(names)]
    for s in ws["schedulers"]:
        cells = [f"{_fmt(ws['service'][m]['schedulers'][s]['mean'], _digits(m))} "
                 f"({fmt_ratio(ws['service'][m]['schedulers'][s])})" for m in names]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def surface_lines(plan, summary):
    """The request/worker surface in one table (issue 29): a row per point and scheduler, each cell the ratio
    to EEVDF with its interval and verdict (latency below 1 and requests/s above 1 are better)."""
    points = [w for g in ("reqlat-surface", "schbench") for w in WORKLOAD_GROUPS[g] if w in summary]
    if not points:
        return []
    cols = [c for c in SURFACE_COLS if any(_metric(summary[w], c[0]) for w in points)]
    lines = [f"## The request/worker surface, ratio to EEVDF (instrument: "
             f"{', '.join(sorted({summary[w]['instrument'] for w in points}))})", "",
             "Each point `reqlat-WORK-wN-m1|mcpu`: WORK of CPU per request, N workers per CPU, one message thread "
             "or one per CPU" + ("; `schbench-wN`: schbench's own requests, one message thread, N workers per CPU"
                                 if any(w in WORKLOAD_GROUPS["schbench"] for w in points) else "") +
             ". Latency" + (" and service max/min (each equal worker's CPU time per window, its median window, and "
                            "over the run)" if set(cols) & set(SERVICE_COLS) else "") +
             ": below 1 is better; requests/s: above 1 is better. EEVDF's rows: its own means "
             "(µs, requests/s; minimum and maximum dropped).", "",
             "| point | scheduler | " + " | ".join(label for _, label in cols) + " | requests/s |",
             "|---|---|" + "---|" * (len(cols) + 1)]
    for w in points:
        ws = summary[w]
        for s in plan["schedulers"]:
            cells = []
            for key, _ in cols:
                if _metric(ws, key) is None:  # a point without service figures
                    cells.append("—")
                    continue
                e = _metric(ws, key)["schedulers"][s]
                cells.append(_fmt(e.get("mean"), _digits(key)) if s == BASELINE else fmt_ratio(e))
            e = ws.get("rps", {}).get("schedulers", {}).get(s, {})
            cells.append(_fmt(e.get("mean"), 1) if s == BASELINE else fmt_ratio(e))
            lines.append(f"| {w} | {s} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


SLEEPER_COLS = (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"), ("missed", "missed periods"))
OPEN_COLS = (("wake_p50_us", "wake-up p50"), ("wake_p99_us", "wake-up p99"), ("req_p99_us", "request p99"),
             ("resp_p50_us", "response p50"), ("resp_p99_us", "response p99"), ("resp_p999_us", "response p99.9"),
             *SERVICE_COLS)


def _group_table(plan, summary, points, cols, with_rps):
    """A row per point and scheduler: each cell the mean (min and max dropped) and, beside EEVDF's, the ratio to
    it with its interval and verdict."""
    lines = ["| point | scheduler | " + " | ".join(label for _, label in cols) + (" | requests/s |" if with_rps else " |"),
             "|---|---|" + "---|" * (len(cols) + with_rps)]
    for w in points:
        ws = summary[w]
        for s in plan["schedulers"]:
            cells = []
            for key, _ in cols:
                if _metric(ws, key) is None:  # a point that does not measure it (schbench: no response time)
                    cells.append("—")
                    continue
                e = _metric(ws, key)["schedulers"][s]
                mean = _fmt(e.get("mean"), _digits(key))
                cells.append(mean if s == BASELINE else f"{mean} ({fmt_ratio(e)})")
            if with_rps:
                e = ws.get("rps", {}).get("schedulers", {}).get(s, {})
                cells.append(_fmt(e.get("mean"), 1) if s == BASELINE else f"{_fmt(e.get('mean'), 1)} ({fmt_ratio(e)})")
            lines.append(f"| {w} | {s} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def sleeper_lines(plan, summary):
    """The sleeper surface (issue 46) in one table: wake-up p50/p99/p99.9 µs and missed periods per point."""
    points = [w for w in WORKLOAD_GROUPS["sleeper-surface"] if w in summary]
    if not points:
        return []
    return [f"## The sleeper surface (instrument: {', '.join(sorted({summary[w]['instrument'] for w in points}))})",
            "", "Each point `sleeper-PERIOD-hHOGS[n19]-wWORK-SOURCE-cpuK`: the project's periodic sleeper, woken "
            "every PERIOD by SOURCE, doing WORK % of the period in CPU work, pinned to CPU K beside HOGS CPU hogs "
            "pinned there too (at nice 19 with `n19`), the waker of the event sources on another CPU, every other "
            "CPU idle; `cyclictest-PERIOD-hHOGS-cpuK`: cyclictest at SCHED_OTHER in the same shape. So each point "
            "shows when the scheduler runs a woken sleeper among its hogs, not where it places it (on the "
            "instruction clock a wake-up for one busy vCPU while another runs waits for the vCPUs' turn-taking: "
            "bench/README.md). Cells: mean (µs; periods), and in parentheses the ratio to EEVDF with its "
            "interval and verdict; below 1 is better.", "",
            *_group_table(plan, summary, points, SLEEPER_COLS, False)]


def open_lines(plan, summary):
    """The open-loop request load (issue 45) in one table: wake-up, request (service) and response latency and
    requests/s per point."""
    points = [w for w in WORKLOAD_GROUPS["reqlat-open"] if w in summary]
    if not points:
        return []
    cols = [c for c in OPEN_COLS if any(_metric(summary[w], c[0]) for w in points)]
    return [f"## Open-loop requests (instrument: {', '.join(sorted({summary[w]['instrument'] for w in points}))})",
            "", "Each point `reqlat-open-WORK-LOAD-burst|even|poisson`: requests of WORK arriving at LOAD % of "
            "nominal capacity, each second's at once (burst), evenly spaced or at exponential gaps (poisson); "
            "request latency is service (a worker's start "
            "to its end), response from the arrival to the end; `schbench-open-LOAD`: schbench -R at LOAD % of its "
            "saturated rate (service only). Cells: mean (µs; requests/s), and in parentheses the ratio to EEVDF "
            "with its interval and verdict; latency" + (" and service max/min (the backlogged workers' CPU time per "
                                                        "window, its median window, and over the run)"
                                                        if set(cols) & set(SERVICE_COLS) else "") +
            " below 1, requests/s above 1 is better.", "",
            *_group_table(plan, summary, points, cols, True)]


def plots(out, summary):
    """One bar chart per workload: the mean per scheduler, whiskers from min to max. Raises ImportError
    without matplotlib (before touching DIR/plots)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    made = []
    for w, ws in summary.items():
        names = list(ws["schedulers"])
        means = [ws["schedulers"][s]["mean"] or 0 for s in names]
        lo = [max(0, (ws["schedulers"][s]["mean"] or 0) - (ws["schedulers"][s]["min"] or 0)) for s in names]
        hi = [max(0, (ws["schedulers"][s]["max"] or 0) - (ws["schedulers"][s]["mean"] or 0)) for s in names]
        fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(names)), 3.2))
        ax.bar(names, means, yerr=[lo, hi], capsize=4, color="#4a7ab7")
        ax.set_title(f"{w} ({ws['primary']}, {'higher' if ws['higher_is_better'] else 'lower'} is better)\n"
                     f"instrument: {ws['instrument']}", fontsize=9)
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        path = os.path.join(out, "plots", f"{w}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)
    return made


def ratios(summary):
    """summary.json's `ratios`: per workload and scheduler, the primary metric's comparison with EEVDF."""
    return {w: {s: {k: e[k] for k in ("ratio_to_eevdf", "ci", "ci_level", "verdict")}
                for s, e in ws["schedulers"].items() if s != BASELINE}
            for w, ws in summary.items()}


def report(out):
    """report.md, summary.json and the plots from DIR's saved results. Without matplotlib the plots
    already in DIR/plots are left as they are (a warning says so); the report's text does not depend
    on them."""
    plan, recs, machine = load(out)
    summary = summarize_run(plan, recs)
    built = builds.report_builds(out, plan)
    builds.save(out, built)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"plan": plan, "machine": machine, "method": METHOD, "ratios": ratios(summary),
                   "summary": summary, **({"builds": built} if built else {})}, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(plan, summary, machine, built))
    try:
        plots(out, summary)
    except ImportError:
        print(f"bench: matplotlib is not installed: plots not drawn ({out}/plots left as it was)", file=sys.stderr)
    return summary
