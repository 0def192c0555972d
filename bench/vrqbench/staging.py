"""Keeping the host's files out of measured windows (guest side).

The guest's root is the host's file system over 9p under a RAM overlay: every open of a host file is
a request the host answers. Under the instruction clock that wait turns into a jump of the guest's
clock (the run is no longer deterministic), under the host clock it is host noise. So before a boot
measures anything, each of its workloads runs once under strace, and every file any of them opened
or executed is copied into guest RAM with tools/vm/vrq-stage (which also brings an executable's
shared libraries). Each measured window then counts the 9p devices' interrupts: a step with any has
waited on the host, and the report says so."""

import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VRQ_STAGE = os.path.join(REPO, "tools", "vm", "vrq-stage")

# paths of the system calls that open or execute a file, as strace prints them: `openat(AT_FDCWD,
# "/usr/lib/x.so", ...)`, `execve("/usr/bin/make", ...)`; the result may come on a later
# "<... openat resumed>" line, so it is not read: a path that is no regular file now is skipped
_OPENED = re.compile(r'\b(?:open|openat|openat2|execve|execveat|creat)\((?:[A-Z_]+|-?\d+)?,?\s*"((?:[^"\\]|\\.)*)"')
# file systems of the guest's own, never the host's
_GUEST_ONLY = ("/proc/", "/sys/", "/dev/", "/run/")


def traced_paths(trace_text, exclude=()):
    """The absolute paths opened or executed in a strace log, once each, in first-seen order, less
    the guest's own file systems and the folders in `exclude` (the shared output folder: it is the
    host's and cannot be staged)."""
    seen = {}
    for m in _OPENED.finditer(trace_text):
        path = m.group(1)
        if not path.startswith("/") or "\\" in path or path.startswith(_GUEST_ONLY):
            continue
        if any(path == e or path.startswith(e.rstrip("/") + "/") for e in exclude):
            continue
        seen.setdefault(path, None)  # as opened: vrq-stage resolves it (a ".." after a symlink is not lexical)
    return list(seen)


def trace(cmd, log_path):
    """Run `cmd` under strace, following every child; only the opening and executing calls stop
    (--seccomp-bpf), so the traced run is not much slower. Returns cmd's exit status."""
    return subprocess.run(["strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=open,openat,openat2,execve,execveat,creat",
                           "-o", log_path, *cmd]).returncode


def stage(paths):
    """Copy the regular files among `paths` into guest RAM (tools/vm/vrq-stage). Returns how many.
    A file vrq-stage cannot copy is reported and the rest still staged: the measured steps' 9p
    counts then show whether it mattered."""
    running = running_executables()
    files = [p for p in paths if os.path.isfile(p) and os.path.realpath(p) not in running]
    for i in range(0, len(files), 500):  # a few hundred per call keeps the command line short
        rc = subprocess.run([VRQ_STAGE, *files[i:i + 500]]).returncode
        if rc != 0:
            print(f"bench: vrq-stage exited {rc} on files {i + 1}-{min(i + 500, len(files))}", flush=True)
    return len(files)


def running_executables():
    """The programs running now (their /proc/PID/exe): Linux refuses to open one for writing
    (ETXTBSY), so vrq-stage cannot copy them; they are loaded already, and a measured step does not
    start them again (the runner's own Python)."""
    exes = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                exes.add(os.path.realpath(os.readlink(f"/proc/{pid}/exe")))
            except OSError:
                pass  # a kernel thread, or gone
    return exes


def ninep_irq_lines(virtio_root="/sys/bus/virtio/drivers/9pnet_virtio"):
    """The /proc/interrupts names of the 9p devices' request queues ("virtio0-requests"), [] when
    there is no 9p (a native run)."""
    try:
        devices = sorted(d for d in os.listdir(virtio_root) if d.startswith("virtio"))
    except OSError:
        return []
    return [f"{d}-requests" for d in devices]


def irq_count(names, interrupts_text):
    """The interrupts so far on the lines of /proc/interrupts whose name is in `names`, summed over
    CPUs."""
    total = 0
    for line in interrupts_text.splitlines()[1:]:
        fields = line.split()
        if fields and fields[-1] in names:
            total += sum(int(x) for x in fields[1:] if x.isdigit())
    return total


class HostFileWaits:
    """Counts the 9p requests the host answered (their interrupts) over a measured window; None
    where there is no 9p."""

    def __init__(self):
        self.names = ninep_irq_lines()

    def now(self):
        if not self.names:
            return None
        with open("/proc/interrupts") as f:
            return irq_count(self.names, f.read())
