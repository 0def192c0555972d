#!/usr/bin/python3
"""Check that a `bench run --quick` produced a complete, well-formed report (never a timing):
every planned step saved, each scheduler's runs all ok, the tables, the summary and one plot per
workload present. Ends with "bench-quick: N passed, N failed".

    bench/tests/check_quick_run.py DIR
"""

import json
import os
import sys

out = sys.argv[1]
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


try:
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)["summary"]
    with open(os.path.join(out, "results.jsonl")) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    report = open(os.path.join(out, "report.md")).read()
except (OSError, ValueError) as e:
    check("bench-quick/report files", False, str(e))
    print(f"bench-quick: {passed} passed, {failed} failed")
    sys.exit(1)

steps = len(plan["workloads"]) * len(plan["schedulers"]) * plan["runs"]
check("bench-quick/every step saved", len(recs) == steps, f"{len(recs)} of {steps}")
for w in plan["workloads"]:
    for s in plan["schedulers"]:
        e = summary[w]["schedulers"][s]
        check(f"bench-quick/{w} {s}: all runs ok", e["ok"] == plan["runs"], f"{e['ok']}/{e['runs']} {e['failures']}")
        check(f"bench-quick/{w} {s}: statistics", e["mean"] is not None and e["median"] is not None
              and e["ratio_to_eevdf"] is not None, str(e))
        check(f"bench-quick/{w} {s}: schedstat counters", all(v is not None for v in e["schedstat"].values()),
              str(e["schedstat"]))
        if s.startswith("vrq"):
            check(f"bench-quick/{w} {s}: BPF cost and scx_vrq stats recorded",
                  e["bpf_ns_per_op"] is not None and all("vrq" in r for r in recs if r["scheduler"] == s),
                  f"bpf={e['bpf_ns_per_op']}")
        check(f"bench-quick/{w} {s}: in the report", f"| {s} |" in report)
    check(f"bench-quick/{w}: plot", os.path.getsize(os.path.join(out, "plots", f"{w}.png")) > 1000)
print(f"bench-quick: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
