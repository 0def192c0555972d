"""Service (issue 45): the CPU time each of a request/worker load's equal workers receives, over windows of
guest time, against what it is owed -- the same as every other worker counted in that window.

While the load runs, a thread of the runner finds the workers by the name their program gives them
(`reqlat-worker`, `schbench-worker`) and, every WINDOW_S, reads each worker's /proc/PID/task/TID/schedstat
once (one pread of a descriptor kept open): its CPU time (sum_exec_runtime) and its wait in the run queue
(run_delay), both in ns. Per window the workers counted are those runnable for at least `min_runnable` of
it (running or queued: CPU time plus the queue's wait); the window is judged when at least two are:
  - max/min of their CPU time (lower is better, 1 is equal service);
  - Jain's fairness index, (sum x)^2 / (n sum x^2) (higher is better, 1 is equal service, 1/n one worker
    served alone).
Per run: the median and the worst window's max/min, the median Jain's index, and over the whole run each
worker's CPU time per second of the windows it was counted in, max/min among the workers.

The closed loops count every worker in every window (min_runnable 0): they run the same requests from the
same message thread, each owed its next request the moment it finishes, so the waits between requests
are part of one cycle they all share. The open loops count a worker only when it was backlogged
(BACKLOGGED of the window): a worker whose queue was empty is owed nothing, and which idle worker a post
wakes is the program's choice, not the scheduler's.

A running task's CPU time in schedstat is brought up to date at the scheduler tick and whenever it leaves
the CPU, so a window's figure may miss up to a tick at either end (it is carried into the next window:
the whole run's figure is exact); the window holds many ticks so that this stays small.
"""

import os
import statistics
import threading
import time

from vrqtest import thread_stats

# A window of guest time. It must hold several turns of every worker at BFS's 6 ms slice: with 4 workers
# per CPU a worker runs a quarter of each window, about ten slices in 250 ms (four in 100 ms, where one
# slice more or less is a quarter of the figure). bench/README.md ("Service") says why.
WINDOW_S = 0.25
# The share of a window an open-loop worker must be runnable in to be counted in it
BACKLOGGED = 0.9
# A counted worker that got no CPU in a window counts as this much, so that the index stays finite (and
# huge): starvation shows as a ratio of tens of thousands
NO_SERVICE_NS = 1000
# How often the sampler looks for the workers while the program starts its threads
FIND_POLL_S = 0.02
# The sampler thread's SCHED_FIFO priority (when allowed: the runner is root in the VM). A fair-class
# sampler waking among the workers is one more task for the scheduler under test to place, and may cost a
# worker its turn; a real-time one takes the CPU for its few reads and gives it back, the same under every
# scheduler, and is never preempted halfway through a window's reads.
SAMPLER_FIFO_PRIORITY = 1

METRICS = ("service_window_p50", "service_window_max", "service_jain_p50", "service_total_max_min")
# the direction of each: only Jain's index is better higher
HIGHER = {"service_jain_p50": True}


def jain(xs):
    """Jain's fairness index of the amounts xs: 1 when all are equal, 1/n when one has everything (1 when
    all are zero: nobody was favoured)."""
    total, squares = sum(xs), sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if squares else 1.0


def max_min(xs, floor):
    """max/min of xs, the minimum taken as at least `floor`."""
    return max(xs) / max(min(xs), floor)


def indices(windows, min_runnable):
    """The service figures of one run. `windows`: per window (its length in ns, [(cpu_ns, runnable_ns) of
    each worker, in the same order every window]). A worker counts in a window when runnable_ns >=
    min_runnable x the window's length; a window is judged with two counted workers or more. Returns
    service_windows (judged) and service_windows_all, and when any was judged service_window_p50,
    service_window_max, service_jain_p50, service_total_max_min and every judged window's max/min in order
    (service_window_ratios)."""
    ratios, jains = [], []
    cpu, counted_ns = {}, {}
    for length, workers in windows:
        counted = [i for i, (_, runnable) in enumerate(workers) if runnable >= min_runnable * length]
        if len(counted) < 2:
            continue
        got = [workers[i][0] for i in counted]
        ratios.append(max_min(got, NO_SERVICE_NS))
        jains.append(jain(got))
        for i in counted:
            cpu[i] = cpu.get(i, 0) + workers[i][0]
            counted_ns[i] = counted_ns.get(i, 0) + length
    out = {"service_windows": len(ratios), "service_windows_all": len(windows)}
    if ratios:
        out["service_window_ratios"] = [round(r, 3) for r in ratios]
        # each worker's CPU per ns of the windows it was counted in; the floor: NO_SERVICE_NS per window
        rates = [cpu[i] / counted_ns[i] for i in cpu]
        floor = NO_SERVICE_NS / max(length for length, _ in windows)
        out.update(service_window_p50=statistics.median(ratios), service_window_max=max(ratios),
                   service_jain_p50=statistics.median(jains), service_total_max_min=max_min(rates, floor))
    return out


