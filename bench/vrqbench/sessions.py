"""Login sessions as systemd lays them out in cgroup v2 (`bench run --cgroups sessions`).

On a systemd machine every login session is a scope cgroup, `user.slice/user-UID.slice/session-ID.scope`,
with the cpu controller on from the root down, so the kernel's scheduler divides the CPU between
sessions first (each at `cpu.weight` 100) and between a session's tasks second. The bench's VM boots
without systemd: every process is in the root cgroup, which no cgroup-aware rule can tell apart. With
this layout the runner and every workload's measured program run in the first session's scope, and each
background load (a build that keeps building, a CPU burner), which the workloads already start as a
new Unix session, also gets a new scope, as a second login would. The scheduler under test is
started by the runner, so its own process sits in the runner's scope (systemd would run it in
`system.slice`; it sleeps between its stats reads). Needs root; the hierarchy is removed at the end."""

import itertools
import os

from vrqtest.cgroup import CGROUP_ROOT, Hierarchy, remove_tree

CHOICES = ("none", "sessions")
USER_SLICE = "user.slice"
USER = "user-0.slice"


class Sessions:
    """`user.slice/user-0.slice/session-cK.scope` (logind's name for a session with no audit id) made as each
    session starts; the first is the runner's."""

    def __init__(self):
        self.hierarchy = Hierarchy(USER_SLICE)
        self.numbers = itertools.count(1)
        self.runner = None

    def setup(self):
        """Mount cgroup2 and enable cpu where nothing has, and move this process (the runner, whose
        children the measured programs are) into the first session's scope."""
        self.hierarchy.setup()
        self.runner = self.new_scope()
        self.runner.add(os.getpid())
        return self

    def new_scope(self):
        return self.hierarchy.cgroup(os.path.join(USER, f"session-c{next(self.numbers)}.scope"))

    def teardown(self):
        """Back to the root cgroup, every scope removed (their processes, if any, moved to the root)."""
        with open(os.path.join(CGROUP_ROOT, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        self.hierarchy.teardown()

    @staticmethod
    def remove(scope):
        remove_tree(scope.path)
