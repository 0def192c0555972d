#!/usr/bin/python3
"""Tests of the measuring instrument itself: the QEMU guest of tools/vm/vm-run, run from the host.

- Parallel mode (multi-threaded TCG, the default) runs two CPU-bound threads on 2 vCPUs; their
  speed-up (2*t1/t2, ~1.95 on an idle 2-core host) is reported as a FIGURE, not checked: it measures
  how many host cores were free while it ran (another VM beside it halves it), not anything of the
  project's. `tools/vm/instrument_tests.py` alone on an idle host is the way to read it.
- Instruction-counted mode (--clock instructions) gives the same guest time for the same in-RAM
  work: repeated runs of one staged CPU loop agree within 1%.
- The settings a run was measured with are recorded (QEMU >= 10, thread mode, clock) and refused
  combinations are refused.

Ends with "instrument: N passed, N failed". After a VM fault (vm-run exit 125) vm-run boots the guest
once more (--fault-retries 1); a fault never counts as a pass.

It sits beside the VM it tests. tools/test runs it; by hand, `source tools/env.sh` first (its
PYTHONPATH finds vrqtest, for Results: tests/guest/vrqtest/__init__.py).
"""

import os
import re
import subprocess
import sys
import tempfile

from vrqtest import Results  # the suites' PASS / FAIL / FIGURE lines and closing line

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VM_RUN = os.path.join(REPO, "tools", "vm", "vm-run")
SPIN = os.path.join(REPO, "target", "bench", "spin")
VM_FAULT = 125

results = Results(figures_dir=None)
check = results.check


# Printed by the guest first: what follows the last one is the output of the boot that counts.
BOOT_MARK = "instrument: the command starts"


def vm(opts, script):
    """Run `script` (bash) in a guest with vm-run `opts`; after a VM fault vm-run boots it once more
    (--fault-retries 1). Returns (exit status, the last boot's output and vm-run's messages, the
    run's folder)."""
    out = tempfile.mkdtemp(prefix="vrq-instrument.")
    p = subprocess.run([VM_RUN, "--fault-retries", "1", *opts, "--timeout", "600", "--out", out, "--",
                        "bash", "-c", f"echo '{BOOT_MARK}'; {script}"], capture_output=True, text=True, cwd=REPO)
    for line in p.stderr.splitlines():
        if line.startswith("vm-run: VM fault ("):
            print(f"instrument: {line} (not an instrument result)", flush=True)
    if p.returncode == VM_FAULT:
        print("instrument: VM fault twice (not an instrument result)", flush=True)
    return p.returncode, p.stdout.rsplit(BOOT_MARK, 1)[-1] + p.stderr, out


def spin_times(output, threads):
    return [float(m.group(1)) for m in re.finditer(rf"secs=([0-9.]+) threads={threads}\b", output)]


def instrument_file(out):
    fields = {}
    try:
        with open(os.path.join(out, "instrument")) as f:
            for line in f:
                k, _, v = line.partition(":")
                fields[k.strip()] = v.strip()
    except OSError:
        pass
    return fields


