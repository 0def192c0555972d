"""Where things are (the repository, scx_vrq, the host tests' binaries, the output folder), and two
small helpers everything uses. Importing it needs no root and no sched_ext: the host-side checks
(tools/vm/instrument_tests.py, bench/tests/check_quick_run.py) import the package too."""

import os
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCX_VRQ = os.environ.get("VRQ_BIN", os.path.join(REPO, "target", "release", "scx_vrq"))
POLICY_SIM = os.path.join(REPO, "target", "host-tests", "policy-sim")
# The folder tools/vm/vm-run shares with the host ($VM_OUT): scheduler logs and figure files go there.
OUT = os.environ.get("VM_OUT", "/tmp")


def log(msg):
    print(msg, flush=True)


def wait_for(cond, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def nr_cpus():
    return os.cpu_count()
