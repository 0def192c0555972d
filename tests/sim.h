/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host simulation of tasks that are always runnable, all allowed on one CPU, scheduled by the same
 * policy functions the BPF scheduler calls (src/bpf/policy.h: vrq_should_renew and
 * vrq_group_deadline as refresh_deadline / renew_deadline call them, vrq_task_prio, vrq_priodl)
 * and the same dispatch flow as vrq_dispatch(): at each scheduler tick the running task is charged;
 * when its slice is used up the CPU compares its renewed priodl with the queue's earliest one and
 * runs the smaller. Tasks here are alone in their group (multiplier VRQ_GROUP_LOAD_ONE, what
 * group_multiplier_of gives with one busy group or accounting off), at fork depth 1, and never woken
 * (so no wake-up credit and no under-share placement).
 *
 * It predicts the CPU shares the in-guest test measures (two hogs pinned to one CPU at different nice
 * levels, or a normal and a SCHED_IDLE hog), including the effect of seeing slice expiry only at ticks,
 * and what repay_overrun does with it: the run on to the tick is owed, and taken out of the next slice
 * (vrq_slice_payment, down to the default --min-slice-us).
 */
#ifndef __VRQ_SIM_H
#define __VRQ_SIM_H

#include <stdint.h>
#include "../src/bpf/policy.h"

#define SIM_MAX_TASKS 16
#define SIM_MIN_SLICE_NS (250 * VRQ_NSEC_PER_USEC)	/* --min-slice-us's default */

struct sim_task {
	s32 nice;
	u32 policy;
	u64 deadline;
	s64 time_slice;
	u64 owed;	/* run beyond the slices given, not yet repaid (owed_ns) */
	u64 runtime;	/* ns of CPU received */
};

/*
 * Run @n tasks for @duration_ns with ticks every @tick_ns and slice @rr_ns, the queue's clock at @rate
 * (VRQ_RATE_ONE: real time; sim_run); idle-priority tasks are run once after waiting @idle_bound_ns
 * (0: never). Fills each task's runtime.
 */
static inline void sim_run_at_rate(struct sim_task *t, int n, u64 rr_ns, u64 tick_ns, u64 duration_ns,
				   u64 idle_bound_ns, u64 rate)
{
	u64 now = 0, waiting_since[SIM_MAX_TASKS] = { 0 };
	/* the target latency's faster queue clock (policy.h, rule 1): shorter turns, offsets in clock time */
	u64 slice_ns = vrq_turn_at_rate(rr_ns, rate);
	u64 clock_slice_ns = vrq_clock_slice(slice_ns, rr_ns, rate);
	int cur = -1, i;

	/* every task is enqueued at 0 with a used-up slice (vrq_init_task): first deadline from now */
	for (i = 0; i < n; i++) {
		t[i].time_slice = (s64)slice_ns;
		t[i].deadline = vrq_group_deadline(0, t[i].nice, clock_slice_ns, VRQ_GROUP_LOAD_ONE);
		t[i].owed = 0;
		t[i].runtime = 0;
	}
	while (now < duration_ns) {
		/* the queue's clock at a constant @rate since 0 (the scheduler banks it every millisecond) */
		u64 clock = now + now * (rate - VRQ_RATE_ONE) / VRQ_RATE_ONE;
		int best = -1;
		u64 best_key = 0;

		/* the task that ran is refreshed as refresh_deadline does for a requeued (not woken) task;
		 * queued ones keep theirs */
		if (cur >= 0 && vrq_should_renew(t[cur].time_slice, slice_ns, t[cur].deadline, clock, 0)) {
			u64 paid;

			t[cur].owed += t[cur].time_slice < 0 ? (u64)-t[cur].time_slice : 0;
			t[cur].time_slice = (s64)slice_ns;
			t[cur].deadline = vrq_group_deadline(clock, t[cur].nice, clock_slice_ns, VRQ_GROUP_LOAD_ONE);
			paid = vrq_slice_payment(t[cur].owed, t[cur].time_slice, SIM_MIN_SLICE_NS);
			t[cur].time_slice -= (s64)paid;
			t[cur].owed -= paid;
		}
		for (i = 0; i < n; i++) {
			u64 key = vrq_priodl(vrq_task_prio(t[i].policy, 0, 0), t[i].deadline);

			if (idle_bound_ns && i != cur && vrq_task_prio(t[i].policy, 0, 0) == VRQ_PRIO_SCHED_IDLE &&
			    now - waiting_since[i] >= idle_bound_ns) {
				best = i;	/* the starvation bound (rescue_starved_sched_idle) */
				break;
			}
			/* ties keep the running task (dispatch: vrq_keeps_cpu) */
			if (best < 0 || key < best_key || (key == best_key && i == cur)) {
				best = i;
				best_key = key;
			}
		}
		if (best != cur && cur >= 0)
			waiting_since[cur] = now;
		cur = best;
		/* run until the kernel notices the slice is gone: the first tick at or after it */
		do {
			now += tick_ns;
			t[cur].runtime += tick_ns;
			t[cur].time_slice -= (s64)tick_ns;
		} while (t[cur].time_slice > 0 && now < duration_ns);
	}
}

static inline void sim_run(struct sim_task *t, int n, u64 rr_ns, u64 tick_ns, u64 duration_ns,
			   u64 idle_bound_ns)
{
	sim_run_at_rate(t, n, rr_ns, tick_ns, duration_ns, idle_bound_ns, VRQ_RATE_ONE);
}

#endif /* __VRQ_SIM_H */
