"""Where reqlat's late wake-ups waited (issue 45): a kernel trace of one run per scheduler, and its attribution.

    guest:   bench/vrqbench/reqlat_trace.py run OUT SCHEDULER,... WORKLOAD,...      (in the VM, as root)
    host:    bench/vrqbench/reqlat_trace.py report|markdown OUT [--tail 0.01]     (JSON or tables on stdout)

`run` starts each scheduler as the bench does (vrqbench.schedulers), records sched_waking, sched_wakeup,
sched_switch and sched_migrate_task on the `mono` trace clock (CLOCK_MONOTONIC, the probe's clock) while
reqlat runs the workload's point with REQLAT_DUMP set, and leaves OUT/WORKLOAD.SCHEDULER.{trace,dump,out} (the
trace may be compressed afterwards: `report` reads WORKLOAD.SCHEDULER.trace.xz too).

`report` joins each sample of the dump with the trace. A closed-loop sample is a request handed to a worker
(HANDED) and the worker starting on it (STARTED): its wait. For the latest `tail` of them (by wait) it says
whether the worker was asleep when handed the request (a kernel wake-up followed) or still runnable (preempted
before it could sleep: no wake-up, it waits in the queue as any runnable task), who held each CPU meanwhile
(other workers, the message thread, anything else), and how many of the other workers' requests started
during the wait although handed out after this one (overtaken). An open-loop sample is an idle worker woken by
a post: its wait is split into the futex call to sched_waking, sched_waking to sched_wakeup, and sched_wakeup
to the switch onto the CPU, with the CPU it woke on (the waker's or another) and whether that CPU was idle.

Tracing adds work to every switch and wake-up: a traced run explains an untraced one, it does not replace it.
"""

import json
import lzma
import os
import re
import subprocess
import sys
import time

TRACEFS = "/sys/kernel/tracing"
EVENTS = ("sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch", "sched:sched_migrate_task")
BUFFER_KB = 60000

# "  comm-pid  [cpu] flags  12.345678: event: fields"
_LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")


def _write(name, value):
    with open(f"{TRACEFS}/{name}", "w") as f:
        f.write(value)


