/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq: the deadline and its slice -- BFS's rule (policy.h: vrq_deadline, vrq_should_renew) on
 * each queue's clock (VRQ's RQ niffies): advancing a queue's clock, carrying a deadline between clocks,
 * renewing it, fitting a remaining slice to a long queue, and the callbacks' steps that refresh it
 * (enqueue, tick, stopping).
 */
#include "vrq.bpf.h"

struct vrq_queue queues[VRQ_MAX_QUEUES];

/* Advance queue @q's clock (its niffies) to @now (scx_bpf_now), never backwards, and return it. */
__hidden u64 advance_niffies(u32 q, u64 now)
{
	struct vrq_queue *vq = queue_state(q);

	if (faster_clock())
		now = vrq_clock_now(now, clock_mark, clock_ahead, clock_rate);
	vq->niffies = vrq_niffies_advance(vq->niffies, now);
	return vq->niffies;
}

/*
 * The deadline's three jobs, each on queue @q's clock (niffies, already advanced by the caller):
 * rebase_deadline() moves it onto that clock; renew_deadline() is BFS's renewal; fit_slice()
 * cuts a remainder longer than the queue allows now. refresh_deadline() runs them in that order.
 */

/* Carry the deadline over from the clock it is on to queue @q's, keeping its lead (VRQ's RQ niffies). */
static __always_inline void rebase_deadline(struct task_ctx *tctx, u32 q, u64 niffies)
{
	if (tctx->queue == q)
		return;
	if (tctx->queue != VRQ_NO_QUEUE) {
		struct vrq_queue *src = queue_state(tctx->queue);

		tctx->deadline = vrq_rebase_deadline(tctx->deadline, src->niffies, niffies);
		stat_inc(VRQ_STAT_NIFFIES_REBASE);
	}
	tctx->queue = q;
}

/*
 * Count which rule (vrq_effective_slice) gave the slice of a renewal: the target latency's, or a long
 * queue's (any other slice below rr_interval). Tested on the slice rather than as rule >=
 * VRQ_SLICE_FIT_ROUND, which counts the same renewals: the verifier walks many more instructions for
 * that with every mechanism on.
 */
static __always_inline void count_slice_rule(u64 slice, u32 rule)
{
	if (slice < rr_interval_ns && rule != VRQ_SLICE_TARGET)
		stat_inc(VRQ_STAT_RENEWAL_SHRUNK);
	if (rule == VRQ_SLICE_TARGET)
		stat_inc(VRQ_STAT_TARGET_SHORTENED);
	if (rule >= VRQ_SLICE_FLOOR_GAVE_WAY)
		stat_inc(VRQ_STAT_FLOOR_GAVE_WAY);
	if (rule == VRQ_SLICE_ROUND_OVER)
		stat_inc(VRQ_STAT_ROUND_OVER);
}

/*
 * BFS's renewal: a new @slice and a new deadline from @niffies (now on its queue's clock), less the
 * wake-up credit when --wake-credit gives one (@woken), its offset stretched by group accounting and
 * the fork-depth penalty.
 */
static __always_inline void renew_deadline(struct task_struct *p, struct task_ctx *tctx, u64 niffies, u64 slice,
					   u64 rate, bool woken)
{
	u64 group_m = group_multiplier_of(tctx->group, tctx->group_slot);
	u64 depth_m = fork_depth_penalty ? vrq_fork_depth_multiplier(tctx->fork.fork_depth) : 1;
	/* the offset is in the queues' clock time (at @rate): the same for every task at any rate */
	u64 clock_slice = vrq_clock_slice(slice, rr_interval_ns, rate), lag = 0, credit;
	u64 offset = vrq_group_deadline(0, task_nice(p), clock_slice, group_m * depth_m);

	/* cgroup weights: the cgroup's stretch after the task's own offset (a turn per runnable task
	 * over the CPUs its share is worth), its lag before it */
	if (group_accounting == VRQ_GROUP_CGROUP) {
		offset += cgroup_stretch(tctx, clock_slice, slice, rate);
		lag = tctx->cg.lag;
	}
	credit = vrq_wakeup_credit(tctx->time_slice, woken, slice, offset, wake_credit);

	/* a kernel thread that used up its slice competes as a normal task (enqueue sets it again on its
	 * next wake-up) */
	tctx->kernel_wakeup = 0;
	if (credit) {
		tctx->time_slice = vrq_credited_slice(tctx->time_slice, slice);
		stat_inc(VRQ_STAT_WAKE_CREDIT);
	} else {
		tctx->time_slice = slice;
	}
	tctx->deadline = niffies + offset - credit;
	tctx->deadline = tctx->deadline > lag ? tctx->deadline - lag : 0;
	tctx->offset = offset;
	stat_inc(VRQ_STAT_RENEWAL);
	if (group_m >= VRQ_GROUP_STRETCHED_MIN)
		stat_inc(VRQ_STAT_GROUP_STRETCHED);
	if (depth_m > 1)
		stat_inc(VRQ_STAT_DEPTH_STRETCHED);
}

