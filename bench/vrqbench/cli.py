"""bench: run VRQ's measurements side by side for a set of schedulers, and report them.

    bench run [--quick] [--runs N] [--secs S] [--workloads a,b] [--schedulers x,y] [--out DIR]
              [--instrument auto|parallel|instructions] [--cpus N] [--topology S:C:T] [--native]
              [--cgroups none|sessions] [--base-binary PATH]
    bench report DIR
    bench list
    bench readme-table [--check]
    bench goals DIR... [--scheduler NAME] [--out FILE]
    bench cost run|report ...   (what one scheduling event costs: vrqbench/cost.py)

Each workload is measured on the instrument that can see it: throughput on multi-threaded TCG with
as many vCPUs as host cores, latency, fairness and scheduler cost on the instruction-counted clock
(see bench/README.md). `bench run` boots the VM once per instrument; every boot interleaves all the
selected schedulers and runs.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from vrqbench import builds, cost, goals, instruments, readme_table, sessions
from vrqbench import report as reportmod
from vrqbench.plan import done_steps, interleave, remaining
from vrqbench.schedulers import (BASE_BINARY, DEFAULT_SCHEDULERS, PEER_TARGET_DIR, PEER_VERSIONS, PEERS_ROOT,
                                 SCHEDULERS, installed_peer_versions, peer_of, peer_state)
from vrqbench.workloads import DEFAULT_WORKLOADS, WORKLOAD_GROUPS, WORKLOADS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Boots after the first that VM faults may cost (tools/vm/vm-run --fault-retries; a VM fault, exit 125,
# is the guest kernel crashing under emulation, never a result).
VM_FAULT_RETRIES = 2


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=REPO, **kw)


def toolchain_path():
    """PATH as tools/env.sh sets it for builds: the peers' build scripts (scx_utils) run `clang`, which
    Debian 12 installs only as clang-19 unless LLVM's own folder is on PATH; bench/bench leaves the
    caller's PATH alone for everything else."""
    out = subprocess.run(["bash", "-c", 'source "$1" && printf %s "$PATH"', "env.sh",
                          os.path.join(REPO, "tools", "env.sh")], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 and out.stdout else os.environ.get("PATH", "")


def install_peers(crates):
    """cargo install each peer at its pinned version into .bench-cache/peers, unless that version is
    there already; a shared target directory lets the peers reuse each other's compiled dependencies."""
    installed = installed_peer_versions(REPO)
    path = None     # tools/env.sh's PATH, read once, when a peer is to be built
    for crate in crates:
        state = peer_state(REPO, crate, installed)
        if state == "pinned":
            continue
        if state == "unrecorded":
            print(f"bench: {crate} is in {PEERS_ROOT} without a cargo record of its version; using it as is",
                  flush=True)
            continue
        path = path or toolchain_path()
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(REPO, PEER_TARGET_DIR), PATH=path)
        rc = sh(["cargo", "install", "--locked", "--force", "--root", os.path.join(REPO, PEERS_ROOT),
                 f"{crate}@{PEER_VERSIONS[crate]}"], env=env).returncode
        if rc != 0:
            print(f"bench: could not install {crate} {PEER_VERSIONS[crate]}; its runs will be recorded as "
                  f"load_failed", flush=True)