def _reqlat_args(workload, ncpu):
    """reqlat's arguments and seconds for a surface or open-loop point, as vrqbench.workloads runs it on the
    instruction clock (one parallel CPU)."""
    from vrqbench import workloads as wl
    m = re.match(r"reqlat-(\w+)-w(\d)-(m1|mcpu)$", workload)
    if m:
        us = wl.SURFACE_WORK[m.group(1)]
        n = int(m.group(2))
        secs = max(3, wl.MIN_REQUESTS * us / 1e6 / ncpu)
        return [f"{secs:g}", str(ncpu * n), str(us), str(ncpu if m.group(3) == "mcpu" else 1)], secs
    m = re.match(r"reqlat-open-(\w+)-(\d+)-(burst|even|poisson)$", workload)
    if m:
        us = wl.OPEN_WORK[m.group(1)]
        rate = 1e6 / us * int(m.group(2)) / 100
        secs = max(3, -(-wl.OPEN_MIN_REQUESTS // int(rate)))
        return [str(secs), str(wl.OPEN_MSGS * wl.OPEN_WORKERS_PER_MSG), str(us), str(wl.OPEN_MSGS), f"{rate:g}",
                m.group(3)], secs
    raise SystemExit(f"reqlat_trace: not a reqlat point: {workload}")


def run(out, schedulers, workloads):
    from vrqbench.schedulers import SCHEDULERS
    from vrqtest import Scheduler
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ncpu = os.cpu_count()
    work = "/run/reqlat-trace"
    os.makedirs(work, exist_ok=True)
    for workload in workloads:
        args, secs = _reqlat_args(workload, ncpu)
        for name in schedulers:
            spec = SCHEDULERS[name]
            cmd = spec["cmd"](repo)
            sched = None
            if cmd is not None:
                sched = Scheduler(cmd=cmd, log_path=f"{work}/{name}.log", wait_stats=bool(spec.get("vrq")))
                sched.start(timeout=60)
                time.sleep(1)
            tag = f"{workload}.{name}"
            dump = f"{work}/{tag}.dump"
            _write("tracing_on", "0")
            _write("trace", "")
            _write("trace_clock", "mono")
            _write("buffer_size_kb", str(BUFFER_KB))
            _write("set_event", "\n".join(EVENTS) + "\n")
            _write("tracing_on", "1")
            try:
                res = subprocess.run([f"{repo}/target/bench/reqlat", *args], capture_output=True, text=True,
                                     env={**os.environ, "REQLAT_DUMP": dump}, timeout=600)
            finally:
                _write("tracing_on", "0")
            with open(f"{TRACEFS}/trace") as f, open(f"{work}/{tag}.trace", "w") as g:
                for line in f:
                    g.write(line)
            _write("set_event", "")
            _write("trace", "")
            if sched is not None:
                sched.stop()
            for ext in ("trace", "dump"):
                subprocess.run(["cp", f"{work}/{tag}.{ext}", out], check=True)
                os.unlink(f"{work}/{tag}.{ext}")
            with open(f"{out}/{tag}.out", "w") as f:
                f.write(res.stdout + res.stderr)
            print(f"reqlat_trace: {tag}: {res.stdout.strip()}", flush=True)


# ---- the host's side ----

def parse_trace(path):
    """Events in time order: (ns, cpu, event, fields dict, flags, comm, pid)."""
    evs = []
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        for line in f:
            m = _LINE.match(line)
            if not m:
                continue
            ts = round(float(m.group(5)) * 1e9)
            fields = dict(kv.split("=", 1) for kv in re.findall(r"(\w+=\S+)", m.group(7)))
            evs.append((ts, int(m.group(3)), m.group(6), fields, m.group(4), m.group(1).strip(), int(m.group(2))))
    return evs


def parse_dump(path):
    reqs, wakes = [], []
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] == "req" and len(p) == 5:
                reqs.append((int(p[1]), int(p[2]), int(p[3]), int(p[4])))
            elif p[0] == "req":
                reqs.append((int(p[1]), None, int(p[2]), int(p[3])))
            elif p[0] == "wake":
                wakes.append((int(p[1]), int(p[2]), int(p[3])))
    return reqs, wakes


class Timeline:
    """Per CPU, the segments [start, end) of what ran (pid, comm); per pid, its switches out (time, state) and its
    wake-ups (waking time, wakeup time, target cpu, whether the target ran idle)."""

    def __init__(self, evs):
        self.segs = {}          # cpu -> list of (start, end, pid, comm)
        self.cur = {}           # cpu -> (start, pid, comm)
        self.outs = {}          # pid -> list of (time, prev_state, cpu)
        self.wakings = {}       # pid -> list of (time, waker pid, waker cpu)
        self.wakeups = {}       # pid -> list of (time, target cpu, target idle, resched flag)
        self.ins = {}           # pid -> list of (time, cpu)
        self.comms = {}
        for ts, cpu, ev, f, flags, comm, pid in evs:
            if ev == "sched_switch":
                prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
                if cpu in self.cur:
                    s, p, c = self.cur[cpu]
                    self.segs.setdefault(cpu, []).append((s, ts, p, c))
                self.cur[cpu] = (ts, nxt, f["next_comm"])
                self.comms[nxt] = f["next_comm"]
                self.outs.setdefault(prev, []).append((ts, f["prev_state"], cpu))
                self.ins.setdefault(nxt, []).append((ts, cpu))
            elif ev == "sched_waking":
                self.wakings.setdefault(int(f["pid"]), []).append((ts, pid, cpu))
            elif ev == "sched_wakeup":
                target = int(f["target_cpu"])
                running = self.cur.get(target)
                idle = running is not None and running[1] == 0
                resched = flags[1] if target == cpu and len(flags) > 1 else "."
                self.wakeups.setdefault(int(f["pid"]), []).append((ts, target, idle, resched, cpu))
        for cpu, (s, p, c) in self.cur.items():
            self.segs.setdefault(cpu, []).append((s, s, p, c))

    @staticmethod
    def _last_before(lst, t):
        best = None
        for x in lst or []:
            if x[0] <= t:
                best = x
            else:
                break
        return best

    @staticmethod
    def _first_in(lst, a, b):
        for x in lst or []:
            if a <= x[0] <= b:
                return x
            if x[0] > b:
                break
        return None

    def ran_during(self, a, b):
        """Per CPU: [(pid, comm, ns within [a, b])]."""
        out = {}
        for cpu, segs in self.segs.items():
            acc = {}
            for s, e, p, c in segs:
                if e <= a or s >= b:
                    continue
                acc[(p, c)] = acc.get((p, c), 0) + min(e, b) - max(s, a)
            out[cpu] = acc
        return out


def _pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(p * len(vals)))] if vals else None


