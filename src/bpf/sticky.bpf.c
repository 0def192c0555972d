/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's sticky tasks (--sticky; BFS's sticky): a task descheduled while runnable (not by yielding),
 * not a short runner, is sticky to its CPU: another queue's CPU counts it as later by the nice-19
 * offset unless taking it evens out the two queues, and another CPU of its own queue by one
 * rr_interval. Its per-task state is task_ctx.sticky; dispatch.bpf.c reads it through sticky_elsewhere
 * and sticky_to_other_cpu (sticky_pick_in_queue) and counts the heads passed over (count_sticky_passed).
 */
#include "vrq.bpf.h"

/*
 * BFS sticky tasks: does the head of queue @q (@hctx: its task_ctx, may be NULL) count as later for
 * this CPU of queue @own? When it is sticky to a CPU of @q (another CPU had to leave it there), unless
 * taking it evens out the two queues (vrq_sticky_holds).
 */
__hidden bool sticky_elsewhere(struct task_ctx *hctx, u32 q, u32 own)
{
	if (!sticky || q == own)
		return false;
	return hctx && hctx->sticky.sticky_cpu >= 0 && queue_of_cpu(hctx->sticky.sticky_cpu) == q &&
	       vrq_sticky_holds(scx_bpf_dsq_nr_queued(q), online_cpus_of_queue(q),
				scx_bpf_dsq_nr_queued(own), online_cpus_of_queue(own));
}

/*
 * Sticky tasks inside one queue: is this head (@hctx: its task_ctx, may be NULL) sticky to a CPU other
 * than @cpu? Then the other CPUs of its queue see it later by vrq_sticky_queue_offset
 * (sticky_pick_in_queue).
 */
__hidden bool sticky_to_other_cpu(struct task_ctx *hctx, s32 cpu)
{
	return sticky && hctx && hctx->sticky.sticky_cpu >= 0 && hctx->sticky.sticky_cpu != cpu;
}

/* Sticky tasks: a task sticky to a CPU runs, there (kept) or elsewhere (stolen); the mark is spent. */
__hidden int sticky_ends(struct task_ctx *tctx __tctx, s32 cpu)
{
	if (tctx->sticky.sticky_cpu < 0)
		return 0;
	stat_inc(tctx->sticky.sticky_cpu == cpu ? VRQ_STAT_STICKY_KEPT : VRQ_STAT_STICKY_STOLEN);
	tctx->sticky.sticky_cpu = -1;
	return 0;
}

/*
 * BFS sticky: a task that leaves this CPU involuntarily (preempted or out of slice), not by yielding, is
 * sticky to it, unless it is a short runner (vrq_becomes_sticky; end_run has already ended a run its
 * wakee cut). The yield hand-off (yielded) is spent either way.
 */
__hidden int mark_sticky(struct task_struct *p __task, struct task_ctx *tctx __tctx, bool runnable)
{
	if (sticky && vrq_becomes_sticky(runnable, tctx->sticky.yielded,
					 vrq_short_runner(tctx->avg_run_ns, tctx->run_ns, short_run_ns))) {
		tctx->sticky.sticky_cpu = scx_bpf_task_cpu(p);
		stat_inc(VRQ_STAT_STICKY_SET);
	}
	tctx->sticky.yielded = 0;
	return 0;
}

