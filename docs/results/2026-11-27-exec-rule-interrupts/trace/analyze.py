#!/usr/bin/env python3
"""For each traced frames run: the frame thread's wake-ups (vsync timer -> sched_wakeup -> switch-in),
the wait p50/p99, and for the slowest 2%: where it woke (CPU it was queued for vs the CPU whose
interrupt woke it), what ran on each CPU meanwhile (comm: ms), and whether a wakeup_new placed a
fork child there meanwhile."""
import re, sys, collections
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
def f(name, text):
    m = re.search(rf"\b{name}=(\S+)", text); return m.group(1) if m else None
for path in sys.argv[1:]:
    ev = []
    for line in open(path):
        m = LINE.match(line)
        if m: ev.append((m.group(1).strip(), int(m.group(2)), int(m.group(3)), m.group(4), float(m.group(5)), m.group(6), m.group(7)))
    fpid = None
    for comm, pid, cpu, fl, ts, e, rest in ev:
        if e == "hrtimer_start" and comm == "frames" and f("function", rest) == "hrtimer_wakeup":
            fpid = pid; break
    armed = {}; woke = None; ups = []
    for i, (comm, pid, cpu, fl, ts, e, rest) in enumerate(ev):
        if e == "hrtimer_start" and pid == fpid and f("function", rest) == "hrtimer_wakeup":
            armed = ts
        elif e == "sched_wakeup" and f("pid", rest) == str(fpid):
            woke = (i, ts, int(f("target_cpu", rest)), cpu, comm)
        elif e == "sched_switch" and f("next_pid", rest) == str(fpid) and woke:
            ups.append((woke, i, ts, cpu)); woke = None
    waits = sorted((u[2] - u[0][1]) * 1e6 for u in ups)
    if not waits:
        print(path, "no wake-ups"); continue
    p = lambda q: waits[min(len(waits) - 1, int(q * len(waits)))]
    print(f"== {path}: {len(waits)} wake-ups, wait p50 {p(.5):.0f} p99 {p(.99):.0f} max {waits[-1]:.0f} us")
    slow = sorted(ups, key=lambda u: u[2] - u[0][1])[-max(1, len(ups) // 50):]
    want = {u[0][0] for u in slow}; snap = {}; running = {}
    for i, (comm, pid, cpu, fl, ts, e, rest) in enumerate(ev):
        if e == "sched_switch":
            running[cpu] = f("next_comm", rest) + "/" + f("next_pid", rest)
        if i in want:
            snap[i] = dict(running)
    for (wi, wts, target, wcpu, wcomm), si, sts, scpu in slow:
        ran = collections.defaultdict(float); news = []
        cur = {c: (n, wts) for c, n in snap[wi].items()}
        for comm, pid, cpu, fl, ts, e, rest in ev[wi:si]:
            if e == "sched_switch":
                if cpu in cur:
                    c, t0 = cur[cpu]; ran[(cpu, c)] += ts - t0
                cur[cpu] = (f("next_comm", rest) + "/" + f("next_pid", rest), ts)
            elif e == "sched_wakeup_new":
                news.append((f("comm", rest), int(f("target_cpu", rest)), cpu))
        for c, (n, t0) in cur.items():
            ran[(c, n)] += sts - t0
        print(f"  wait {(sts - wts) * 1e6:6.0f} us: woken by {wcomm} on cpu{wcpu} for cpu{target}; ran on cpu{scpu};"
              f" meanwhile " + ", ".join(f"cpu{c}:{n} {t * 1e3:.2f}ms" for (c, n), t in sorted(ran.items())) +
              (f"; forks placed {[(n, t) for n, t, _ in news]}" if news else ""))
