#!/usr/bin/env python3
"""Per trace: heavy tasks (cc1/as/ld, after exec) preempted (switched out runnable) and migrated
mid-run (sched_migrate_task of a heavy pid), and who runs the idle CPU's pull."""
import re, sys, collections, glob
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
agg = collections.defaultdict(list)
for path in sys.argv[1:]:
    heavy = set(); c = collections.Counter()
    for l in open(path):
        m = LINE.match(l)
        if not m: continue
        comm, pid, cpu, ts, name, rest = m.groups()
        if name == 'sched_process_exec':
            fn = re.search(r'filename=(\S+)', rest).group(1).rsplit('/', 1)[-1]
            if fn in ('cc1', 'as', 'ld'): heavy.add(int(re.search(r' pid=(\d+)', rest).group(1)))
        elif name == 'sched_switch':
            pp = int(re.search(r'prev_pid=(\d+)', rest).group(1))
            if pp in heavy and re.search(r'prev_state=R', rest):
                nc = re.search(r'next_comm=(\S+)', rest).group(1)
                c['preempted'] += 1
                c['preempted_by_' + re.sub(r'[/:]\d.*', '', nc)] += 1
        elif name == 'sched_migrate_task':
            if int(re.search(r' pid=(\d+)', rest).group(1)) in heavy: c['migrated_midrun'] += 1
    cfg = re.search(r'trace-(.*)-\d+\.txt', path).group(1)
    agg[cfg].append(c)
    print(path, dict(sorted(c.items())))
print()
for cfg, cs in agg.items():
    keys = set().union(*cs)
    print(cfg, len(cs), 'runs; per run:', {k: round(sum(c[k] for c in cs) / len(cs), 1) for k in sorted(keys) if k in ('preempted', 'migrated_midrun')})
