"""The bench's schedulers: how to start each one, and the peers' pinned versions.

The peers are other sched_ext schedulers from the scx project, installed with `cargo install` into
.bench-cache/peers at the version pinned here, so that two bench runs months apart compare the same
code. Each peer has its own pin: the scx crates are released independently."""

import json
import os

PEERS_ROOT = ".bench-cache/peers"  # cargo install --root
PEERS_DIR = f"{PEERS_ROOT}/bin"
PEER_TARGET_DIR = ".bench-cache/peer-target"  # one CARGO_TARGET_DIR shared by every peer's build

# crate (and binary) name -> pinned version
PEER_VERSIONS = {
    "scx_bpfland": "1.1.4",
    "scx_lavd": "1.1.4",
    "scx_flash": "1.1.4",
    "scx_cosmos": "1.1.7",
    "scx_beerland": "1.1.4",
    # added for issue 29 (2026-11-26): a newer peer that publishes saturated wake-up latency, and two more of
    # the scx project's
    "scx_pandemonium": "5.23.1",
    "scx_p2dq": "1.1.4",
    "scx_cake": "1.2.2",
}


# Where `bench run --base-binary PATH` puts the build it names (inside the repository, which the guest
# sees): scheduler vrq-base runs it with scx_vrq's defaults, so that a change and its base interleave in
# one boot and vs-baseline judges one against the other.
BASE_BINARY = "target/variants/scx_vrq-base"


def _vrq(*args):
    return lambda repo: [f"{repo}/target/release/scx_vrq", *args]


def _peer(crate):
    return lambda repo: [f"{repo}/{PEERS_DIR}/{crate}"]


