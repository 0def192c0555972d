#!/usr/bin/env python3
"""Per request of reqlat's workers, cut at each worker's wake-up of its message thread (the request's
end; the next starts there, the machine being saturated): duration p50/p90/p99, runs (switch-ins) per
request, CPU changes, time runnable but waiting; the slowest 1% in detail."""
import re, sys, collections
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
def f(name, text):
    m = re.search(rf"\b{name}=(\S+)", text); return m.group(1) if m else None
def pct(v, q): return v[min(len(v) - 1, int(q * len(v)))]
for path in sys.argv[1:]:
    ev = [m.groups() for m in map(LINE.match, open(path)) if m]
    wakes = collections.Counter((pid, f("pid", rest)) for comm, pid, cpu, fl, ts, e, rest in ev
                                if e == "sched_wakeup" and comm == "reqlat")
    # the message thread: woken by the most reqlat threads
    by_target = collections.Counter()
    for (_, t), n in wakes.items():
        by_target[t] += n
    msg = by_target.most_common(1)[0][0]
    workers = {w for (w, t) in wakes if t == msg and w != msg}
    cur = {w: None for w in workers}; done = []; runnable_since = {}; oncpu = {}
    for comm, pid, cpu, fl, ts, e, rest in ev:
        ts = float(ts)
        if e == "sched_wakeup" and pid in workers and f("pid", rest) == msg:
            r = cur[pid]
            if r:
                r["end"] = ts; done.append(r)
            cur[pid] = {"start": ts, "runs": 1, "cpus": [int(cpu)], "wait": 0.0, "maxwait": 0.0}
        elif e == "sched_wakeup" and f("pid", rest) in workers:
            runnable_since[f("pid", rest)] = ts
        elif e == "sched_switch":
            p, n = f("prev_pid", rest), f("next_pid", rest)
            if p in workers:
                if f("prev_state", rest).startswith("R"):
                    runnable_since[p] = ts
            if n in workers and cur[n]:
                r = cur[n]
                if n in runnable_since:
                    w = ts - runnable_since.pop(n); r["wait"] += w; r["maxwait"] = max(r["maxwait"], w)
                r["runs"] += 1; r["cpus"].append(int(cpu))
    d = sorted((r["end"] - r["start"]) * 1e3 for r in done)
    print(f"== {path}: {len(done)} requests, {len(workers)} workers; duration p50 {pct(d, .5):.1f} p90 {pct(d, .9):.1f} "
          f"p99 {pct(d, .99):.1f} max {d[-1]:.1f} ms")
    runs = collections.Counter(r["runs"] for r in done)
    print("  switch-ins per request:", dict(sorted(runs.items())))
    moves = collections.Counter(sum(a != b for a, b in zip(r["cpus"], r["cpus"][1:])) for r in done)
    print("  CPU changes per request:", dict(sorted(moves.items())))
    w = sorted(r["wait"] * 1e3 for r in done)
    print(f"  runnable-waiting per request: p50 {pct(w, .5):.1f} p99 {pct(w, .99):.1f} ms")
    mw = sorted(r["maxwait"] * 1e3 for r in done)
    print(f"  longest single wait in a request: p50 {pct(mw, .5):.1f} p90 {pct(mw, .9):.1f} p99 {pct(mw, .99):.1f} ms")
    for r in sorted(done, key=lambda r: r["end"] - r["start"])[-max(1, len(done) // 100):]:
        print(f"  slow: {(r['end'] - r['start']) * 1e3:6.1f} ms, switch-ins {r['runs']}, waited {r['wait'] * 1e3:.1f} ms "
              f"(longest {r['maxwait'] * 1e3:.1f}), CPU changes {sum(a != b for a, b in zip(r['cpus'], r['cpus'][1:]))}")