def test_refusals():
    p = subprocess.run([VM_RUN, "--clock", "instructions", "--tcg-threads", "multi", "true"],
                       capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    check("--clock instructions with --tcg-threads multi is refused in one line",
          p.returncode == 2 and len(lines) == 1 and "single" in lines[0], p.stderr.strip())
    p = subprocess.run([VM_RUN, "--clock", "sundial", "true"], capture_output=True, text=True)
    check("an unknown --clock is refused", p.returncode == 2 and "--clock" in p.stderr, p.stderr.strip())
    # --numa N splits the sockets evenly over N nodes: a count that does not divide them (or exceeds
    # them) is one clear line and exit 2, before anything boots
    for n, topo in (("3", "4:4:2"), ("8", "4:4:2"), ("0", "4:4:2")):
        p = subprocess.run([VM_RUN, "--cpus", "32", "--topology", topo, "--numa", n, "true"],
                           capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        check(f"--numa {n} with --topology {topo} is refused in one line",
              p.returncode == 2 and len(lines) == 1 and "--numa" in lines[0], p.stderr.strip())


def test_overcommit_warning():
    cpus = os.cpu_count() + 1
    rc, output, _ = vm(["--cpus", str(cpus), "--tcg-threads", "multi"], "true")
    warnings = [line for line in output.splitlines() if "overcommitted" in line]
    check(f"{cpus} vCPUs on {os.cpu_count()} host cores in parallel mode: one warning that timings are overcommitted",
          rc == 0 and len(warnings) == 1, f"exit {rc}, {warnings}")


def run_spins(mode, vm_args, script):
    """Run @script (staged spins) in a guest with @vm_args; None (and a failed check) if it did not run,
    else its output and the run's recorded instrument settings."""
    rc, output, out = vm(vm_args + ["--stage", SPIN], script)
    if not check(f"{mode}: the spins ran", rc == 0, f"vm-run exit {rc}" if rc else ""):
        print(output[-2000:])
        return None
    return output, instrument_file(out)


def load_note():
    """The host's 1-minute load average: how busy the cores the speed-up needs were."""
    try:
        return f"host load average {os.getloadavg()[0]:.1f}"
    except OSError:
        return "host load unknown"


def test_parallel():
    iters = 200_000_000
    # Interleaved, so a burst of host load hits both sizes alike; the best of each is the least disturbed.
    script = f"for i in 1 2 3; do {SPIN} {iters} 1; {SPIN} {iters} 2; done; echo clock=$VRQ_CLOCK"
    ran = run_spins("parallel mode", ["--cpus", "2", "--tcg-threads", "multi"], script)
    if ran is None:
        return
    output, fields = ran
    version = re.search(r"version (\d+)\.", fields.get("qemu", ""))
    check("the run records QEMU >= 10, multi-threaded TCG and the host clock",
          version is not None and int(version.group(1)) >= 10 and fields.get("tcg_threads") == "multi"
          and fields.get("clock") == "host" and "clock=host" in output, repr(fields))
    one, two = spin_times(output, 1), spin_times(output, 2)
    if not check("parallel mode: three timings of each", len(one) == 3 and len(two) == 3, f"{one} {two}"):
        return
    speedup = 2 * min(one) / min(two)
    results.figure(f"instrument: parallel speed-up on 2 vCPUs {speedup:.2f} (one spin {min(one):.3f} s, "
                   f"two {min(two):.3f} s; best of 3, {os.cpu_count()} host cores, {load_note()})")


def test_instruction_clock():
    iters = 100_000_000
    script = f"for i in 1 2 3; do {SPIN} {iters} 1; done; echo clock=$VRQ_CLOCK"
    ran = run_spins("instruction-counted mode", ["--cpus", "2", "--clock", "instructions"], script)
    if ran is None:
        return
    output, fields = ran
    check("the run records the instruction-counted clock on single-threaded TCG",
          fields.get("clock") == "instructions" and fields.get("tcg_threads") == "single"
          and "clock=instructions" in output, repr(fields))
    times = spin_times(output, 1)
    if not check("instruction-counted mode: three timings", len(times) == 3, f"{times}"):
        return
    spread = max(times) / min(times) - 1
    results.figure(f"instrument: instruction-counted in-RAM spin {min(times):.6f}-{max(times):.6f} s "
                   f"(spread {spread * 100:.3f}%)")
    check("instruction-counted mode: the same in-RAM work takes the same guest time (within 1%)",
          spread < 0.01, f"{times}")


def main():
    if len(sys.argv) > 1:
        print(__doc__)
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    if not os.access(SPIN, os.X_OK):
        print(f"instrument: {SPIN} is missing (run tools/build)")
        print("instrument: 0 passed, 1 failed")
        return 1
    test_refusals()
    test_overcommit_warning()
    test_parallel()
    test_instruction_clock()
    results.finish("instrument")


if __name__ == "__main__":
    sys.exit(main())
