/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's deadline core: BFS's rule (policy.h: vrq_deadline, vrq_renew_deadline) on each queue's clock
 * (VRQ's RQ niffies). Included by each file whose steps refresh a deadline (main.bpf.c, deadline.bpf.c,
 * select.bpf.c, dispatch.bpf.c), so that refresh_deadline stays a static function, walked by the
 * verifier in each caller's state as before the split: as a global function (verified once, with
 * unknown arguments) it left its callers' states unpruned -- select_cpu alone walked 212k instructions
 * instead of 52k, 335k in all against the budget's 250k.
 */
#ifndef __VRQ_DEADLINE_BPF_H
#define __VRQ_DEADLINE_BPF_H

/* Advance queue @q's clock (its niffies) to now, never backwards, and return it. */
static __always_inline u64 advance_niffies(u32 q)
{
	struct vrq_queue *vq = queue_state(q);
	u64 now = scx_bpf_now();

	if (target_latency_ns)
		now = vrq_clock_now(now, clock_mark, clock_ahead, clock_rate);
	vq->niffies = vrq_niffies_advance(vq->niffies, now);
	return vq->niffies;
}

/*
 * The deadline's three jobs, each on queue @q's clock (niffies, already advanced by the caller):
 * rebase_deadline() moves it onto that clock; new_deadline_from_now() is BFS's renewal; fit_slice()
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

/* Count which long-queue rule (vrq_effective_slice) gave the slice of a renewal. */
static __always_inline void count_slice_rule(u64 slice, u32 rule)
{
	if (slice < rr_interval_ns)
		stat_inc(VRQ_STAT_SLICE_SHRUNK);
	if (rule == VRQ_SLICE_TARGET)
		stat_inc(VRQ_STAT_TARGET_SHRUNK);
	if (rule >= VRQ_SLICE_FLOOR_GAVE_WAY)
		stat_inc(VRQ_STAT_FLOOR_GAVE_WAY);
	if (rule == VRQ_SLICE_ROUND_OVER)
		stat_inc(VRQ_STAT_ROUND_OVER);
}

/*
 * BFS's renewal: a fresh @slice and a new deadline from @niffies (now on its queue's clock), less the
 * wake-up credit when --wake-credit gives one (@woken), its offset stretched by group accounting and
 * the fork-depth penalty.
 */
static __always_inline void new_deadline_from_now(struct task_struct *p, struct task_ctx *tctx, u64 niffies,
						  u64 slice, u64 rate, bool woken)
{
	u64 group_m = group_multiplier_of(tctx->group);
	u64 depth_n = fork_depth_penalty ? vrq_fork_depth_scale(tctx->fork.fork_depth) : 1;
	/* the offset is in the queues' clock time (at @rate): the same for every task at any rate */
	u64 offset = vrq_group_deadline(0, task_nice(p), vrq_offset_slice(slice, rr_interval_ns, rate),
					group_m * depth_n);
	u64 credit = vrq_wakeup_credit(tctx->time_slice, woken, slice, offset, wake_credit_pct);

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
	tctx->offset = offset;
	stat_inc(VRQ_STAT_NEW_DEADLINE);
	if (group_m >= VRQ_GROUP_SCALED_MIN)
		stat_inc(VRQ_STAT_GROUP_SCALED);
	if (depth_n > 1)
		stat_inc(VRQ_STAT_DEPTH_SCALED);
}

/* The queue grew long: do not let a stale long remainder hold up the round. */
static __always_inline void fit_slice(struct task_ctx *tctx, u64 slice)
{
	if (tctx->time_slice > (s64)slice) {
		tctx->time_slice = slice;
		stat_inc(VRQ_STAT_SLICE_SHRUNK);
	}
}

/*
 * Bring a task's deadline onto queue @q's clock, then give it a new one when vrq_renew_deadline() says
 * so (@woken: it is queued by its wake-up, not after being descheduled while runnable), else keep it
 * and fit its remaining slice to the queue. Idempotent.
 */
static __noinline void refresh_deadline(struct task_struct *p, struct task_ctx *tctx, u32 q, bool woken)
{
	u64 niffies = advance_niffies(q), rate = clock_rate, queued = scx_bpf_dsq_nr_queued(q);
	u32 slice_rule;
	u64 slice;

	rebase_deadline(tctx, q, niffies);
	slice = task_slice(p, q, queued, rate, &slice_rule);
	if (vrq_renew_deadline(tctx->time_slice, slice, tctx->deadline, niffies, woken)) {
		count_slice_rule(slice, slice_rule);
		new_deadline_from_now(p, tctx, niffies, slice, rate, woken);
	} else {
		fit_slice(tctx, slice);
	}
	if (woken)
		place_under_share(tctx, q, queued, niffies, slice);
}

#endif /* __VRQ_DEADLINE_BPF_H */
