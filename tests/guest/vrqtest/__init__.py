"""The harness of the in-guest tests (tests/guest/*_tests.py) and the bench's runner
(bench/vrqbench/guest.py, bench/hist-cost, bench/migration-check): run scx_vrq -- or any sched_ext
scheduler -- as a user would (its CLI and its stats socket), start loads, read what the kernel says
(sched_ext state, per-task run time, its log), and count checks into the closing line tools/test adds
up. The scheduler parts run on a sched_ext kernel as root (inside tools/vm/vm-run, or natively);
importing the package needs neither (the host-side checks use Results).

    env        where things are (REPO, SCX_VRQ, POLICY_SIM, OUT), log, wait_for, nr_cpus
    scheduler  Scheduler (scx_vrq or any command) and `with loaded(...) as sched`, Stats (`with Stats()
               as stats`), stats_ready, run_cli and refusals, flag_default, predicted_shares; how
               long a load may take (load_bound: relative to the first load of this boot)
    kernel     scx_state, scx_ops, kernel_hz, kernel log problems, scheduler exits and ejections, hotplug
    load       CPU hogs, the sched_ext CI stress (ci_stress_cmd), CPU time, stalled tasks, busy jiffies
               per CPU (cpu_jiffies), a process's threads' /proc stat (thread_stats), performance
               levels (inject_perf), capacities (inject_cap)
    checks     Results
    bpfmap     the bpf() calls the guest has no bpftool for: BpfMap, prog_name

Callers `from vrqtest import NAME`; none edits sys.path. The package is found the way Python finds
any: tests/guest is on the Python path, by one of two rules --
- a script in tests/guest (the suites) has its own folder there, whoever runs it: tools/test,
  tools/vm/vm-run, natively as root (sudo drops PYTHONPATH; these need none);
- every other caller gets PYTHONPATH=REPO/tests/guest:REPO/bench (vrqtest and vrqbench, this
  checkout's ahead of any the caller had), defined once in tools/env.sh: the tools that source it
  (tools/test, tools/reliability, tools/package) pass it to what they start; bench/bench and
  tools/vm/vm-run take it from there themselves, vm-run into the guest, so the bench's runner
  (bench/vrqbench/guest.py, natively too), bench/hist-cost and bench/migration-check need no set-up.
By hand, a host-side script outside tests/guest (tools/vm/instrument_tests.py, bench/tests/*.py)
wants `source tools/env.sh` first in that shell.
"""

from .bpfmap import BpfMap, prog_name
from .checks import Results
from .env import OUT, POLICY_SIM, REPO, SCX_VRQ, log, nr_cpus, wait_for
from .kernel import (ASKED_EXIT_REASONS, BPF_RESTART_REASON, KERNEL_RESTART_REASON, SCX_SYSFS, dmesg_len, ejections,
                     exits_logged, hotpluggable_cpu, kernel_hz, kernel_log_problems, scx_exits, scx_ops, scx_state,
                     set_cpu_online)
from .load import (CAP_BIG, CAP_LITTLE, HOG, PERF_FULL, PERF_SCALED, ci_stress_cmd, cpu_jiffies, cpu_times, inject_cap, inject_perf, kill_groups,
                   migrations_and_shares, nr_migrations, probe_fields, runtime_ns, stalled_tasks, start_hog, stop_all,
                   thread_stats, wait_started)
from .scheduler import (STATS_SOCK, Scheduler, Stats, as_user, flag_default, load_bound, load_reference, loaded,
                        one_clear_line, predicted_shares, run_cli, stats_ready)
