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
    load       CPU hogs, the sched_ext CI stress (ci_stress_cmd), CPU time, stalled tasks, performance
               levels (inject_perf)
    checks     Results
    bpfmap     the bpf() calls the guest has no bpftool for: BpfMap, prog_name

Callers put tests/guest on sys.path and `from vrqtest import NAME`.
"""

from .bpfmap import BpfMap, prog_name
from .checks import Results
from .env import OUT, POLICY_SIM, REPO, SCX_VRQ, log, nr_cpus, wait_for
from .kernel import (ASKED_EXIT_REASONS, BPF_RESTART_REASON, KERNEL_RESTART_REASON, SCX_SYSFS, dmesg_len, ejections, hotpluggable_cpu,
                     kernel_hz, kernel_log_problems, scx_exits, scx_ops, scx_state, set_cpu_online)
from .load import (HOG, PERF_FULL, PERF_SCALED, ci_stress_cmd, cpu_times, inject_perf, kill_groups, runtime_ns,
                   stalled_tasks, start_hog, stop_all, wait_started)
from .scheduler import (STATS_SOCK, Scheduler, Stats, as_user, flag_default, load_bound, load_reference, loaded,
                        one_clear_line, predicted_shares, run_cli, stats_ready)
