"""`bench run --trace`: where the wakelat probe's late wake-ups lost their time.

Each of the probe's sleeps ends in three steps the kernel traces: its hrtimer fires
(timer:hrtimer_start gives the time asked for, timer:hrtimer_expire_entry the time it fired), the
interrupt wakes the sleeper (sched:sched_wakeup, with the CPU it is to run on), and a CPU switches to
it (sched:sched_switch). The first step is the timer's delay, the last the wait for a CPU -- the
scheduler's part. For the latest 1% of wake-ups this also records what the CPU the sleeper woke on
was doing: running its idle task, already told to reschedule when the wake-up was traced there (`N`,
`n`, `B`, `b` or `p` in the trace's flags: the scheduler decided to preempt now), or told to
reschedule lazily (`L`, `l`: under the kernel's lazy preemption a fair task preempts the running one
at its next tick or return to user space). On the instruction clock the
vCPUs take turns on one host thread, each turn lasting up to half the time to the next timer, so a
vCPU that must act on a timer or a reschedule may first wait for the other one's turn to end (about
a millisecond), whatever the scheduler decided (docs/measured.md, "an idle vCPU wakes about a
millisecond late"); a lazy or queued wake-up's wait is the scheduler's own.

Tracing adds work to every switch and wake-up, so a traced run's figures explain an untraced run's;
they are not compared with them."""

import re

EVENTS = ("sched:sched_wakeup", "sched:sched_switch", "timer:hrtimer_start", "timer:hrtimer_expire_entry")
TRACEFS = "/sys/kernel/tracing"
BUFFER_KB = 40000  # per CPU: a 30 s run of 2 sleepers beside a build fits with room

# "  comm-pid  [cpu] flags  12.345678: event: fields"
_LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
_FIELD = {k: re.compile(rf"\b{k}=(\S+)") for k in ("hrtimer", "function", "expires", "now", "pid", "target_cpu",
                                                   "next_pid")}
# the need-resched column of the trace's flags (kernel/trace/trace_output.c)
RESCHED_NOW = "NnBbp"
RESCHED_LAZY = "Ll"


def _field(name, text):
    m = _FIELD[name].search(text)
    return m.group(1) if m else None


def wake_ups(lines, probe="wakelat"):
    """The probe's timed wake-ups in a tracefs text trace, in order: per wake-up the timer's delay
    (fired - asked, µs), the wait for a CPU (sched_wakeup -> switch-in, µs), their sum with the
    interrupt between them (total_us), the CPU it woke on, whether that CPU ran its idle task, and
    whether it had been told to reschedule by then, at once or lazily (seen only when the wake-up ran
    there)."""
    armed = {}      # timer -> (pid, asked ns)
    fired = {}      # pid -> (asked ns, fired ns, fired at s)
    woken = {}      # pid -> (asked ns, fired ns, fired at s, woken at s, cpu, cpu idle, resched flag)
    idle = {}       # cpu -> whether it runs its idle task: every event names the task current there
    out = []
    for line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        comm, cpu, flags, ts, event, rest = (m.group(1).strip(), int(m.group(3)), m.group(4), float(m.group(5)),
                                             m.group(6), m.group(7))
        idle[cpu] = int(m.group(2)) == 0
        if event == "hrtimer_start":
            if comm == probe and _field("function", rest) == "hrtimer_wakeup":
                armed[_field("hrtimer", rest)] = (int(m.group(2)), int(_field("expires", rest)))
        elif event == "hrtimer_expire_entry":
            timer = _field("hrtimer", rest)
            if timer in armed:
                pid, asked = armed.pop(timer)
                fired[pid] = (asked, int(_field("now", rest)), ts)
        elif event == "sched_wakeup":
            pid = int(_field("pid", rest))
            if pid in fired:
                target = int(_field("target_cpu", rest))
                resched = flags[1] if target == cpu and len(flags) > 1 else "."
                woken[pid] = (*fired.pop(pid), ts, target, idle.get(target, False), resched)
        elif event == "sched_switch":
            nxt = int(_field("next_pid", rest))
            idle[cpu] = nxt == 0
            if nxt in woken:
                asked, fired_ns, fired_at, woken_at, target, target_idle, resched = woken.pop(nxt)
                timer_us = (fired_ns - asked) / 1e3
                out.append({"timer_us": timer_us, "wait_us": (ts - woken_at) * 1e6,
                            "total_us": timer_us + (ts - fired_at) * 1e6, "cpu": target, "cpu_idle": target_idle,
                            "resched_set": resched in RESCHED_NOW, "resched_lazy": resched in RESCHED_LAZY})
    return out


def _pct(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(p * len(sorted_vals)))] if sorted_vals else None


def breakdown(lines, probe="wakelat"):
    """Summary of wake_ups() for the bench's results: how many were traced; p50/p99 of the timer's
    delay, of the wait for a CPU and of their total; and for the latest 1% (at least one): how many
    woke on an idle CPU, how many on a busy one already told to reschedule at once, how many lazily,
    and the medians of their timer delay and wait."""
    ups = wake_ups(lines, probe)
    if not ups:
        return {"traced": 0}
    res = {"traced": len(ups)}
    for key in ("timer_us", "wait_us", "total_us"):
        vals = sorted(u[key] for u in ups)
        res[f"{key[:-3]}_p50_us"] = round(_pct(vals, 0.50))
        res[f"{key[:-3]}_p99_us"] = round(_pct(vals, 0.99))
    tail = sorted(ups, key=lambda u: u["total_us"])[-max(1, len(ups) // 100):]
    res["tail"] = len(tail)
    res["tail_on_idle_cpu"] = sum(1 for u in tail if u["cpu_idle"])
    res["tail_resched_set"] = sum(1 for u in tail if u["resched_set"] and not u["cpu_idle"])
    res["tail_resched_lazy"] = sum(1 for u in tail if u["resched_lazy"] and not u["cpu_idle"])
    res["tail_timer_p50_us"] = round(_pct(sorted(u["timer_us"] for u in tail), 0.5))
    res["tail_wait_p50_us"] = round(_pct(sorted(u["wait_us"] for u in tail), 0.5))
    return res


def start():
    """Clear the trace buffer and start recording EVENTS (root, tracefs mounted)."""
    _write("tracing_on", "0")
    _write("trace", "")
    _write("buffer_size_kb", str(BUFFER_KB))
    _write("set_event", "\n".join(EVENTS) + "\n")
    _write("tracing_on", "1")


def stop(probe="wakelat"):
    """Stop recording and return breakdown() of what was recorded; the buffer is left empty."""
    _write("tracing_on", "0")
    with open(f"{TRACEFS}/trace") as f:
        res = breakdown(f, probe)
    _write("set_event", "")
    _write("trace", "")
    return res


def _write(name, value):
    with open(f"{TRACEFS}/{name}", "w") as f:
        f.write(value)
