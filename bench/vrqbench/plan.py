"""The order of a bench run: round after round, each round runs every workload once under every
scheduler (A B C, A B C, ... within a boot: no scheduler's runs bunched together in time), run r of
everything before run r + 1 of anything, so a slow drift over the boot falls evenly on every
scheduler. The schedulers' order changes from round to round as the rows of a Williams square
(`order_of_round`): over as many rounds as there are schedulers (twice as many when their number is
odd) each runs first, second, ... equally often, and each runs right after every other equally often,
so neither a position in the round nor what the previous run left behind (a warm cache, a scheduler
still unloading) favours one of them. The report's interval takes the runs as independent draws; this
is what lets it. A finished (workload, scheduler, run) is never redone: a run can be interrupted and
resumed."""

import json
import os


def order_of_round(n, r):
    """The order of n schedulers (indices) in round r: row r of a Williams square. Row 0 is 0, 1,
    n-1, 2, n-2, ...; row r adds r (mod n); when n is odd, rows n..2n-1 are rows 0..n-1 reversed."""
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    row = [(i + r) % n for i in first]
    return row[::-1] if n % 2 and (r // n) % 2 else row


def interleave(workloads, schedulers, runs):
    """The list of (workload, scheduler, run) in execution order: run r of every workload and scheduler
    before run r + 1 of any, the schedulers in round r's order (order_of_round)."""
    order = []
    for run in range(runs):
        row = order_of_round(len(schedulers), run)
        for w in workloads:
            for i in row:
                order.append((w, schedulers[i], run))
    return order


def remaining(order, done):
    """The steps of `order` not in `done` (a set of (workload, scheduler, run))."""
    return [step for step in order if step not in done]


def done_steps(results_path):
    """The (workload, scheduler, run) already saved in a results.jsonl (none when it does not exist)."""
    done = set()
    if os.path.exists(results_path):
        with open(results_path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash: that step runs again
                done.add((r["workload"], r["scheduler"], r["run"]))
    return done
