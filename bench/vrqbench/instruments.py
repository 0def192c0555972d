"""The instruments a bench run measures with, and which workload goes on which.

No emulated machine shows everything: multi-threaded TCG runs the vCPUs in parallel on host threads,
so it shows throughput, but the host's load leaks into every guest time; the instruction clock
(QEMU -icount) makes guest time count executed instructions, so latencies and the scheduler's own
cost are free of the host, but all vCPUs share one host thread and parallel speed-up is 1 by
construction. So each workload runs on the instrument that can see it (WORKLOADS[w]["instrument"]),
and `bench run` boots once per instrument.

    parallel      multi-threaded TCG (or KVM where it works), host clock, vCPUs <= host cores
    instructions  single-threaded TCG, instruction-counted clock, everything the workloads run or
                  read staged into guest RAM first (vrqbench/staging.py)
    native        the machine bench runs on (--native)
"""

import os

from vrqbench.workloads import WORKLOADS

# instrument -> tools/vm/vm-run options, and the settings its `instrument` file must then show
VM_INSTRUMENTS = {
    "parallel": {"vm_args": ["--tcg-threads", "multi", "--clock", "host"], "clock": "host"},
    "instructions": {"vm_args": ["--accel", "tcg", "--clock", "instructions"], "clock": "instructions"},
}
NATIVE = "native"
CHOICES = ("auto", *VM_INSTRUMENTS)  # what --instrument accepts


def assign(workloads, choice="auto", native=False):
    """workload -> instrument: each workload's own (auto), one forced for all, or native."""
    if native:
        if choice != "auto":
            raise ValueError(f"--instrument {choice} is a VM instrument; --native measures on this machine")
        return {w: NATIVE for w in workloads}
    if choice == "auto":
        return {w: WORKLOADS[w]["instrument"] for w in workloads}
    if choice not in VM_INSTRUMENTS:
        raise ValueError(f"unknown instrument {choice!r} (one of {', '.join(CHOICES)})")
    return {w: choice for w in workloads}


def boots(assignment):
    """[(instrument, [workloads])], one entry per boot: the parallel instrument first (it is the
    quicker), then the instruction clock; workloads keep the order they were given in."""
    order = ["parallel", "instructions", NATIVE]
    used = sorted(set(assignment.values()), key=order.index)
    return [(inst, [w for w, i in assignment.items() if i == inst]) for inst in used]


def host_cores():
    """Host cores this process may run on: a parallel guest with more vCPUs than this is
    overcommitted, and its timings measure the host's scheduler as much as the guest's."""
    return len(os.sched_getaffinity(0))


def vm_shape(cpus, topology, cores):
    """(vCPUs, "S:C:T", warning or None) from --cpus and --topology, either or both left out: vCPUs
    default to the host's cores (`cores`), the topology to one socket (one LLC) of single-threaded
    cores. Raises ValueError on a malformed or inconsistent pair."""
    if topology is not None:
        parts = topology.split(":")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"--topology {topology!r} is not S:C:T (three positive numbers)")
        product = int(parts[0]) * int(parts[1]) * int(parts[2])
        if cpus is None:
            cpus = product
        elif cpus != product:
            raise ValueError(f"--cpus {cpus} is not sockets x cores x threads of --topology {topology} ({product})")
    if cpus is None:
        cpus = cores
    if cpus < 1:
        raise ValueError("--cpus must be at least 1")
    if topology is None:
        topology = f"1:{cpus}:1"
    warning = None
    if cpus > cores:
        warning = (f"{cpus} vCPUs on {cores} host cores: the parallel instrument's guest is overcommitted, "
                   f"its throughput numbers include the host's own scheduling")
    return cpus, topology, warning


def check_settings(instrument, settings):
    """None when the `instrument` file vm-run wrote (parsed into `settings`) shows what `instrument`
    asks for, else why not: numbers taken on another instrument must never be labelled as this one."""
    want = VM_INSTRUMENTS[instrument]
    if settings.get("clock") != want["clock"]:
        return f"the {instrument} instrument needs clock {want['clock']}, the guest runs clock {settings.get('clock')}"
    if instrument == "instructions" and settings.get("tcg_threads") != "single":
        return f"the instruction clock runs single-threaded TCG, the guest runs {settings.get('tcg_threads')}"
    if instrument == "parallel" and settings.get("accel") == "tcg" and settings.get("tcg_threads") != "multi":
        return f"the parallel instrument runs multi-threaded TCG, the guest runs {settings.get('tcg_threads')}"
    return None


def read_settings(path):
    """The `instrument` file tools/vm/vm-run writes into its output folder ("key: value" lines: qemu,
    accel, tcg_threads, clock, cpus, topology, host_cores) as a dict, with a one-line description."""
    fields = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip():
                fields[key.strip()] = value.strip()
    if fields.get("accel") == "kvm":
        fields["desc"] = f"{fields.get('qemu', 'QEMU ?')}, KVM, clock host"
    else:
        fields["desc"] = (f"{fields.get('qemu', 'QEMU ?')}, TCG {fields.get('tcg_threads', '?')}-threaded, "
                          f"clock {fields.get('clock', '?')}")
    for key in ("cpus", "host_cores"):
        fields[key] = int(fields[key]) if fields.get(key, "").isdigit() else None
    return fields