def make_plan(a):
    """The run's plan from the command line (exits with a one-line error on bad input)."""
    workloads = a.workloads.split(",") if a.workloads else list(DEFAULT_WORKLOADS)
    workloads = [w for name in workloads for w in WORKLOAD_GROUPS.get(name, [name])]
    schedulers = a.schedulers.split(",") if a.schedulers else list(DEFAULT_SCHEDULERS)
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"bench: unknown workload {w!r} (bench list)")
    for s in schedulers:
        if s not in SCHEDULERS:
            sys.exit(f"bench: unknown scheduler {s!r} (bench list)")
    if "eevdf" not in schedulers:
        schedulers.insert(0, "eevdf")  # the baseline every ratio is taken against
    base = {}
    if a.base_binary:
        if not (os.path.isfile(a.base_binary) and os.access(a.base_binary, os.X_OK)):
            sys.exit(f"bench: --base-binary {a.base_binary}: not an executable file")
        if "vrq-base" not in schedulers:
            schedulers.append("vrq-base")
        # its digest, so that a resumed run cannot mix two bases under one name
        with open(a.base_binary, "rb") as f:
            base = {"base_binary": hashlib.sha256(f.read()).hexdigest()}
    elif any(SCHEDULERS[s].get("base") for s in schedulers):
        sys.exit("bench: vrq-base and vrq-base-bfs run the build --base-binary PATH names; none was given")
    runs = a.runs if a.runs is not None else (3 if a.quick else 10)
    secs = a.secs if a.secs is not None else (8 if a.quick else 30)
    if runs < 1 or secs < 1 or (a.build_units is not None and a.build_units < 1):
        sys.exit("bench: --runs, --secs and --build-units must be at least 1")
    if a.trace and not any(WORKLOADS[w].get("traceable") for w in workloads):
        sys.exit("bench: --trace records the wake-ups of " + ", ".join(w for w in WORKLOADS if WORKLOADS[w].get("traceable"))
                 + "; none of them is selected")
    try:
        assignment = instruments.assign(workloads, a.instrument, a.native)
    except ValueError as e:
        sys.exit(f"bench: {e}")
    vm = None
    if a.native:
        if a.cpus is not None or a.topology is not None:
            print("bench: --native measures this machine as it is; --cpus and --topology (the VM's shape) are "
                  "ignored", flush=True)
    else:
        try:
            cpus, topology, warning = instruments.vm_shape(a.cpus, a.topology, instruments.host_cores())
        except ValueError as e:
            sys.exit(f"bench: {e}")
        if warning and "parallel" in assignment.values():
            print(f"bench: warning: {warning}", flush=True)
        vm = {"cpus": cpus, "topology": topology}
    crates = sorted({peer_of(s) for s in schedulers} - {None})
    # recorded only when not the default, so that the plans of folders saved before the option resume
    cgroups = {"cgroups": a.cgroups} if a.cgroups != "none" else {}
    return {"workloads": workloads, "schedulers": schedulers, "runs": runs, "secs": secs, "quick": a.quick,
            "build_units": a.build_units or (10 if a.quick else 24), "instruments": assignment, "vm": vm,
            "peer_versions": {c: PEER_VERSIONS[c] for c in crates}, **({"trace": True} if a.trace else {}), **cgroups,
            **base}


