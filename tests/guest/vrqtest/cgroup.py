"""cgroup v2 for the tests (tests/guest/cgroup_tests.py): the hierarchy mounted and the cpu controller
enabled as systemd leaves them (cgroup2 at /sys/fs/cgroup, `+cpu` in cgroup.subtree_control of the root
and of every parent), cgroups made, weighted, filled and removed, their CPU time read from the kernel
(cpu.stat usage_usec), and what the running kernel's sched_ext can do with them. Needs root; imported
on its own (`from vrqtest.cgroup import ...`), not through the package's __init__."""

import errno
import os
import subprocess
import time

CGROUP_ROOT = "/sys/fs/cgroup"


def _mounted_cgroup2(path=CGROUP_ROOT):
    with open("/proc/mounts") as f:
        return any(l.split()[1] == path and l.split()[2] == "cgroup2" for l in f)


def _write(path, text):
    with open(path, "w") as f:
        f.write(str(text))


def _read(path):
    with open(path) as f:
        return f.read().strip()


class Hierarchy:
    """The suite's own subtree, `CGROUP_ROOT/name`, with the cpu controller on from the root down, as
    systemd sets it up; setup() mounts cgroup2 where nothing has (a guest without systemd), teardown()
    removes the subtree and undoes what setup() changed (the mount, `+cpu` at the root)."""

    def __init__(self, name="vrqtest"):
        self.path = os.path.join(CGROUP_ROOT, name)
        self.mounted_here = False
        self.cpu_enabled_here = False

    def mount(self):
        """cgroup2 at CGROUP_ROOT, mounted here where nothing has (teardown() unmounts it), the cpu
        controller not yet touched."""
        if not _mounted_cgroup2():
            os.makedirs(CGROUP_ROOT, exist_ok=True)
            subprocess.run(["mount", "-t", "cgroup2", "cgroup2", CGROUP_ROOT], check=True)
            self.mounted_here = True
        return self

    def setup(self):
        self.mount()
        if "cpu" not in _read(f"{CGROUP_ROOT}/cgroup.controllers").split():
            raise RuntimeError("the cgroup2 root offers no cpu controller (cgroup.controllers: "
                               f"{_read(f'{CGROUP_ROOT}/cgroup.controllers')})")
        if "cpu" not in _read(f"{CGROUP_ROOT}/cgroup.subtree_control").split():
            _write(f"{CGROUP_ROOT}/cgroup.subtree_control", "+cpu")
            self.cpu_enabled_here = True
        remove_tree(self.path)  # left by an interrupted run
        os.mkdir(self.path)
        enable_cpu(self.path)
        return self

    def teardown(self):
        remove_tree(self.path)
        if self.cpu_enabled_here:
            try:
                _write(f"{CGROUP_ROOT}/cgroup.subtree_control", "-cpu")
            except OSError:
                pass  # another cgroup still uses it: leave it on
        if self.mounted_here:
            subprocess.run(["umount", CGROUP_ROOT], check=False)

    def cgroup(self, rel, weight=None, idle=None):
        """A new cgroup at `rel` (a path below the suite's subtree; its parents are made, with +cpu)."""
        return Cgroup.make(os.path.join(self.path, rel), weight=weight, idle=idle)


def cpu_enabled_at_root():
    """Whether the root cgroup's cgroup.subtree_control enables the cpu controller (what scx_vrq's
    --group-accounting auto reads)."""
    return "cpu" in _read(f"{CGROUP_ROOT}/cgroup.subtree_control").split()


def enable_cpu(path):
    if "cpu" not in _read(f"{path}/cgroup.subtree_control").split():
        _write(f"{path}/cgroup.subtree_control", "+cpu")


class Cgroup:
    """One cgroup v2 directory."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)

    @classmethod
    def make(cls, path, weight=None, idle=None):
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            Cgroup.make(parent)
        enable_cpu(parent)
        os.mkdir(path)
        cg = cls(path)
        if weight is not None:
            cg.set_weight(weight)
        if idle is not None:
            cg.set_idle(idle)
        return cg

    def set_weight(self, weight):
        _write(f"{self.path}/cpu.weight", weight)

    def weight(self):
        return int(_read(f"{self.path}/cpu.weight"))

    def set_idle(self, idle):
        _write(f"{self.path}/cpu.idle", int(idle))

    def add(self, pid):
        """Move `pid` (a whole process) here."""
        _write(f"{self.path}/cgroup.procs", pid)

    def procs(self):
        return [int(p) for p in _read(f"{self.path}/cgroup.procs").split()]

    def usage_us(self):
        """CPU time of every task in it and below, in µs, as the kernel counts it (cpu.stat usage_usec:
        the same sum_exec_runtime whatever the scheduling class)."""
        for line in _read(f"{self.path}/cpu.stat").splitlines():
            k, v = line.split()
            if k == "usage_usec":
                return int(v)
        raise RuntimeError(f"{self.path}/cpu.stat has no usage_usec")

    def spawn(self, cmd, **kw):
        """`cmd` started inside this cgroup (it moves itself before exec, so none of its run is counted
        elsewhere)."""
        procs_file = f"{self.path}/cgroup.procs"

        def enter():
            with open(procs_file, "w") as f:
                f.write("0")
        return subprocess.Popen(cmd, preexec_fn=enter, **kw)

    def rmdir(self):
        os.rmdir(self.path)


def cgroup_of(pid):
    """The cgroup v2 path of `pid` (below CGROUP_ROOT), or None for a pid that is gone."""
    try:
        for line in _read(f"/proc/{pid}/cgroup").splitlines():
            if line.startswith("0::"):
                return CGROUP_ROOT + line[3:].rstrip("/") if line[3:] != "/" else CGROUP_ROOT
    except OSError:
        return None
    return None


def remove_tree(path, timeout=30):
    """Remove the cgroup at `path` and everything below, deepest first; processes still inside are
    moved to the root first (a test's leftovers). Waits up to `timeout` s for each to empty."""
    if not os.path.isdir(path):
        return
    for dirpath, dirnames, _ in os.walk(path, topdown=False):
        for d in dirnames:
            remove_tree_one(os.path.join(dirpath, d), timeout)
    remove_tree_one(path, timeout)


def remove_tree_one(path, timeout):
    end = time.monotonic() + timeout
    while True:
        try:
            for pid in _read(f"{path}/cgroup.procs").split():
                try:
                    _write(f"{CGROUP_ROOT}/cgroup.procs", pid)
                except OSError:
                    pass
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > end:
                raise
            time.sleep(0.05)


def kernel_symbol(name):
    """True when /proc/kallsyms names `name` (a function of the running kernel)."""
    with open("/proc/kallsyms") as f:
        return any(line.split()[2] == name for line in f if len(line.split()) >= 3)


def scx_cgroup_idle_supported():
    """The running kernel passes cpu.idle to a sched_ext scheduler (ops.cgroup_set_idle, Linux 6.19 on):
    without it a sched_ext scheduler never learns that a cgroup is idle. Told by the struct_ops stub of
    that member (sched_ext_ops__cgroup_set_idle), not by scx_group_set_idle: 6.12 has that function
    too, which only warns that the scheduler cannot honour cpu.idle."""
    return kernel_symbol("sched_ext_ops__cgroup_set_idle")


def scx_deadline_server():
    """The running kernel has sched_ext's deadline server (Linux 7.0 on): sched_ext tasks get some CPU
    even where real-time tasks take all of it, as the fair class's server gives CFS tasks."""
    return kernel_symbol("ext_server_pick_task")
