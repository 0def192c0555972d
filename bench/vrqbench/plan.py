"""The order of a bench run: every (workload, repetition) visits every scheduler, and the scheduler
order rotates with the repetition, so drift and noise over the run fall evenly on all of them. A
finished (workload, scheduler, run) is never redone: a run can be interrupted and resumed."""

import json
import os


def interleave(workloads, schedulers, runs):
    """The list of (workload, scheduler, run) in execution order."""
    order = []
    for run in range(runs):
        for w in workloads:
            k = run % len(schedulers)
            for s in schedulers[k:] + schedulers[:k]:
                order.append((w, s, run))
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