# name -> how to start it (None: the kernel's own scheduler), whether it serves scx_vrq's stats, which
# peer crate it is, and whether it is one of scx_vrq's off-by-default switches (run only when named)
SCHEDULERS = {
    "eevdf": {"cmd": lambda repo: None},
    "vrq-global": {"cmd": _vrq("--queue", "global"), "vrq": True},
    "vrq-llc": {"cmd": _vrq("--queue", "llc"), "vrq": True},
    # another build's defaults (--base-binary: the base of a change), beside vrq-llc, this build's
    "vrq-base": {"cmd": lambda repo: [f"{repo}/{BASE_BINARY}", "--queue", "llc"], "vrq": True, "variant": True,
                 "base": True},
    # the same build as BFS was (--profile bfs): a change's base and pure BFS from one binary
    "vrq-base-bfs": {"cmd": lambda repo: [f"{repo}/{BASE_BINARY}", "--profile", "bfs"], "vrq": True,
                     "variant": True, "base": True},
    "vrq-cpu": {"cmd": _vrq("--queue", "cpu"), "vrq": True},
    "bpfland": {"cmd": _peer("scx_bpfland"), "peer": "scx_bpfland"},
    "lavd": {"cmd": _peer("scx_lavd"), "peer": "scx_lavd"},
    "flash": {"cmd": _peer("scx_flash"), "peer": "scx_flash"},
    "cosmos": {"cmd": _peer("scx_cosmos"), "peer": "scx_cosmos"},
    "beerland": {"cmd": _peer("scx_beerland"), "peer": "scx_beerland"},
    "pandemonium": {"cmd": _peer("scx_pandemonium"), "peer": "scx_pandemonium"},
    "p2dq": {"cmd": _peer("scx_p2dq"), "peer": "scx_p2dq"},
    "cake": {"cmd": _peer("scx_cake"), "peer": "scx_cake"},
    # group accounting by (Unix) session is the default since 1e291d8 (2026-11-24); by thread, and off (plain BFS
    # shares)
    "vrq-group-thread": {"cmd": _vrq("--group-accounting", "thread"), "vrq": True, "variant": True},
    "vrq-group-off": {"cmd": _vrq("--group-accounting", "off"), "vrq": True, "variant": True},
    # cgroup v2 cpu.weight along the tree (issue 30): run with `bench run --cgroups sessions`, or every task is
    # in the root cgroup, whose tasks compete each as its own entity (as with group accounting off)
    "vrq-group-cgroup": {"cmd": _vrq("--group-accounting", "cgroup"), "vrq": True, "variant": True},
    "vrq-depth": {"cmd": _vrq("--fork-depth-penalty"), "vrq": True, "variant": True},
    "vrq-cpu-sticky": {"cmd": _vrq("--queue", "cpu", "--sticky"), "vrq": True, "variant": True},
    # sticky tasks inside the one shared queue: a task stopped mid-work counts as one rr_interval later to its
    # queue's other CPUs (issue 29, 2026-11-27: schbench's worker moved mid-request)
    "vrq-sticky": {"cmd": _vrq("--sticky"), "vrq": True, "variant": True},
    # a long runner preempted by the task it woke keeps its turn and starts its next run on a whole slice
    # (--handoff-slice, on by default since 2026-11-27; issue 29): off, to compare with the defaults
    "vrq-handoff-slice-off": {"cmd": _vrq("--handoff-slice", "false"), "vrq": True, "variant": True},
    # a task preempted by a kernel thread bound to its CPU, nothing else waiting, resumes there behind it
    # (--stay-behind-kthread, issue 29: build-50's compilers moved in mid-run): off, to compare with the defaults
    "vrq-stay-behind-kthread-off": {"cmd": _vrq("--stay-behind-kthread", "false"), "vrq": True, "variant": True},
    # a vfork child runs on its parent's CPU and its exec's wake-up of the parent preempts nobody (--vfork-handoff,
    # issue 29): off, to compare with the defaults
    "vrq-vfork-handoff-off": {"cmd": _vrq("--vfork-handoff", "false"), "vrq": True, "variant": True},
    # a shorter turn (--rr-interval-ms 3, half the default): at 10 ms x 4 workers per CPU a request's longest
    # wait for a CPU was a round of the others' 6 ms turns (issue 29's request tail; traced 2026-11-27)
    "vrq-rr-3": {"cmd": _vrq("--rr-interval-ms", "3"), "vrq": True, "variant": True},
    # a bound on the round instead (--max-round-ms): turns keep rr_interval until a round of the queued tasks
    # per CPU would last longer than this, then shrink to fit it -- 4 workers per CPU get ~4 ms (12) or ~3.3 ms
    # (10), while 1-2 waiting per CPU (a build's compilers) keep 6 ms (issue 45's grain)
    **{f"vrq-round-{ms}": {"cmd": _vrq("--max-round-ms", str(ms)), "vrq": True, "variant": True} for ms in (10, 12)},
    # the round target (--round-target-ms, issue 45's grain through the queues' clock: every queued task speeds
    # the clock while a round would pass it) off, and its neighbours, to compare with the defaults
    "vrq-round-target-off": {"cmd": _vrq("--round-target-ms", "0"), "vrq": True, "variant": True},
    **{f"vrq-round-target-{ms}": {"cmd": _vrq("--round-target-ms", str(ms)), "vrq": True, "variant": True}
       for ms in (8, 18, 24)},
    # the wake-up path as BFS has it (every wake-up rule of 2026-11-23 off), to compare with the defaults
    "vrq-bfs-wakeup": {"cmd": _vrq("--wake-credit", "0", "--preempt-local", "false", "--sync-handoff", "false",
                                   "--target-latency-ms", "0"), "vrq": True, "variant": True},
    # BFS as it was (--profile bfs: one queue, every mechanism beyond BFS off)
    "vrq-bfs": {"cmd": _vrq("--profile", "bfs"), "vrq": True, "variant": True},
    # one wake-up rule off at a time (a pipe's round trip on the parallel instrument, 16be1e5, 2026-11-25)
    "vrq-sync-handoff-off": {"cmd": _vrq("--sync-handoff", "false"), "vrq": True, "variant": True},
    "vrq-preempt-local-off": {"cmd": _vrq("--preempt-local", "false"), "vrq": True, "variant": True},
    "vrq-wake-credit-off": {"cmd": _vrq("--wake-credit", "0"), "vrq": True, "variant": True},
    # --wake-credit's sweep (issue 28, item 6): the credit is a share of the deadline offset, 0-100 %
    # (0 is the default since 2026-11-26, vrq-llc and vrq-wake-credit-off; 50 was the default before)
    **{f"vrq-wake-credit-{pct}": {"cmd": _vrq("--wake-credit", str(pct)), "vrq": True, "variant": True}
       for pct in (25, 50, 75, 100)},
    # the wake-up credit and under-share first both off: they place the same wake-ups (2026-11-26-wake-credit's
    # counters), so each alone may stand in for the other
    "vrq-credit-share-off": {"cmd": _vrq("--wake-credit", "0", "--under-share-first", "false"), "vrq": True,
                             "variant": True},
    # the target latency (2 ms by default since 215a64e, 2026-11-23) at 2 and 3 ms by name: turns shortened while
    # latency waiters wait, never below --target-floor-us (1 ms); the other floors measured for its default
    # ("-floor250": the floor before 3a5bb78 (2026-11-23), target / 8, hackbench's 250 us turns)
    "vrq-target-2ms": {"cmd": _vrq("--target-latency-ms", "2"), "vrq": True, "variant": True},
    "vrq-target-3ms": {"cmd": _vrq("--target-latency-ms", "3"), "vrq": True, "variant": True},
    # a target of 4 ms: the floor's reach (target / floor per CPU) at 4 latency waiters per CPU, so their turns hold
    # at the floor there instead of growing back (issue 45's wake-up tail at 1 ms x 4 workers per CPU)
    "vrq-target-4ms": {"cmd": _vrq("--target-latency-ms", "4"), "vrq": True, "variant": True},
    **{f"vrq-target-2ms-floor{us}": {"cmd": _vrq("--target-latency-ms", "2", "--target-floor-us", str(us)),
                                      "vrq": True, "variant": True} for us in (250, 500, 1500, 2000)},
    # short runners (--short-run-us, on by default since 2736127, 2026-11-25) not counted toward the target latency
    "vrq-short-run-off": {"cmd": _vrq("--short-run-us", "0"), "vrq": True, "variant": True},
    # short runners counted, their slices not renewed at a run's end (--short-run-renew, on since 754056b, 2026-11-25)
    "vrq-short-run-renew-off": {"cmd": _vrq("--short-run-renew", "false"), "vrq": True, "variant": True},
    # under-share wake-ups not placed first (--under-share-first, on since 421fe1a, 2026-11-25)
    "vrq-under-share-off": {"cmd": _vrq("--under-share-first", "false"), "vrq": True, "variant": True},
    # latency waiters' turns held at the floor to the round target's reach (--hold-floor, off by default; issue 45's
    # wake-up tail at 1 ms x 4 workers per CPU: past the target's reach their turns grew to a whole request)
    "vrq-hold-floor": {"cmd": _vrq("--hold-floor"), "vrq": True, "variant": True},
    # the target latency off (the default until 215a64e, 2026-11-23)
    "vrq-target-off": {"cmd": _vrq("--target-latency-ms", "0"), "vrq": True, "variant": True},
    # frequency-aware CPU selection (--freq-threshold, off by default): what it costs per wake-up (issue 47)
    "vrq-freq-50": {"cmd": _vrq("--freq-threshold", "50"), "vrq": True, "variant": True},
    # the floor (bench/src/floor, built into target/bench): one shared FIFO queue, a waking task straight to
    # an idle CPU, nothing else -- what sched_ext itself costs, beside what scx_vrq adds (issue 47)
    "floor": {"cmd": lambda repo: [f"{repo}/target/bench/scx_floor"], "variant": True},
    # A/A runs: the same scheduler under another name, to check that the verdict rule calls a scheduler level
    # with itself (issue 27). eevdf-again starts nothing, as eevdf (the runner keys on cmd None, not on the
    # name); vrq-llc-again is vrq-llc's command
    "eevdf-again": {"cmd": lambda repo: None, "variant": True},
    "vrq-llc-again": {"cmd": _vrq("--queue", "llc"), "vrq": True, "variant": True},
}