def read_schedstat(fd):
    """(sum_exec_runtime, run_delay) in ns from an open /proc/.../schedstat, or None once the thread is gone."""
    try:
        fields = os.pread(fd, 128, 0).split()
    except OSError:
        return None
    return (int(fields[0]), int(fields[1])) if len(fields) >= 2 else None


def find_threads(pid, name):
    """The TIDs of process pid's threads called `name` (their comm), sorted."""
    return sorted(int(tid) for tid, (comm, _) in thread_stats(pid).items() if comm == name)


class Sampler:
    """Samples the CPU time of process `pid`'s `count` threads named `name`, every WINDOW_S of guest time from
    when it found them all, in a thread of its own. Started just after the process: the load runs `secs` from
    later still (after its calibration and its threads' start), so the windows that end within `secs` of the
    sampler's start lie within the load and its wind-down, where workers stop one by one, is left out.
    stop() ends it and returns the run's figures (indices), each judged window's max/min
    (service_window_ratios, in order), the windows' worst read time (service_read_us_max: how far apart one
    window's reads of the workers were) and the sampler's own CPU time (service_sampler_cpu_us)."""

    def __init__(self, pid, name, count, secs, min_runnable, window_s=WINDOW_S):
        self.pid, self.name, self.count, self.secs = pid, name, count, secs
        self.min_runnable, self.window_s = min_runnable, window_s
        self.windows, self.read_ns_max, self.error, self.policy = [], 0, None, None
        self.deadline = time.monotonic_ns() + secs * 1e9
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        fds = []
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(SAMPLER_FIFO_PRIORITY))
            self.policy = "fifo"
        except OSError:
            self.policy = "other"
        try:
            tids = []
            while not self.done.is_set():
                tids = find_threads(self.pid, self.name)
                if len(tids) >= self.count:
                    break
                self.done.wait(FIND_POLL_S)
            if len(tids) != self.count:
                self.error = f"found {len(tids)} threads named {self.name}, not {self.count}"
                return
            fds = [os.open(f"/proc/{self.pid}/task/{t}/schedstat", os.O_RDONLY) for t in tids]
            t0 = time.monotonic_ns()
            prev = [read_schedstat(fd) for fd in fds]
            last = time.monotonic_ns()
            k = 1
            while t0 + k * self.window_s * 1e9 <= self.deadline:
                if self.done.wait(max(0.0, (t0 + k * self.window_s * 1e9 - time.monotonic_ns()) / 1e9)):
                    return
                k += 1
                start = time.monotonic_ns()
                cur = [read_schedstat(fd) for fd in fds]
                now = time.monotonic_ns()
                if any(c is None for c in cur):
                    return  # a worker is gone: the load is over
                self.read_ns_max = max(self.read_ns_max, now - start)
                self.windows.append((start - last, [(c[0] - p[0], c[0] - p[0] + c[1] - p[1])
                                                     for c, p in zip(cur, prev)]))
                prev, last = cur, start
        except OSError as e:
            self.error = f"{type(e).__name__}: {e}"
        finally:
            for fd in fds:
                os.close(fd)
            self.cpu_ns = time.thread_time_ns()

    def stop(self):
        self.done.set()
        self.thread.join()
        out = indices(self.windows, self.min_runnable)
        out.update(service_read_us_max=self.read_ns_max / 1000, service_sampler_cpu_us=self.cpu_ns / 1000,
                   service_sampler_policy=self.policy)
        if self.error:
            out["service_error"] = self.error
        return out