def report_closed(tl, reqs, tail_frac, worker_pids, msg_pids):
    waits = [(s - h, tid, h, s, d) for tid, h, s, d in reqs]
    waits.sort()
    n = len(waits)
    tail = waits[-max(1, int(n * tail_frac)):]
    # every request's start, to count overtakers
    starts = sorted((s, h, tid) for tid, h, s, d in reqs)
    by_worker = {}
    for tid, h, s, d in sorted(reqs, key=lambda r: r[1]):
        by_worker.setdefault(tid, []).append((h, d))

    def handed_at(pid, t):
        """When the request worker @pid was on at time @t was handed out (None: between requests)."""
        for h, d in by_worker.get(pid, []):
            if h <= t < d:
                return h
        return None
    rows = []
    agg = {"asleep": 0, "runnable": 0, "overtaken_by": [], "worker_ns": 0, "msg_ns": 0, "other_ns": 0, "idle_ns": 0,
           "others": {}, "preempted_by_msg": 0, "woke_target_idle": 0}
    for wait, tid, h, s, d in tail:
        out = tl._last_before(tl.outs.get(tid), h)
        state = out[1] if out else "?"
        asleep = state not in ("R", "R+")
        agg["asleep" if asleep else "runnable"] += 1
        # who took the CPU from it at that switch out
        by = None
        if out:
            for seg in tl.segs.get(out[2], []):
                if seg[0] == out[0]:
                    by = seg[3]
                    break
        if not asleep and by == "reqlat-msg":
            agg["preempted_by_msg"] += 1
        over = [x for x in starts if h < x[0] < s and x[1] > h and x[2] != tid]
        agg["overtaken_by"].append(len(over))
        ran = tl.ran_during(h, s)
        for cpu, segs in tl.segs.items():
            for a, b, p, c in segs:
                if p in worker_pids and p != tid and b > h and a < s:
                    agg.setdefault("turns", []).append(b - a)
                    # the request that worker was on: handed before this one (ahead) or after (overtook)
                    cur = handed_at(p, max(a, h))
                    key = "ahead_ns" if cur is not None and cur <= h else "overtook_ns"
                    agg[key] = agg.get(key, 0) + min(b, s) - max(a, h)
        for cpu, acc in ran.items():
            for (p, c), ns in acc.items():
                if p == 0:
                    agg["idle_ns"] += ns
                elif p in worker_pids:
                    agg["worker_ns"] += ns
                elif p in msg_pids:
                    agg["msg_ns"] += ns
                else:
                    agg["other_ns"] += ns
                    agg["others"][c] = agg["others"].get(c, 0) + ns
        wu = tl._first_in(tl.wakeups.get(tid), h, s)
        if wu and wu[2]:
            agg["woke_target_idle"] += 1
        # requests of other workers that started during the wait (all, and handed out before this one)
        started_during = [x for x in starts if h < x[0] < s and x[2] != tid]
        rows.append({"wait_us": wait / 1e3, "state": state, "out_by": by, "started_during": len(started_during),
                     "overtaken": len(over), "wakeup": bool(wu)})
    tot = sum(agg[k] for k in ("worker_ns", "msg_ns", "other_ns", "idle_ns")) or 1
    allw = [w for w, *_ in waits]
    return {
        "samples": n, "wait_p50_us": _pct(allw, 0.5) / 1e3, "wait_p99_us": _pct(allw, 0.99) / 1e3,
        "tail": len(tail), "tail_min_us": tail[0][0] / 1e3,
        "tail_asleep_when_handed": agg["asleep"], "tail_runnable_when_handed": agg["runnable"],
        "tail_preempted_by_msg_thread": agg["preempted_by_msg"],
        "tail_overtaken_p50": _pct(agg["overtaken_by"], 0.5), "tail_overtaken_max": max(agg["overtaken_by"]),
        "tail_overtaken_any": sum(1 for x in agg["overtaken_by"] if x),
        "tail_cpu_share": {k: round(agg[k + "_ns"] / tot, 3) for k in ("worker", "msg", "other", "idle")},
        "tail_others": {c: round(ns / 1e3) for c, ns in sorted(agg["others"].items(), key=lambda x: -x[1])[:6]},
        "tail_worker_cpu_on_requests_handed_before": round(agg.get("ahead_ns", 0) / max(1, agg.get("ahead_ns", 0) +
                                                                                       agg.get("overtook_ns", 0)), 3),
        "tail_other_workers_turn_p50_us": round(_pct(agg.get("turns", [0]), 0.5) / 1e3),
        "tail_other_workers_turn_p90_us": round(_pct(agg.get("turns", [0]), 0.9) / 1e3),
        "rows": rows,
    }


