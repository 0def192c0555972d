#!/usr/bin/python3
"""Does the service sampler move the latencies it sits beside? In one boot, per scheduler (EEVDF, vrq-llc),
the same reqlat points run with the sampler (as bench run does: vrqbench.workloads._sampled) and without it
(the probe alone), interleaved ABAB..., and each latency of the sampled runs is compared with the unsampled
ones by the bench's rule (stats.compare: Hodges-Lehmann ratio, 95% Mann-Whitney interval).

    tools/vm/vm-run --cpus 2 --topology 1:2:1 --tcg-threads single --clock instructions --timeout 2400 \
        --out DIR -- docs/results/2026-11-28-service-sampler-check/check.py DIR [RUNS [SCHEDULERS [POINTS]]]

SCHEDULERS and POINTS comma-separated (default: eevdf,vrq-llc and every point below).
"""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrqbench import service, stats, workloads  # noqa: E402
from vrqbench.schedulers import SCHEDULERS  # noqa: E402
from vrqtest import Scheduler  # noqa: E402

out = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
scheds = sys.argv[3].split(",") if len(sys.argv) > 3 else ["eevdf", "vrq-llc"]
reqlat = os.path.join(REPO, "target/bench/reqlat")
vrq = SCHEDULERS["vrq-llc"]["cmd"](REPO)
subprocess.run([os.path.join(REPO, "tools/vm/vrq-stage"), reqlat, vrq[0]], check=True)
SECS = 4
POINTS = {"reqlat-10ms-w4-m1": ([reqlat, str(SECS), "8", "10000", "1"], 8, 0),
          "reqlat-open-10ms-60-even": ([reqlat, str(SECS), "4", "10000", "2", "60", "even"], 4, service.BACKLOGGED),
          "reqlat-open-10ms-60-burst": ([reqlat, str(SECS), "4", "10000", "2", "60", "burst"], 4, service.BACKLOGGED)}
if len(sys.argv) > 4:
    POINTS = {p: POINTS[p] for p in sys.argv[4].split(",")}
rows = []
for sched in scheds:
    s = None
    if sched != "eevdf":
        s = Scheduler(cmd=vrq, log_path=f"/run/{sched}.log", wait_stats=False)
        s.start(timeout=60)
    for r in range(runs):
        for point, (cmd, n, backlog) in POINTS.items():
            for sampled in ((True, False) if r % 2 == 0 else (False, True)):
                if sampled:
                    res, figs = workloads._sampled(cmd, "reqlat-worker", n, SECS, backlog)
                else:
                    res, figs = subprocess.run(cmd, capture_output=True, text=True, check=True), {}
                m = workloads.parse_kv(res.stdout)
                row = {"scheduler": sched, "point": point, "sampled": sampled, "run": r,
                       **{k: float(v) for k, v in m.items() if k.startswith(("wake_p", "req_p", "resp_p", "rps"))},
                       **{k: v for k, v in figs.items() if k in ("service_sampler_cpu_us", "service_windows_all",
                                                                 "service_window_p50", "service_read_us_max",
                                                                 "service_sampler_policy")}}
                rows.append(row)
                print(json.dumps(row), flush=True)
    if s:
        s.stop(disabled_timeout=15)
with open(os.path.join(out, "rows.jsonl"), "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
print("\n| scheduler | point | metric | unsampled median | sampled ÷ unsampled [95%] |\n|---|---|---|---|---|")
for sched in scheds:
    for point in POINTS:
        mine = [r for r in rows if r["scheduler"] == sched and r["point"] == point]
        for k in ("wake_p50", "wake_p99", "wake_p999", "req_p50", "req_p99", "req_p999", "resp_p99", "resp_p999", "rps"):
            a = [r[k] for r in mine if not r["sampled"] and k in r]
            b = [r[k] for r in mine if r["sampled"] and k in r]
            if not a:
                continue
            c = stats.compare(a, b, k == "rps")
            ci = f"[{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]" if c["ci"] else ""
            print(f"| {sched} | {point} | {k} | {sorted(a)[len(a) // 2]:g} | {c['ratio']:.3f} {ci} {c['verdict']} |")
cpu = [r["service_sampler_cpu_us"] for r in rows if r["sampled"]]
print(f"\nsampler CPU per run: {min(cpu):.0f}-{max(cpu):.0f} µs over {SECS} s runs")
