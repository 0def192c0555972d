#!/usr/bin/env python3
"""Aggregate analyze.py over clean traces (window < 3.5 s): per scheduler, mean counts per run of chain
placements (fork/wake x waker CPU/other CPU x idle/busy), wake->run delay p50/p90 of chain wake-ups,
user-task migrations, heavy-task CPU changes, goidle."""
import sys, glob, collections, statistics, io, contextlib, re
sys.argv = [sys.argv[0]]
import analyze
by = collections.defaultdict(list)
for f in sorted(glob.glob('run[123]/trace-*.txt')):
    cfg = re.search(r'trace-(.*)-\d+\.txt', f).group(1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = analyze.analyze(f)
    if r['window'] > 3.5:
        print('skip (host-file wait inside the window)', f); continue
    txt = buf.getvalue()
    r['changes'] = int(re.search(r'CPU changes (\d+)', txt).group(1))
    by[cfg].append(r)
for cfg, rs in by.items():
    n = len(rs)
    keys = collections.Counter()
    dl = collections.defaultdict(list)
    for r in rs:
        for k, v in r['delays'].items():
            if k[1] == 'user':
                keys[k] += len(v); dl[k] += v
    print(f"== {cfg}: {n} runs; window {statistics.mean(r['window'] for r in rs):.3f}s; user migrations/run {statistics.mean(r['migr'] for r in rs):.1f}; heavy CPU changes/run {statistics.mean(r['changes'] for r in rs):.1f}; goidle/run {statistics.mean(r['out']['goidle_cpu0']+r['out']['goidle_cpu1'] for r in rs):.0f}")
    for k in sorted(keys, key=str):
        xs = sorted(dl[k])
        print(f"   {k[0]:4s} {k[2]:5s}-CPU {k[3]:4s}: {keys[k]/n:5.1f}/run  wake->run p50 {xs[len(xs)//2]:.0f} us  p90 {xs[int(.9*len(xs))]:.0f} us")
