#!/usr/bin/python3
"""Check that a `bench run --quick` produced a complete, well-formed report (never a timing):
every planned step saved with its instrument, each scheduler's runs all ok, each scheduler's ratio
to EEVDF with its interval and verdict (n/a with a quick run's 3 runs), the instruments each boot
measured on (QEMU version, thread mode, clock), the tables, the summary and one plot per workload
present. On the instruction clock, also that no measured step
waited on the host's files (staging complete). Ends with "bench-quick: N passed, N failed".

    bench/tests/check_quick_run.py DIR

tools/test runs it; by hand, `source tools/env.sh` first (its PYTHONPATH finds vrqtest:
tests/guest/vrqtest/__init__.py).
"""

import json
import os
import sys

from vrqtest import Results  # the tests' PASS / FAIL lines and closing line

out = sys.argv[1]
results = Results(figures_dir=None)
check = results.check


def finish():
    results.finish("bench-quick")


try:
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        summary_file = json.load(f)
    with open(os.path.join(out, "machine.json")) as f:
        machine = json.load(f)
    with open(os.path.join(out, "results.jsonl")) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    summary = summary_file["summary"]
    assigned = plan["instruments"]
except (OSError, ValueError, KeyError) as e:
    check("bench-quick/report files", False, f"{type(e).__name__}: {e}")
    finish()

steps = len(plan["workloads"]) * len(plan["schedulers"]) * plan["runs"]
check("bench-quick/every step saved", len(recs) == steps, f"{len(recs)} of {steps}")
check("bench-quick/every step records its instrument",
      all(r.get("instrument") == assigned.get(r.get("workload")) for r in recs),
      str([(r.get("workload"), r.get("instrument")) for r in recs if r.get("instrument") != assigned.get(r.get("workload"))]))
for inst in sorted(set(assigned.values())):
    m = machine.get("instruments", {}).get(inst, {})
    if inst == "native":
        check(f"bench-quick/{inst}: boot recorded", bool(m), str(machine.get("instruments")))
        continue
    check(f"bench-quick/{inst}: QEMU version, thread mode and clock recorded",
          all(m.get(k) for k in ("qemu", "accel", "clock")) and (m.get("accel") == "kvm" or m.get("tcg_threads")),
          str(m))
    check(f"bench-quick/{inst}: files staged into guest RAM", (m.get("staged_files") or 0) > 0, str(m.get("staged_files")))
    check(f"bench-quick/{inst}: in the report header with its QEMU version",
          f"**{inst}**" in report and bool(m.get("qemu")) and m["qemu"] in report)
for w in plan["workloads"]:
    ws = summary.get(w)
    if ws is None:
        check(f"bench-quick/{w}: in summary.json", False, "missing")
        continue
    check(f"bench-quick/{w}: instrument", ws.get("instrument") == assigned.get(w), f"{ws.get('instrument')}")
    check(f"bench-quick/{w}: in the report with its instrument",
          f"## {w}:" in report and f"Instrument: {assigned.get(w)}. Ratio to EEVDF: of {ws.get('primary')}" in report)
    if assigned.get(w) == "instructions":
        waits = ws.get("host_file_waits", {})
        check(f"bench-quick/{w}: no measured step waited on the host's files",
              waits.get("steps_measured") == len(plan["schedulers"]) * plan["runs"] and waits.get("steps_waited") == 0,
              str(waits))
    for s in plan["schedulers"]:
        e = ws["schedulers"][s]
        check(f"bench-quick/{w} {s}: all runs ok", e["ok"] == plan["runs"], f"{e['ok']}/{e['runs']} {e['failures']}")
        check(f"bench-quick/{w} {s}: statistics", e["mean"] is not None and e["median"] is not None
              and e["ratio_to_eevdf"] is not None, str(e))
        if s != "eevdf":
            ci, saved = e.get("ci"), summary_file.get("ratios", {}).get(w, {}).get(s, {})
            check(f"bench-quick/{w} {s}: ratio to EEVDF with its interval and verdict",
                  ci is not None and ci[0] <= e["ratio_to_eevdf"] <= ci[1] and (e.get("ci_level") or 0) > 0
                  and e.get("verdict") in ("level", "better", "worse", "n/a")
                  and saved.get("ci") == ci and saved.get("verdict") == e.get("verdict")
                  and bool(summary_file.get("method", {}).get("name")), f"{e.get('ci')} {e.get('verdict')}")
        check(f"bench-quick/{w} {s}: schedstat counters", all(v is not None for v in e["schedstat"].values()),
              str(e["schedstat"]))
        if s.startswith("vrq"):
            check(f"bench-quick/{w} {s}: BPF cost and scx_vrq stats recorded",
                  e["bpf_ns_per_op"] is not None and all("vrq" in r for r in recs if r["scheduler"] == s),
                  f"bpf={e['bpf_ns_per_op']}")
        check(f"bench-quick/{w} {s}: in the report", f"| {s} |" in report)
    plot = os.path.join(out, "plots", f"{w}.png")
    check(f"bench-quick/{w}: plot", os.path.exists(plot) and os.path.getsize(plot) > 1000)
finish()
