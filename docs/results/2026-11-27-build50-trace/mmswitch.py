#!/usr/bin/env python3
"""Per trace: CR3 reloads (tlb_flush 'flush on task switch') by the task switched in (heavy: cc1/as/ld),
and how many times each heavy task is switched back in after its first run (resumes) and on which CPU."""
import re, sys, collections
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
for path in sys.argv[1:]:
    cur = {}; last_in = {}; c = collections.Counter(); comm_of = {}
    for l in open(path):
        m = LINE.match(l)
        if not m: continue
        comm, pid, cpu, ts, name, rest = m.groups(); cpu = int(cpu)
        if name == 'sched_process_exec':
            p = int(re.search(r' pid=(\d+)', rest).group(1)); comm_of[p] = re.search(r'filename=(\S+)', rest).group(1).rsplit('/',1)[-1]
        elif name == 'sched_switch':
            n = int(re.search(r'next_pid=(\d+)', rest).group(1))
            cur[cpu] = n
        elif name == 'tlb_flush' and 'task switch' in rest:
            who = comm_of.get(cur.get(cpu), 'other')
            c[f'cr3_switch_to_{who if who in ("cc1","as","ld") else "other"}'] += 1
    print(path, dict(sorted(c.items())))
