/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq: the deadline and its slice -- the queues' state, and the callbacks' steps that refresh a
 * deadline (enqueue, tick, stopping). The rule itself (advancing a queue's clock, carrying a deadline
 * between clocks, renewing it, fitting a remaining slice to a long queue) is in deadline.bpf.h.
 */
#define VRQ_MAPS_HERE
#include "vrq.bpf.h"
#include "deadline.bpf.h"

struct vrq_queue queues[VRQ_MAX_QUEUES];

/*
 * The task that just ran is queued again right after its CPU's dispatch refreshed its deadline on this
 * queue (prev_keeps_cpu), and its stopping left it slice: nothing since has moved its clock but a few
 * microseconds, so a second refresh would do nothing -- at the cost of one, on every preemption and
 * turn's end. A slice used up in between (charged, or its turn over: end_turn_if_over) is renewed.
 */
static __always_inline bool refreshed_by_dispatch(struct task_struct *p, const struct task_ctx *tctx, u32 q)
{
	s32 cpu = tctx->fresh_cpu - 1;
	struct cpu_ctx *cctx;

	if (cpu < 0 || tctx->time_slice <= 0 || cpu != scx_bpf_task_cpu(p) || tctx->queue != q ||
	    !(cctx = cpu_ctx_of(cpu)))
		return false;
	return cctx->run_seq == tctx->fresh_seq;
}

/*
 * Ready @p for a queue (enqueue, step 1): refresh its deadline on queue @q (@woken: by its wake-up),
 * give a woken kernel thread VRQ_PRIO_KERNEL, stamp when it was queued. Returns its priodl.
 */
__hidden u64 ready_to_queue(struct task_struct *p __task, struct task_ctx *tctx __tctx, u32 q, bool woken)
{
	if (woken || !refreshed_by_dispatch(p, tctx, q))
		refresh_deadline(p, tctx, q, woken);
	tctx->fresh_cpu = 0;
	/*
	 * vrq_task_prio(): the kernel's own work does not wait behind a long queue of user tasks. Set by
	 * a wake-up; a kernel thread requeued with slice left (preempted, or at a cond_resched() in the
	 * middle of its work) keeps it; refresh_deadline() drops it once the slice is used up.
	 */
	if (woken) {
		tctx->kernel_wakeup = !!(p->flags & PF_KTHREAD);
		if (tctx->kernel_wakeup)
			stat_inc(VRQ_STAT_KERNEL_WAKEUP);
	}
	tctx->enq_at = scx_bpf_now();
	return task_priodl(p, tctx);
}

/*
 * Is any task waiting that this CPU might run instead of the current one? (Queue depths only; the
 * kfunc returns a negative error for a queue it does not know, which is not a waiting task.)
 */
__hidden bool anything_waiting(void)
{
	u32 q;

	if (scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) > 0 || scx_bpf_dsq_nr_queued(SCX_DSQ_GLOBAL) > 0)
		return true;
	bpf_for(q, 0, nr_queues) {
		if (scx_bpf_dsq_nr_queued(q) > 0)
			return true;
	}
	return false;
}

/*
 * The slice ran out (the kernel reschedules when it reads 0 after the tick) but nothing waits anywhere:
 * renew it here, with the new deadline BFS would give, instead of a trip through schedule() and
 * dispatch that could only pick this task again (see keep_on_cpu).
 */
__hidden int renew_on_tick(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q)
{
	refresh_deadline(p, tctx, q, false);
	p->scx.slice = tctx->time_slice > 0 ? tctx->time_slice : rr_interval_ns;
	keep_on_cpu(tctx, cpu_ctx_of(cpu), task_priodl(p, tctx));
	stat_inc(VRQ_STAT_SLICE_RENEWED);
	return 0;
}

/*
 * Going to sleep with its slice used up: the new deadline counts from now, as BFS renews it when the
 * slice ends, not from the wake-up to come -- renewed then, a task that sleeps often would come back
 * once per slice with the latest deadline of all and wait behind every hog.
 */
__hidden int renew_before_sleep(struct task_struct *p __task, struct task_ctx *tctx __tctx, bool runnable)
{
	if (!runnable && tctx->queue != VRQ_NO_QUEUE)
		refresh_deadline(p, tctx, tctx->queue, false);
	return 0;
}