def classify_all(tl, reqs, worker_pids):
    """For every closed-loop sample: asleep or runnable when handed, and its wait -> p50/p99 per class."""
    cls = {}
    for tid, h, s, d in reqs:
        out = tl._last_before(tl.outs.get(tid), h)
        state = out[1] if out else "?"
        k = "asleep" if state not in ("R", "R+") else "runnable"
        cls.setdefault(k, []).append(s - h)
    return {k: {"n": len(v), "p50_us": _pct(v, 0.5) / 1e3, "p99_us": _pct(v, 0.99) / 1e3,
                "max_us": max(v) / 1e3} for k, v in cls.items()}


def report_open(tl, wakes, tail_frac):
    rows = []
    for tid, at, woke in wakes:
        wk = tl._first_in(tl.wakings.get(tid), at, woke)
        wu = tl._first_in(tl.wakeups.get(tid), at, woke)
        sw = tl._first_in(tl.ins.get(tid), at, woke)
        if not (wk and wu and sw):
            rows.append({"total_us": (woke - at) / 1e3, "matched": False})
            continue
        rows.append({"total_us": (woke - at) / 1e3, "matched": True, "to_waking_us": (wk[0] - at) / 1e3,
                     "waking_to_wakeup_us": (wu[0] - wk[0]) / 1e3, "wakeup_to_switch_us": (sw[0] - wu[0]) / 1e3,
                     "switch_to_user_us": (woke - sw[0]) / 1e3,
                     "on_waker_cpu": wu[1] == wk[2], "target_idle": wu[2], "resched": wu[3]})
    m = [r for r in rows if r["matched"]]
    res = {"samples": len(rows), "matched": len(m)}
    for k in ("total_us", "to_waking_us", "waking_to_wakeup_us", "wakeup_to_switch_us", "switch_to_user_us"):
        vals = [r[k] for r in m]
        res[k] = {"p50": round(_pct(vals, 0.5), 2), "p99": round(_pct(vals, 0.99), 2)} if vals else None
    res["on_waker_cpu"] = sum(1 for r in m if r["on_waker_cpu"])
    res["target_idle"] = sum(1 for r in m if r["target_idle"])
    for where in (True, False):
        vals = [r["total_us"] for r in m if r["on_waker_cpu"] == where]
        res[f"total_{'waker' if where else 'other'}_cpu_p50"] = round(_pct(vals, 0.5), 2) if vals else None
    tail = sorted(m, key=lambda r: r["total_us"])[-max(1, int(len(m) * tail_frac)):]
    res["tail"] = tail
    return res


