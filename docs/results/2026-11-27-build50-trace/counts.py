#!/usr/bin/env python3
"""Event counts per trace: tlb_flush by reason, idle exits (power:cpu_idle state=4294967295), local
timer interrupts, reschedule / call-function IPIs received, per CPU; and CR3-switch count (tlb_flush reason 0 = TLB_FLUSH_ON_TASK_SWITCH)."""
import re, sys, collections
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
for path in sys.argv[1:]:
    c = collections.Counter()
    for l in open(path):
        m = LINE.match(l)
        if not m: continue
        comm, pid, cpu, ts, name, rest = m.groups()
        if name == 'tlb_flush':
            r = re.search(r'reason:(\S+)', rest)
            c[f'tlb_flush:{r.group(1) if r else rest}'] += 1
        elif name == 'cpu_idle':
            if 'state=4294967295' in rest: c[f'idle_exit_cpu{cpu}'] += 1
        elif name in ('local_timer_entry', 'reschedule_entry', 'call_function_single_entry', 'irq_work_entry'):
            c[f'{name}_cpu{cpu}'] += 1
        elif name == 'ipi_send_cpu':
            cs = re.search(r'callsite=(\w+)', rest)
            c[f'ipi:{cs.group(1) if cs else "?"}'] += 1
        elif name == 'hrtimer_expire_entry':
            f = re.search(r'function=(\S+)', rest)
            c[f'hrtimer:{f.group(1) if f else "?"}'] += 1
    print('==', path)
    for k in sorted(c): print(f'   {k}: {c[k]}')