def save_plan(out, plan):
    """Write plan.json, or check it equals the one already there (a resumed run must not mix plans)."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "plan.json")
    if os.path.exists(path):
        with open(path) as f:
            if json.load(f) != plan:
                sys.exit(f"bench: {out} holds a different plan; resume it with the same options or use a new --out")
        print(f"bench: resuming {out}", flush=True)
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)


def boot(a, out, plan, instrument):
    """Run the guest runner for one instrument's workloads: in one VM boot, or here for --native.
    After a VM fault vm-run boots the guest again, up to VM_FAULT_RETRIES times, in the same results
    folder, and the runner resumes from the steps saved. Returns its exit status (125 when every boot
    faulted)."""
    guest = [os.path.join(REPO, "bench", "vrqbench", "guest.py"), out, instrument]
    if instrument == instruments.NATIVE:
        return sh(guest).returncode
    vm_args = ["--cpus", str(plan["vm"]["cpus"]), "--topology", plan["vm"]["topology"], "--timeout", str(a.timeout),
               *instruments.VM_INSTRUMENTS[instrument]["vm_args"], *(["--mem", str(a.mem)] if a.mem else [])]
    return sh([os.path.join(REPO, "tools", "vm", "vm-run"), "--fault-retries", str(VM_FAULT_RETRIES), *vm_args,
               "--out", out, "--", *guest]).returncode


def cmd_run(a):
    plan = make_plan(a)
    if a.native and (os.geteuid() != 0 or not os.path.exists("/sys/kernel/sched_ext/state")):
        sys.exit("bench: --native needs root and a sched_ext kernel")
    out = os.path.abspath(a.out or os.path.join(REPO, "bench-results", time.strftime("%Y%m%d-%H%M%S")))
    save_plan(out, plan)
    boots = instruments.boots(plan["instruments"])
    for instrument, ws in boots:
        print(f"bench: {instrument}: {', '.join(ws)}: {len(interleave(ws, plan['schedulers'], plan['runs']))} steps",
              flush=True)
    print(f"bench: results -> {out}", flush=True)

    if a.no_build:
        missing = [c[0] for c in (SCHEDULERS[s]["cmd"](REPO) for s in plan["schedulers"]
                                                if not SCHEDULERS[s].get("base"))
                   if c and not os.path.exists(c[0])]
        if missing:
            sys.exit(f"bench: --no-build, and {', '.join(sorted(set(missing)))} missing")
    elif sh([os.path.join(REPO, "tools", "build")], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("bench: build failed")
    if sh(["make", "-s", "-C", os.path.join(REPO, "bench", "src")]).returncode != 0:
        sys.exit("bench: building the probes failed")
    install_peers(list(plan["peer_versions"]))
    if a.base_binary:
        os.makedirs(os.path.dirname(os.path.join(REPO, BASE_BINARY)), exist_ok=True)
        if not os.path.exists(os.path.join(REPO, BASE_BINARY)) or not os.path.samefile(
                a.base_binary, os.path.join(REPO, BASE_BINARY)):
            shutil.copy2(a.base_binary, os.path.join(REPO, BASE_BINARY))
    err = builds.record(out, REPO, plan["schedulers"])  # which build each scx_vrq scheduler is (issue 48)
    if err:
        sys.exit(f"bench: {err}")

    failed = []
    for instrument, ws in boots:
        todo = remaining(interleave(ws, plan["schedulers"], plan["runs"]), done_steps(os.path.join(out, "results.jsonl")))
        if not todo:
            print(f"bench: {instrument}: every step already saved", flush=True)
            continue
        rc = boot(a, out, plan, instrument)
        if rc != 0:
            failed.append(f"{instrument} exited {rc}")
    if failed:
        print(f"bench: the runner {', '.join(failed)}; reporting what was saved (re-run the same command to resume)")
    reportmod.report(out)
    print(f"bench: report in {out}/report.md", flush=True)
    return 1 if failed else 0


def cmd_report(a):
    if not os.path.exists(os.path.join(a.dir, "plan.json")):
        sys.exit(f"bench: {a.dir} holds no plan.json (not a bench results folder)")
    reportmod.report(os.path.abspath(a.dir))
    print(f"bench: report in {a.dir}/report.md")
    return 0


def cmd_list(_):
    print("workloads (instrument: parallel = multi-threaded TCG, host clock; instructions = instruction-counted clock):")
    for w, d in WORKLOADS.items():
        print(f"  {w:18} {d['instrument']:12} {d['desc']} ({d['primary']}, {'higher' if d['higher'] else 'lower'} is better)"
              + (" [only when named]" if d.get("named") else ""))
    for g, ws in WORKLOAD_GROUPS.items():
        print(f"  {g:18} the {len(ws)} workloads above from {ws[0]} to {ws[-1]} (only when named)")
    print("schedulers:", ", ".join(DEFAULT_SCHEDULERS))
    named = [s for s in SCHEDULERS if s not in DEFAULT_SCHEDULERS]
    print("  only when named, scx_vrq with named flags (variants of its defaults):",
          ", ".join(s for s in named if SCHEDULERS[s].get("vrq") and not s.endswith("-again") and not SCHEDULERS[s].get("base")))
    print("  with --base-binary PATH: vrq-base (that build of scx_vrq, with its defaults), vrq-base-bfs (that build "
          "with --profile bfs)")
    print("  only when named, the floor (bench/src/floor: one shared FIFO queue, nothing else; bench cost): floor")
    print("  only when named, A/A checks (a scheduler again under another name):",
          ", ".join(s for s in named if s.endswith("-again")))
    installed = installed_peer_versions(REPO)
    print(f"peers (pinned, installed into {PEERS_ROOT} by `bench run`):")
    for s in SCHEDULERS:
        crate = peer_of(s)
        if crate:
            state = peer_state(REPO, crate, installed)
            shown = {"missing": "not installed", "pinned": "installed",
                     "unrecorded": "installed, version not recorded"}.get(
                state, f"installed {state.split()[-1]}, not the pinned version (bench run reinstalls it)")
            print(f"  {s:12} {crate:16} {PEER_VERSIONS[crate]:7} {shown}")
    return 0


def cmd_readme_table(a):
    return readme_table.run(readme=a.readme, rows=a.rows, results=a.results, check=a.check)


def cmd_goals(a):
    for entry in a.dirs:
        d, _ = goals.folder_and_scheduler(entry, a.scheduler)
        for f in ("plan.json", "results.jsonl"):
            if not os.path.exists(os.path.join(d, f)):
                sys.exit(f"bench goals: {d} is not a bench results folder (no {f})")
    return goals.run(a.dirs, scheduler=a.scheduler, out=a.out)


def parser():
    ap = argparse.ArgumentParser(prog="bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run workloads x schedulers, interleaved, then report")
    r.add_argument("--quick", action="store_true", help="3 runs of short loads (default: 10 runs, VRQ's method); "
                   "too few for a verdict: ratios with their 90%% range, n/a")
    r.add_argument("--runs", type=int, help="runs per workload and scheduler (a verdict needs 4; a claim, 20: "
                   "bench/README.md)")
    r.add_argument("--secs", type=int, help="length of the timed loads (latency, interactive, fork/wait)")
    r.add_argument("--workloads", help="comma-separated (bench list); default all but those only when named; "
                   "reqlat-surface: every point of the request/worker surface; frames: the four frame-pacing loads; "
                   "schbench: schbench at 1, 2 and 4 workers per CPU; sleeper-surface: the periodic sleeper "
                   "(project probe and cyclictest) beside CPU hogs; reqlat-open: open-loop requests at 30/60/90%% "
                   "of capacity (burst, even, poisson) and schbench -R")
    r.add_argument("--schedulers", help="comma-separated (bench list); default all but the vrq-* switch variants; eevdf is always added")
    r.add_argument("--build-units", type=int, help="C files in the build workloads' code base (default 10 quick, 24 full)")
    r.add_argument("--out", help="results folder (an existing one is resumed)")
    r.add_argument("--instrument", choices=instruments.CHOICES, default="auto",
                   help="auto (default): each workload on its own instrument (bench list); or one for all")
    r.add_argument("--trace", action="store_true",
                   help="trace the wakelat workloads' wake-ups (timer, wake-up, switch) and report where the "
                        "latest 1%% waited: on an idle CPU, on one told to reschedule (at once or lazily), or "
                        "queued (vrqbench/wakeup_trace.py); tracing adds work to every switch, so a traced run "
                        "explains an untraced one and is not compared with it")
    r.add_argument("--cgroups", choices=sessions.CHOICES, default="none",
                   help="none (default): every process in the root cgroup, as the VM boots (no systemd); "
                        "sessions: cgroup v2 laid out as systemd lays out login sessions, the measured programs "
                        "in one session's scope and each background load (the build beside a probe, the "
                        "SCHED_IDLE burners) in a scope of its own (user.slice/user-0.slice/session-N.scope, "
                        "cpu controller on, weights 100), so that cgroup weights divide the CPU between them "
                        "as they do on a desktop; there scx_vrq's default --group-accounting auto runs cgroup "
                        "(as vrq-group-cgroup does anywhere), without it session")
    r.add_argument("--base-binary", metavar="PATH",
                   help="another build of scx_vrq (a change's base) to run as vrq-base, with the defaults, "
                        "interleaved with this build's vrq-llc in the same boot; bench/vs-baseline DIR judges "
                        "the two (copied to " + BASE_BINARY + " for the guest)")
    r.add_argument("--no-build", action="store_true",
                   help="use target/release/scx_vrq as it is (do not run tools/build, which rebuilds it from the "
                        "work tree); the probes are built all the same")
    r.add_argument("--native", action="store_true", help="run here (root, sched_ext kernel), not in the VM")
    r.add_argument("--cpus", type=int, help="VM vCPUs (default: the host's cores, or what --topology gives)")
    r.add_argument("--topology", help="VM sockets:cores:threads (default 1:CPUS:1, one LLC)")
    r.add_argument("--mem", type=int, help="VM memory in MiB (default vm-run's)")
    r.add_argument("--timeout", type=int, default=36000, help="time limit of each VM boot in seconds")
    r.set_defaults(fn=cmd_run)
    p = sub.add_parser("report", help="regenerate report.md, summary.json and plots from saved results")
    p.add_argument("dir")
    p.set_defaults(fn=cmd_report)
    sub.add_parser("list", help="list workloads, schedulers and peers").set_defaults(fn=cmd_list)
    t = sub.add_parser("readme-table", help="write README.md's results table from the committed reports the row "
                       "list names (only between its markers); --check: exit 1 if the README's table differs")
    t.add_argument("--check", action="store_true", help="compare only: exit 1 (and show the difference) when the "
                   "README's table is not what the reports give")
    t.add_argument("--readme", default=readme_table.README, help="the README (default: the repository's README.md)")
    t.add_argument("--rows", default=readme_table.ROWS, help="the row list (default: bench/readme-table-rows.json)")
    t.add_argument("--results", default=readme_table.RESULTS, help="the reports' folder (default: docs/results)")
    t.set_defaults(fn=cmd_readme_table)
    g = sub.add_parser("goals", help="judge the request/worker goals (wake-up p99 <= 0.5x, request p99 <= 1.0x, "
                       "requests/s >= 0.98x EEVDF's; no peer better on both latencies at once) at every "
                       "surface and schbench point of saved results, by the 95%% intervals",
                       description=goals.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("dirs", nargs="+", metavar="DIR", help="bench results folders; a point in several is judged "
                   "from the last named; DIR=NAME judges the scheduler NAME in that folder (a variant that was "
                   "the defaults there) instead of --scheduler")
    g.add_argument("--scheduler", default=goals.DEFAULT_SCHEDULER, help="the scheduler judged (default "
                   f"{goals.DEFAULT_SCHEDULER}, scx_vrq's defaults)")
    g.add_argument("--out", metavar="FILE", help="write the table here instead of stdout")
    g.set_defaults(fn=cmd_goals)
    cost.add_parser(sub)
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    return a.fn(a)