# what `bench run` compares when --schedulers is not given
DEFAULT_SCHEDULERS = [name for name, spec in SCHEDULERS.items() if not spec.get("variant")]


def peer_of(scheduler):
    """The peer crate a scheduler runs, or None for EEVDF, scx_vrq and a name no longer in SCHEDULERS (a
    saved report's scx_vrq variant since renamed or removed: vrq-handoff-slice, the rule on before it
    became the default; `bench run` refuses unknown names before it asks)."""
    return SCHEDULERS.get(scheduler, {}).get("peer")


def installed_peer_versions(repo):
    """crate -> version of what `cargo install --root` put into .bench-cache/peers, from the
    .crates2.json it keeps there (keys read "NAME VERSION (SOURCE)"); {} when nothing is installed."""
    path = os.path.join(repo, PEERS_ROOT, ".crates2.json")
    try:
        with open(path) as f:
            installs = json.load(f).get("installs", {})
    except (OSError, ValueError):
        return {}
    versions = {}
    for key in installs:
        parts = key.split()
        if len(parts) >= 2:
            versions[parts[0]] = parts[1]
    return versions


def peer_state(repo, crate, installed=None):
    """One of "missing" (no binary), "pinned" (the binary of the pinned version), "unpinned VERSION"
    (cargo installed another version) or "unrecorded" (a binary cargo has no record of)."""
    if not os.path.exists(os.path.join(repo, PEERS_DIR, crate)):
        return "missing"
    if installed is None:
        installed = installed_peer_versions(repo)
    version = installed.get(crate)
    if version is None:
        return "unrecorded"
    return "pinned" if version == PEER_VERSIONS[crate] else f"unpinned {version}"