/*
 * At a renewal of @tctx's deadline (its new slice in time_slice; @old_slice what was left of the last
 * one, negative by the run beyond it): what it owes comes out of the new slice, down to the shortest
 * slice (vrq_slice_payment); the rest is owed on to the next renewal. A global function, walked once by
 * the verifier: inlined into refresh_deadline, its branches multiplied with every caller's and the walk
 * grew several times over.
 * Returns 0.
 */
__noinline int repay_overrun(struct task_ctx *tctx __tctx, s64 old_slice)
{
	u64 paid;

	if (old_slice < 0)
		tctx->owed_ns += (u64)-old_slice;
	if (!tctx->owed_ns)
		return 0;
	paid = vrq_slice_payment(tctx->owed_ns, tctx->time_slice, min_slice_ns);
	if (paid) {
		tctx->time_slice -= paid;
		tctx->owed_ns -= paid;
		stat_inc(VRQ_STAT_SLICE_REPAID);
	}
	return 0;
}

/* The deadline is kept, but the queue grew long: do not let a stale long remainder hold up the round. */
static __always_inline void fit_slice(struct task_ctx *tctx, u64 slice)
{
	if (tctx->time_slice > (s64)slice) {
		tctx->time_slice = slice;
		stat_inc(VRQ_STAT_REMAINDER_CUT);
	}
}

/*
 * Bring a task's deadline onto queue @q's clock, then give it a new one when vrq_should_renew() says
 * so (@woken: it is queued by its wake-up, not after being descheduled while runnable), else keep it
 * and fit its remaining slice to the queue. @queued: the tasks in queue @q, as the caller has just
 * read them (VRQ_QUEUED_UNREAD: read them here), so that one callback reads a queue's depth once: each
 * read is a kfunc call that looks the queue up by its id. Idempotent. Returns the clock reading
 * (scx_bpf_now) it refreshed at, for a caller that stamps the same moment without reading the clock
 * again.
 */
__hidden u64 refresh_deadline(struct task_struct *p __task, struct task_ctx *tctx __tctx, u32 q, bool woken,
			      s64 queued_read)
{
	u64 now = scx_bpf_now(), niffies = advance_niffies(q, now), rate = clock_rate;
	u64 queued = queued_read == VRQ_QUEUED_UNREAD ? scx_bpf_dsq_nr_queued(q) : queued_read;
	u32 slice_rule;
	u64 slice;

	rebase_deadline(tctx, q, niffies);
	slice = task_slice(p, q, queued, rate, &slice_rule);
	if (vrq_should_renew(tctx->time_slice, slice, tctx->deadline, niffies, woken)) {
		s64 old_slice = tctx->time_slice;

		count_slice_rule(slice, slice_rule);
		renew_deadline(p, tctx, niffies, slice, rate, woken);
		repay_overrun(tctx, old_slice);
	} else {
		fit_slice(tctx, slice);
	}
	if (woken)
		place_under_share(tctx, q, queued, niffies, slice);
	return now;
}

/*
 * The task that just ran is queued again right after its CPU's dispatch refreshed its deadline on this
 * queue (prev_keeps_cpu), and its stopping left it slice: nothing since has moved its clock but a few
 * microseconds, so a second refresh would do nothing -- at the cost of one, on every preemption and
 * turn's end. A slice used up in between (charged, or its turn over: end_turn_if_over) is renewed.
 */
static __always_inline bool refreshed_by_dispatch(struct task_struct *p, const struct task_ctx *tctx, u32 q)
{
	s32 cpu = tctx->refreshed_cpu - 1;
	struct cpu_ctx *cctx;

	if (cpu < 0 || tctx->time_slice <= 0 || cpu != scx_bpf_task_cpu(p) || tctx->queue != q ||
	    !(cctx = cpu_ctx_of(cpu)))
		return false;
	return cctx->turn_seq == tctx->refreshed_turn_seq;
}

/*
 * Ready @p for a queue (enqueue, step 1): refresh its deadline on queue @q (@woken: by its wake-up),
 * give a woken kernel thread VRQ_PRIO_KERNEL, stamp when it was queued. Returns its priodl.
 */
__hidden u64 ready_to_queue(struct task_struct *p __task, struct task_ctx *tctx __tctx, u32 q, bool woken)
{
	/* stamped with the refresh's clock reading: under the run queue's lock scx_bpf_now() returns the
	 * same, and the read is a kfunc call */
	if (woken || !refreshed_by_dispatch(p, tctx, q))
		tctx->enq_at = refresh_deadline(p, tctx, q, woken, VRQ_QUEUED_UNREAD);
	else
		tctx->enq_at = scx_bpf_now();
	tctx->refreshed_cpu = 0;
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
		if (queue_may_hold(q) && scx_bpf_dsq_nr_queued(q) > 0)
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
	refresh_deadline(p, tctx, q, false, VRQ_QUEUED_UNREAD);
	p->scx.slice = tctx->time_slice > 0 ? tctx->time_slice : rr_interval_ns;
	keep_on_cpu(tctx, cpu_ctx_of(cpu), task_priodl(p, tctx));
	stat_inc(VRQ_STAT_RENEWED_ON_TICK);
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
		refresh_deadline(p, tctx, tctx->queue, false, VRQ_QUEUED_UNREAD);
	return 0;
}

