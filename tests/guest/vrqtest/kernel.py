"""What the kernel says: sched_ext's state and the loaded ops, its tick rate, problems and scheduler
exits in its log, CPU hotplug."""

import os
import re
import subprocess

from .env import nr_cpus, wait_for

SCX_SYSFS = "/sys/kernel/sched_ext"


def _sysfs(name, missing):
    """The stripped text of sched_ext's sysfs file `name`, or `missing` where it cannot be read."""
    try:
        with open(f"{SCX_SYSFS}/{name}") as f:
            return f.read().strip()
    except OSError:
        return missing


def scx_state():
    return _sysfs("state", "missing")


def scx_ops():
    return _sysfs("root/ops", "")


def kernel_hz():
    """CONFIG_HZ of the running kernel: sched_ext sees slice expiry at these ticks."""
    try:
        with open(f"/boot/config-{os.uname().release}") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    except OSError:
        pass
    return 250


def kernel_log_problems(since_lines=0):
    """BUG / WARNING / stall / sched_ext error lines in the kernel log after line `since_lines`."""
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()[since_lines:]
    # "stall" as a word: RCU and sched_ext stall reports, not "Installing ..."
    bad = re.compile(r"BUG:|WARNING:|\bstall|Oops")
    problems = []
    for line in out:
        if bad.search(line):
            problems.append(line.strip())
        elif "sched_ext" in line and "error" in line.lower():
            problems.append(line.strip())
    return problems


def dmesg_len():
    return len(subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines())


# sched_ext logs every exit of a BPF scheduler as `sched_ext: BPF scheduler "NAME" disabled (REASON)`.
# These reasons are exits someone asked for: the loader unregistering (Ctrl-C, SIGTERM, SIGKILL closing
# its link) and, where a test causes one, a restart: asked by the kernel (a CPU hotplug event during a
# load) or by scx_vrq itself (scx_bpf_exit: a CPU come on line that was off line at load). Anything
# else -- "runtime error", "scx_bpf_error", "runnable task stall" -- is an ejection.
ASKED_EXIT_REASONS = ("unregistered from user space",)
KERNEL_RESTART_REASON = "unregistered from the main kernel"
BPF_RESTART_REASON = "unregistered from BPF"


def scx_exits(since_lines=0):
    """(ops name, reason) of every BPF scheduler exit the kernel logged after line `since_lines`."""
    exits = []
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()[since_lines:]
    for line in out:
        if "sched_ext: BPF scheduler" in line and "disabled (" in line:
            name = line.split('"')[1] if line.count('"') >= 2 else "?"
            reason = line.rsplit("disabled (", 1)[1].rstrip().rstrip(")")
            exits.append((name, reason))
    return exits


def exits_logged(since_lines=0, timeout=10):
    """scx_exits(since_lines), waiting up to `timeout` seconds for the first: the kernel logs an exit at
    the end of its disabling work, a moment after the scheduler's state has left "enabled"."""
    wait_for(lambda: scx_exits(since_lines), timeout)
    return scx_exits(since_lines)


def ejections(since_lines=0, restarts_expected=False):
    """Exits of the scheduler nobody asked for since `since_lines`. A restart counts as asked only where
    the test caused one."""
    asked = ASKED_EXIT_REASONS + ((KERNEL_RESTART_REASON, BPF_RESTART_REASON) if restarts_expected else ())
    return [f"{name}: {reason}" for name, reason in scx_exits(since_lines) if reason not in asked]


def set_cpu_online(cpu, online):
    with open(f"/sys/devices/system/cpu/cpu{cpu}/online", "w") as f:
        f.write("1" if online else "0")


def hotpluggable_cpu():
    """The highest-numbered CPU that can go offline, or None."""
    for cpu in range(nr_cpus() - 1, 0, -1):
        if os.path.exists(f"/sys/devices/system/cpu/cpu{cpu}/online"):
            return cpu
    return None
