"""Which build of scx_vrq a report measured, and with which knob values (issue 48).

For every scx_vrq scheduler of a run (`vrq-*`: this tree's target/release/scx_vrq or the --base-binary),
`bench run` records in DIR/builds.json, before the first boot, the binary's path and sha256 and what its
`--version` says: the commit it was built at and whether the tree was dirty (build.rs stamps both). A
resumed run whose binary differs from the one recorded is refused: one scheduler name, one build. The knob
values each one ran with are those it logs when it starts ("scx_vrq VERSION on Linux RELEASE: KNOB=VALUE
..., N CPUs"), read from DIR/logs at report time (so that reports saved before builds.json existed give
theirs too) and kept in builds.json for when the logs are gone.

The defaults' knob values are committed in src/knob-defaults.txt, one KNOB=VALUE a line (scx_vrq's unit
test `defaults_by_name` fails when they differ from the loader's): the last commit that changed that file is
the last change of the default knob values, which the README's results generator (vrqbench/readme_table.py)
counts as a change of the defaults whatever the row list says."""

import glob
import hashlib
import json
import os
import re
import subprocess

from vrqbench.schedulers import SCHEDULERS

BUILDS = "builds.json"
KNOB_DEFAULTS = "src/knob-defaults.txt"
# `scx_vrq --version`: "scx_vrq 0.1.0-g0123456789ab[-dirty] TARGET"; no -g part when built outside git
VERSION_RE = re.compile(r"^scx_vrq (\S+)")
COMMIT_RE = re.compile(r"-g([0-9a-f]{7,40})(-dirty)?$")
# the loader's startup line (src/main.rs)
STARTUP_RE = re.compile(r"\bscx_vrq (\S+)(?: \S+)* on Linux (\S+): (.*), (\d+) CPUs\s*$")


def parse_version(version):
    """'0.1.0-g8bfcc85322d1-dirty' -> {"version", "commit", "dirty"}; commit and dirty None when the build
    carries no commit."""
    m = COMMIT_RE.search(version)
    return {"version": version, "commit": m.group(1) if m else None, "dirty": bool(m.group(2)) if m else None}


def describe(path):
    """What a binary says of itself: its sha256 and `--version` (parsed)."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    m = VERSION_RE.match(out.strip())
    return {"sha256": digest, **(parse_version(m.group(1)) if m else {"version": None, "commit": None, "dirty": None})}


def vrq_binaries(repo, schedulers):
    """scheduler -> (binary path, its arguments) for the scx_vrq schedulers among `schedulers`."""
    out = {}
    for s in schedulers:
        spec = SCHEDULERS[s]
        if spec.get("vrq"):
            cmd = spec["cmd"](repo)
            out[s] = (cmd[0], cmd[1:])
    return out


def record(out, repo, schedulers):
    """Write DIR/builds.json for the run's scx_vrq schedulers, or check it: returns None, or one line saying
    which scheduler's binary is not the one the folder's runs used."""
    path = os.path.join(out, BUILDS)
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    new = {}
    for s, (binary, args) in vrq_binaries(repo, schedulers).items():
        if not os.path.exists(binary):
            continue
        new[s] = {"binary": os.path.relpath(binary, repo), "args": args, **describe(binary)}
        if s in old and old[s]["sha256"] != new[s]["sha256"]:
            return (f"{s}'s binary {new[s]['binary']} ({new[s]['version']}, sha256 {new[s]['sha256'][:12]}) is not "
                    f"the one {out}'s runs used ({old[s]['version']}, {old[s]['sha256'][:12]}); use a new --out")
    with open(path, "w") as f:
        json.dump({**old, **new}, f, indent=1, sort_keys=True)
    return None


def parse_knobs(text):
    """'queue=llc rr-interval-ms=6 ...' -> {"queue": "llc", "rr-interval-ms": "6", ...}"""
    return dict(k.split("=", 1) for k in text.split() if "=" in k)


def startup(log_text):
    """The loader's startup line in a log: {"version", "commit", "dirty", "kernel", "knobs", "cpus"} or None."""
    for line in log_text.splitlines():
        m = STARTUP_RE.search(line)
        if m:
            return {**parse_version(m.group(1)), "kernel": m.group(2), "knobs": parse_knobs(m.group(3)),
                    "cpus": int(m.group(4))}
    return None


def logged(out, plan, scheduler):
    """What a scheduler's logs in DIR/logs say it ran as: the startup line of each of its runs, folded into
    one {"version", "commit", "dirty", "knobs", "runs_logged"} when every run agrees, else with "knobs_differ":
    true (and the first run's values). None when no log has the line."""
    seen = []
    for w in plan.get("workloads", []):
        prefix = f"{w}-{scheduler}-"
        for path in sorted(glob.glob(os.path.join(out, "logs", f"{glob.escape(prefix)}*.log"))):
            if not re.fullmatch(r"\d+", os.path.basename(path)[len(prefix):-4]):
                continue  # another scheduler whose name continues this one's (vrq-base-bfs after vrq-base)
            with open(path, errors="replace") as f:
                s = startup(f.read())
            if s:
                seen.append(s)
    if not seen:
        return None
    first = seen[0]
    differ = any((s["version"], s["knobs"]) != (first["version"], first["knobs"]) for s in seen[1:])
    return {"version": first["version"], "commit": first["commit"], "dirty": first["dirty"], "knobs": first["knobs"],
            "runs_logged": len(seen), **({"knobs_differ": True} if differ else {})}


def report_builds(out, plan):
    """scheduler -> what the report knows of its build: builds.json's record (binary, sha256, version,
    commit, dirty) and the logs' (knobs; version and commit when builds.json has none). The scx_vrq
    schedulers only."""
    recorded = {}
    if os.path.exists(os.path.join(out, BUILDS)):
        with open(os.path.join(out, BUILDS)) as f:
            recorded = json.load(f)
    builds = {}
    for s in plan.get("schedulers", []):
        if not SCHEDULERS.get(s, {}).get("vrq"):
            continue
        rec, log = recorded.get(s), logged(out, plan, s)
        if not rec and not log:
            continue
        b = dict(rec or {})
        for k in ("version", "commit", "dirty"):
            if b.get(k) is None and log:
                b[k] = log[k]
        if log:
            b["knobs"] = log["knobs"]
            b["runs_logged"] = log["runs_logged"]
            b.pop("knobs_differ", None)
            if log.get("knobs_differ"):
                b["knobs_differ"] = True
        builds[s] = b
    return builds


def save(out, built):
    """Keep what the logs gave in DIR/builds.json, so that a report whose logs are not kept (the committed
    reports keep none) still names its builds' knobs when regenerated."""
    if built:
        with open(os.path.join(out, BUILDS), "w") as f:
            json.dump(built, f, indent=1, sort_keys=True)


def knob_defaults(repo):
    """The committed default knob values (src/knob-defaults.txt) as {knob: value}."""
    with open(os.path.join(repo, KNOB_DEFAULTS)) as f:
        return parse_knobs(f.read())


def fingerprint(knobs):
    """A short digest of a knob set, for a report's header."""
    return hashlib.sha256(" ".join(f"{k}={v}" for k, v in sorted(knobs.items())).encode()).hexdigest()[:12]


def knob_default_changes(repo):
    """The commits that changed src/knob-defaults.txt, oldest first (full hashes): each one a change of
    the default knob values (the commit that added the file changed none)."""
    r = subprocess.run(["git", "-C", repo, "log", "--diff-filter=M", "--format=%H", "--reverse", "--", KNOB_DEFAULTS],
                       capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []
