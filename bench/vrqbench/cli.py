"""bench: run VRQ's measurements side by side for a set of schedulers, and report them.

    bench run [--quick] [--runs N] [--secs S] [--workloads a,b] [--schedulers x,y] [--out DIR]
              [--native] [--cpus N --topology S:C:T]
    bench report DIR
    bench list
"""

import argparse
import json
import os
import subprocess
import sys
import time

from vrqbench import report as reportmod
from vrqbench.plan import interleave
from vrqbench.workloads import DEFAULT_SCHEDULERS, PEERS_DIR, SCHEDULERS, WORKLOADS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_VERSION = "1.1.4"  # scx_bpfland / scx_lavd / scx_flash from crates.io, pinned
VM_FAULT = 125


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=REPO, **kw)


def install_peers(names):
    """cargo install the peer schedulers (pinned) into .bench-cache/peers, once; a shared target
    directory lets the three reuse each other's compiled dependencies."""
    for peer in names:
        binary = os.path.join(REPO, PEERS_DIR, peer)
        if os.path.exists(binary):
            continue
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(REPO, ".bench-cache", "peer-target"))
        rc = sh(["cargo", "install", "--locked", "--root", os.path.join(REPO, ".bench-cache", "peers"),
                 f"{peer}@{PEER_VERSION}"], env=env).returncode
        if rc != 0:
            print(f"bench: could not install {peer}; its runs will be recorded as load_failed", flush=True)


def cmd_run(a):
    workloads = a.workloads.split(",") if a.workloads else list(WORKLOADS)
    schedulers = a.schedulers.split(",") if a.schedulers else list(DEFAULT_SCHEDULERS)
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"bench: unknown workload {w!r} (bench list)")
    for s in schedulers:
        if s not in SCHEDULERS:
            sys.exit(f"bench: unknown scheduler {s!r} (bench list)")
    if "eevdf" not in schedulers:
        schedulers.insert(0, "eevdf")  # the baseline every ratio is taken against
    runs = a.runs or (3 if a.quick else 10)
    secs = a.secs or (8 if a.quick else 30)
    if runs < 1 or secs < 1 or (a.build_units is not None and a.build_units < 1):
        sys.exit("bench: --runs, --secs and --build-units must be at least 1")
    out = os.path.abspath(a.out or os.path.join(REPO, "bench-results", time.strftime("%Y%m%d-%H%M%S")))
    plan = {"workloads": workloads, "schedulers": schedulers, "runs": runs, "secs": secs, "quick": a.quick,
            "build_units": a.build_units or (10 if a.quick else 24)}
    os.makedirs(out, exist_ok=True)
    plan_path = os.path.join(out, "plan.json")
    if os.path.exists(plan_path):
        with open(plan_path) as f:
            old = json.load(f)
        if old != plan:
            sys.exit(f"bench: {out} holds a different plan; resume it with the same options or use a new --out")
        print(f"bench: resuming {out}", flush=True)
    with open(plan_path, "w") as f:
        json.dump(plan, f, indent=1)
    print(f"bench: {len(interleave(workloads, schedulers, runs))} steps -> {out}", flush=True)

    if sh([os.path.join(REPO, "tools", "build")], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("bench: build failed")
    if sh(["make", "-s", "-C", os.path.join(REPO, "bench", "src")]).returncode != 0:
        sys.exit("bench: building the probes failed")
    install_peers([SCHEDULERS[s]["peer"] for s in schedulers if "peer" in SCHEDULERS[s]])

    guest = [os.path.join(REPO, "bench", "vrqbench", "guest.py"), out]
    if a.native:
        if os.geteuid() != 0 or not os.path.exists("/sys/kernel/sched_ext/state"):
            sys.exit("bench: --native needs root and a sched_ext kernel")
        rc = sh(guest).returncode
    else:
        for attempt in range(1, 4):
            rc = sh([os.path.join(REPO, "tools", "vm", "vm-run"), "--cpus", str(a.cpus), "--topology", a.topology,
                     "--timeout", str(a.timeout), "--out", out, "--", *guest]).returncode
            if rc != VM_FAULT:
                break
            print(f"bench: VM fault (attempt {attempt}); resuming from the steps already saved", flush=True)
    if rc != 0:
        print(f"bench: the runner exited {rc}; reporting what was saved (re-run the same command to resume)")
    reportmod.report(out)
    print(f"bench: report in {out}/report.md", flush=True)
    return 0 if rc == 0 else 1


def cmd_report(a):
    reportmod.report(os.path.abspath(a.dir))
    print(f"bench: report in {a.dir}/report.md")
    return 0


def cmd_list(_):
    print("workloads:")
    for w, d in WORKLOADS.items():
        print(f"  {w:18} {d['desc']} ({d['primary']}, {'higher' if d['higher'] else 'lower'} is better)")
    print("schedulers:", ", ".join(DEFAULT_SCHEDULERS))
    print("  only when named (scx_vrq's off-by-default switches):",
          ", ".join(s for s in SCHEDULERS if s not in DEFAULT_SCHEDULERS))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run workloads x schedulers, interleaved, then report")
    r.add_argument("--quick", action="store_true", help="3 runs of short loads (default: 10 runs, VRQ's method)")
    r.add_argument("--runs", type=int, help="runs per workload and scheduler")
    r.add_argument("--secs", type=int, help="length of the timed loads (latency, interactive, fork/wait)")
    r.add_argument("--workloads", help="comma-separated (bench list); default all")
    r.add_argument("--schedulers", help="comma-separated (bench list); default all but the vrq-* switch variants; eevdf is always added")
    r.add_argument("--build-units", type=int, help="C files in the build workloads' code base (default 10 quick, 24 full)")
    r.add_argument("--out", help="results folder (an existing one is resumed)")
    r.add_argument("--native", action="store_true", help="run here (root, sched_ext kernel), not in the VM")
    r.add_argument("--cpus", type=int, default=4, help="VM vCPUs (default 4)")
    r.add_argument("--topology", default="1:2:2", help="VM sockets:cores:threads (default 1:2:2)")
    r.add_argument("--timeout", type=int, default=36000, help="VM time limit in seconds")
    r.set_defaults(fn=cmd_run)
    p = sub.add_parser("report", help="regenerate report.md, summary.json and plots from saved results")
    p.add_argument("dir")
    p.set_defaults(fn=cmd_report)
    sub.add_parser("list", help="list workloads and schedulers").set_defaults(fn=cmd_list)
    a = ap.parse_args(argv)
    return a.fn(a)
