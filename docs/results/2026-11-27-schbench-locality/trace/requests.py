#!/usr/bin/env python3
"""schbench's requests in a sched trace (trace.sh): per request, its wall time, the CPU time it ran, the time
it waited runnable, how often it was preempted and on how many CPUs it ran; and how long a worker that posted
a result waited to run again (schbench's wake-up latency, whether the worker slept or, preempted by the
message thread it woke, never did).

A request runs from the worker's 100 us sleep (schbench's "simulated networking": a sleep that a timer
wake-up, traced in interrupt context, ends) to its wake-up of the message thread (the result posted). Its
matrix math is done under the lock of the CPU it started on, so CPU time above the math's own (~80 ms: the
request p50 with one worker per CPU, where nobody waits for a lock) is time spent spinning on a lock whose
holder was preempted or ran elsewhere.

    requests.py TRACE...   (tracefs text: /sys/kernel/tracing/trace)
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
WORKER, MESSAGE = "schbench-worker", "schbench-msg"


def field(name, text):
    m = re.search(rf"\b{name}=(\S+)", text)
    return m.group(1) if m else None


def new_request(start=None):
    return {"start": start, "on": 0.0, "wait": 0.0, "preempted": 0, "cpus": set()}


def analyse(path):
    """(requests as (wall, on-CPU, runnable wait, preemptions, CPUs) in s, post -> run waits in s, worker
    migrations)."""
    workers = {}    # pid -> {"req", "run" (on CPU since), "rq" (runnable since), "slept", "posted"}
    requests, posts, migrations = [], [], 0
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        pid, cpu, flags, ts, event, rest = (int(m.group(2)), int(m.group(3)), m.group(4), float(m.group(5)),
                                            m.group(6), m.group(7))
        if event == "sched_migrate_task" and field("comm", rest) == WORKER:
            migrations += 1
        elif event == "sched_wakeup":
            woken = int(field("pid", rest))
            if field("comm", rest) == WORKER:
                w = workers.setdefault(woken, {"req": new_request(), "run": None, "rq": None, "slept": None,
                                               "posted": None})
                in_irq = len(flags) > 2 and flags[2] in "hHsz"
                if in_irq and w["slept"] is not None:   # its 100 us sleep is over: the request began then
                    w["req"] = new_request(w["slept"])
                w["rq"] = ts
            elif field("comm", rest) == MESSAGE and pid in workers:   # a worker posts its result
                w = workers[pid]
                r = w["req"]
                if r["start"] is not None:
                    on = r["on"] + (ts - w["run"] if w["run"] is not None else 0.0)
                    requests.append((ts - r["start"], on, r["wait"], r["preempted"], len(r["cpus"])))
                    w["req"] = new_request()
                w["posted"] = ts
        elif event == "sched_switch":
            prev, nxt, state = int(field("prev_pid", rest)), int(field("next_pid", rest)), field("prev_state", rest)
            w = workers.get(prev)
            if w and w["run"] is not None:
                w["req"]["on"] += ts - w["run"]
                w["run"] = None
                if state.startswith("R"):
                    w["req"]["preempted"] += 1
                    w["rq"] = ts
                else:
                    w["slept"] = ts
            w = workers.get(nxt)
            if w:
                if w["rq"] is not None:
                    w["req"]["wait"] += ts - w["rq"]
                    w["rq"] = None
                if w["posted"] is not None:
                    posts.append(ts - w["posted"])
                    w["posted"] = None
                w["run"] = ts
                w["req"]["cpus"].add(cpu)
    return requests, posts, migrations


def main(paths):
    for path in paths:
        reqs, posts, migrations = analyse(path)
        reqs.sort()
        n = len(reqs)
        print(f"== {path}: {n} requests, {migrations} worker migrations")
        if not n:
            continue
        for name, q in (("p50", .5), ("p90", .9), ("p99", .99), ("max", 1.0)):
            wall, on, wait, pre, ncpu = reqs[min(n - 1, int(q * n))]
            print(f"  {name}: wall {wall * 1e3:7.1f} ms  on-CPU {on * 1e3:6.1f}  runnable-wait {wait * 1e3:6.1f}  "
                  f"preempted {pre:3d}  cpus {ncpu}")
        slow = reqs[-max(1, n // 10):]
        mean = lambda rows, i: statistics.mean(r[i] for r in rows)
        print(f"  mean: on-CPU {mean(reqs, 1) * 1e3:.1f} ms, wait {mean(reqs, 2) * 1e3:.1f}, preempted "
              f"{mean(reqs, 3):.1f} | slowest tenth: on-CPU {mean(slow, 1) * 1e3:.1f}, wait {mean(slow, 2) * 1e3:.1f}, "
              f"preempted {mean(slow, 3):.1f}, cpus {mean(slow, 4):.1f}")
        posts.sort()
        if posts:
            k = len(posts)
            print(f"  post -> worker runs again: p50 {posts[k // 2] * 1e3:.2f} ms, "
                  f"p99 {posts[min(k - 1, int(.99 * k))] * 1e3:.2f} ms ({k})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.rstrip().rsplit("\n", 1)[-1].strip())
    main(sys.argv[1:])