def report(out, tail_frac=0.01):
    res = {}
    for name in sorted(os.listdir(out)):
        if not name.endswith((".trace", ".trace.xz")):
            continue
        tag = name[:name.index(".trace")]
        evs = parse_trace(os.path.join(out, name))
        reqs, wakes = parse_dump(os.path.join(out, tag + ".dump"))
        tl = Timeline(evs)
        worker_pids = {p for p, c in tl.comms.items() if c == "reqlat-worker"}
        msg_pids = {p for p, c in tl.comms.items() if c == "reqlat-msg"}
        if wakes:
            res[tag] = report_open(tl, wakes, tail_frac)
        else:
            r = report_closed(tl, reqs, tail_frac, worker_pids, msg_pids)
            r["by_state"] = classify_all(tl, reqs, worker_pids)
            res[tag] = r
    return res


def markdown(res):
    """report()'s figures as two markdown tables: closed-loop points, open-loop points."""
    closed = [(k, v) for k, v in res.items() if "by_state" in v]
    opened = [(k, v) for k, v in res.items() if "by_state" not in v]
    out = []
    if closed:
        out += ["| run | wait p50 / p99 µs | handed while runnable: n, p50 / p99 µs | handed asleep: n, p50 / p99 µs "
                "| tail: runnable (preempted by the message thread) / asleep | tail: overtaken (any, median) "
                "| tail: CPU to requests handed before it | other workers' turns in the tail's waits p50 / p90 µs "
                "| tail: CPU to anything else |",
                "|---|---|---|---|---|---|---|---|---|"]
        for k, v in closed:
            run, asleep = v["by_state"].get("runnable", {}), v["by_state"].get("asleep", {})

            def cls(c):
                return f"{c['n']}, {c['p50_us']:.0f} / {c['p99_us']:.0f}" if c else "0"
            others = ", ".join(f"{c} {ns} µs" for c, ns in list(v["tail_others"].items())[:2]) or "-"
            out.append(f"| {k} | {v['wait_p50_us']:.0f} / {v['wait_p99_us']:.0f} | {cls(run)} | {cls(asleep)} "
                       f"| {v['tail_runnable_when_handed']} ({v['tail_preempted_by_msg_thread']}) / "
                       f"{v['tail_asleep_when_handed']} of {v['tail']} | {v['tail_overtaken_any']}, "
                       f"{v['tail_overtaken_p50']} | {v['tail_worker_cpu_on_requests_handed_before']:.2f} "
                       f"| {v['tail_other_workers_turn_p50_us']} / {v['tail_other_workers_turn_p90_us']} "
                       f"| {v['tail_cpu_share']['other']:.3f} ({others}) |")
    if opened:
        out += ["", "| run | total p50 / p99 µs | futex call -> sched_waking | sched_waking -> sched_wakeup "
                "| sched_wakeup -> switch | switch -> user | woke on the waker's CPU | target CPU idle |",
                "|---|---|---|---|---|---|---|---|"]
        for k, v in opened:
            def pp(key):
                return f"{v[key]['p50']:.1f} / {v[key]['p99']:.1f}"
            out.append(f"| {k} | {pp('total_us')} | {pp('to_waking_us')} | {pp('waking_to_wakeup_us')} "
                       f"| {pp('wakeup_to_switch_us')} | {pp('switch_to_user_us')} | {v['on_waker_cpu']} of "
                       f"{v['matched']} | {v['target_idle']} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(","))
    elif len(sys.argv) >= 3 and sys.argv[1] in ("report", "markdown"):
        frac = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--tail" else 0.01
        res = report(sys.argv[2], frac)
        print(markdown(res) if sys.argv[1] == "markdown" else json.dumps(res, indent=1))
    else:
        raise SystemExit(__doc__)
