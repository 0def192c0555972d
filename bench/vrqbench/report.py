"""Turn a bench run's results.jsonl into report.md (tables laid out like VRQ's), summary.json and
one PNG per workload. `bench report DIR` runs this alone, on saved results."""

import json
import os

from vrqbench.stats import ratio, summarize
from vrqbench.workloads import BUILD_FOUR, WORKLOADS

SCHEDSTAT_COLS = ("sched_count", "sched_goidle", "ttwu_count", "ttwu_local", "run_delay", "pcount")


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


def summarize_run(plan, recs):
    """Per workload, per scheduler: status counts, the primary metric's statistics, the ratio of its
    mean to EEVDF's, and the mean schedstat deltas and BPF cost."""
    out = {}
    for w in plan["workloads"]:
        primary = WORKLOADS[w]["primary"]
        out[w] = {"primary": primary, "higher_is_better": WORKLOADS[w]["higher"], "desc": WORKLOADS[w]["desc"],
                  "schedulers": {}}
        for s in plan["schedulers"]:
            rs = [r for r in recs if r["workload"] == w and r["scheduler"] == s]
            ok = [r for r in rs if r["status"] == "ok"]
            vals = [(r.get("metrics") or {}).get(primary) for r in ok]
            entry = {
                "runs": len(rs),
                "ok": len(ok),
                "failures": {st: sum(1 for r in rs if r["status"] == st) for st in ("load_failed", "ejected", "error")
                             if any(r["status"] == st for r in rs)},
                "values": vals,
                **summarize(vals),
                "schedstat": {c: _mean([r["schedstat"][c] for r in ok if "schedstat" in r]) for c in SCHEDSTAT_COLS},
                "bpf_ns_per_op": _mean([_bpf_cost(r) for r in ok if r.get("bpf")]),
            }
            out[w]["schedulers"][s] = entry
        base = out[w]["schedulers"].get("eevdf", {}).get("mean")
        for s, e in out[w]["schedulers"].items():
            e["ratio_to_eevdf"] = ratio(e["mean"], base)
    return out


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


def markdown(plan, summary, machine):
    lines = ["# scx_vrq bench report", ""]
    lines.append(f"Machine: {machine.get('cpus', '?')} CPUs, {machine.get('cpu_model', '?')}, kernel "
                 f"{machine.get('kernel', '?')}{' (virtualized)' if machine.get('virtualized') else ''}.")
    lines.append(f"Mode: {'quick' if plan['quick'] else 'full'}, {plan['runs']} runs per scheduler and workload, "
                 f"schedulers interleaved in one boot (order rotated each run). Mean = the mean with the "
                 f"minimum and maximum dropped (VRQ's method) when there are 3 or more runs.")
    lines.append("")
    present = [w for w in BUILD_FOUR if w in summary]
    if present:
        lines.append("## Build throughput, ratio to EEVDF (time: below 1 is faster)")
        lines.append("")
        lines.append("| scheduler | " + " | ".join(present) + " |")
        lines.append("|---|" + "---|" * len(present))
        for s in plan["schedulers"]:
            lines.append(f"| {s} | " + " | ".join(_fmt(summary[w]["schedulers"][s]["ratio_to_eevdf"], 3)
                                              for w in present) + " |")
        lines.append("")
    for w, ws in summary.items():
        better = "higher is better" if ws["higher_is_better"] else "lower is better"
        lines.append(f"## {w}: {ws['desc']} ({ws['primary']}, {better})")
        lines.append("")
        lines.append("| scheduler | ok/runs | mean | median | stdev | ratio to EEVDF | "
                     + " | ".join(SCHEDSTAT_COLS) + " | BPF ns/op | failures |")
        lines.append("|---|" + "---|" * (7 + len(SCHEDSTAT_COLS)))
        for s, e in ws["schedulers"].items():
            fails = ", ".join(f"{k} {v}" for k, v in e["failures"].items()) or "—"
            lines.append(f"| {s} | {e['ok']}/{e['runs']} | {_fmt(e['mean'])} | {_fmt(e['median'])} | "
                         f"{_fmt(e['stdev'])} | {_fmt(e['ratio_to_eevdf'], 3)} | "
                         + " | ".join(_fmt(e["schedstat"][c], 0) for c in SCHEDSTAT_COLS)
                         + f" | {_fmt(e['bpf_ns_per_op'], 0)} | {fails} |")
        lines.append("")
        lines.append(f"![{w}](plots/{w}.png)")
        lines.append("")
    return "\n".join(lines)


def plots(out, summary):
    """One bar chart per workload: the mean per scheduler, whiskers from min to max."""
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
        ax.set_title(f"{w} ({ws['primary']}, {'higher' if ws['higher_is_better'] else 'lower'} is better)")
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        path = os.path.join(out, "plots", f"{w}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)
    return made


def report(out):
    plan, recs, machine = load(out)
    summary = summarize_run(plan, recs)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"plan": plan, "machine": machine, "summary": summary}, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(plan, summary, machine))
    plots(out, summary)
    return summary
