/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's dispatch steps: a CPU looks for work. SCHED_IDLE tasks past their bound first; then the
 * earliest priodl among every queue's head, read without their locks (MuQSS's lockless peek); the task
 * that just ran competes with it; only the chosen queue is locked, to take its head (the upgrade of
 * BFS's upgradeable-lock experiment).
 */
#include "vrq.bpf.h"

/*
 * SCHED_IDLE tasks wait behind every normal task, but never long enough to trip the sched_ext
 * watchdog: every eighth of --idle-bound-ms this CPU looks at the tail of its own queue (where
 * SCHED_IDLE tasks sort) and runs up to VRQ_SCHED_IDLE_RESCUE_MAX that have waited longer than the
 * bound, each with a --min-slice-us slice (in effect until the next tick), so that many SCHED_IDLE
 * tasks -- any user may make them -- all get their turn within the watchdog while normal tasks lose
 * little.
 */
#define VRQ_SCHED_IDLE_RESCUE_MAX 4

/* Dispatch, step 1: run SCHED_IDLE tasks that waited past the bound; true if any. */
__hidden bool rescue_starved_sched_idle(s32 cpu, u32 q, u64 now)
{
	struct vrq_queue *vq = queue_state(q);
	struct task_struct *p;
	u32 rescued = 0;

	if (now - vq->sched_idle_scan_at < idle_bound_ns / 8)
		return false;
	vq->sched_idle_scan_at = now;

	bpf_for_each(scx_dsq, p, q, SCX_DSQ_ITER_REV) {
		struct task_ctx *tctx;

		tctx = task_ctx_of(p);
		if (task_prio(p, tctx) != VRQ_PRIO_SCHED_IDLE)
			break;	/* reached the normal tasks: no SCHED_IDLE task is left behind them */
		if (!tctx || now - tctx->enq_at < idle_bound_ns)
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		scx_bpf_dsq_move_set_slice(BPF_FOR_EACH_ITER, min_slice_ns);
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_inc(VRQ_STAT_SCHED_IDLE_RESCUE);
			if (++rescued >= VRQ_SCHED_IDLE_RESCUE_MAX)
				break;
		}
	}
	return rescued > 0;
}

/*
 * How far into its own queue a CPU looks past a head sticky to another CPU of the queue for a task
 * that is not (sticky_pick_in_queue): the keys it can beat lie within one rr_interval of the head's,
 * and a bounded scan keeps dispatch's cost flat however long the queue.
 */
#define VRQ_STICKY_SCAN_MAX 8

/*
 * Sticky tasks inside this CPU's own queue @own (--sticky): its head is sticky to another CPU of the
 * queue, so to this CPU its key is later by vrq_sticky_queue_offset; a task behind it that is not
 * sticky elsewhere, and that this CPU may run, wins if its own key is smaller. Returns the smallest key
 * and records the winner in best->pick_pid (0: the head); best->sticky_passed gets the head's own key
 * when it is passed over, for count_sticky_passed.
 */
__hidden u64 sticky_pick_in_queue(s32 cpu, u32 own, u64 head_key, struct best_head *best)
{
	u64 offset = vrq_sticky_queue_offset(rr_interval_ns);
	u64 best_key = vrq_sticky_priodl(head_key, offset);
	struct task_struct *p;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, own, 0) {
		u64 key = p->scx.dsq_vtime;

		if (++seen > VRQ_STICKY_SCAN_MAX || key >= best_key)
			break;	/* the queue is in key order: nothing further on can beat best_key */
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (sticky_to_other_cpu(task_ctx_of(p), cpu))
			continue;	/* sticky elsewhere too: later by the same offset */
		best_key = key;
		best->pick_pid = p->pid;
		if (head_key < best->sticky_passed)
			best->sticky_passed = head_key;
		break;		/* the first such task has the smallest key */
	}
	return best_key;
}

/*
 * Dispatch, step 2: the earliest priodl among the queue heads this CPU may run, read without taking any
 * queue lock (MuQSS's lockless peek); ties go to the nearest queue (enum vrq_distance).
 */
__hidden int find_best_head(s32 cpu, u32 own, struct best_head *best)
{
	struct task_struct *head;
	u32 q, dist;
	u64 key;

	best->q = VRQ_NO_QUEUE;
	best->dist = VRQ_NR_DIST;
	best->priodl = 0;
	best->sticky_passed = (u64)-1;
	best->pick_pid = 0;
	bpf_for(q, 0, nr_queues) {
		if (q != own && !queue_may_hold(q))
			continue;
		if (q != own)
			stat_inc(VRQ_STAT_PEEK);
		head = __COMPAT_scx_bpf_dsq_peek(q);
		if (!head) {
			/* this CPU's own queue, under its lock: nothing can go in meanwhile */
			if (q == own)
				own_queue_found_empty(q);
			continue;
		}
		/*
		 * In its own queue, a head this CPU may not run still stands for the queue: tasks behind it
		 * may be allowed here, and taking moves the first one that is. Another queue's such head
		 * is left to the CPUs it may run on.
		 */
		if (q != own && !bpf_cpumask_test_cpu(cpu, head->cpus_ptr))
			continue;
		key = head->scx.dsq_vtime;
		/* sticky_elsewhere's own test first: no task_ctx lookup for a head of this CPU's queue */
		if (sticky && q != own && sticky_elsewhere(task_ctx_of(head), q, own)) {
			if (key < best->sticky_passed)
				best->sticky_passed = key;
			key = vrq_sticky_priodl(key, vrq_sticky_offset(rr_interval_ns));
		} else if (sticky && q == own && sticky_to_other_cpu(task_ctx_of(head), cpu)) {
			key = sticky_pick_in_queue(cpu, own, key, best);
		}
		/* only ties between queues read it: one queue needs no topology lookup */
		dist = nr_queues > 1 ? cpu_distance(cpu, queue_rep_cpu[QUEUE_IDX(q)]) : VRQ_DIST_SAME;
		if (best->q == VRQ_NO_QUEUE || key < best->priodl || (key == best->priodl && dist < best->dist)) {
			best->q = q;
			best->priodl = key;
			best->dist = dist;
		}
	}
	return 0;
}

/* The task that just ran is still runnable and may run on this CPU (else: goidle_reason). */
static __always_inline bool prev_may_stay(s32 cpu, struct task_struct *prev)
{
	return prev && (prev->scx.flags & SCX_TASK_QUEUED) && bpf_cpumask_test_cpu(cpu, prev->cpus_ptr);
}

/*
 * A task of a higher class (real-time, deadline) is runnable on this CPU, so this dispatch serves the
 * kernel's sched_ext deadline server (7.0 on), which runs our tasks there for a share of each period.
 * For the server an empty dispatch does not mean "keep prev through enqueue(SCX_ENQ_LAST)": it reads
 * nothing to run and stops, and it starts again only when the CPU's count of sched_ext tasks rises from
 * 0 -- never, while a task that may run only there waits (a per-CPU kworker, or any pinned task: the
 * sched_ext watchdog then ejected the scheduler; in two of seven boots the disabling itself hung behind a
 * kworker preempted inside an RCU read section; traced on 7.3.4). False on kernels
 * without scx_bpf_locked_rq, which have no such server.
 */
struct rq *scx_bpf_locked_rq(void) __ksym __weak;	/* 6.18 on; common.bpf.h declares it strong */

static __always_inline bool higher_class_waits(void)
{
	struct rq *rq;

	if (!bpf_ksym_exists(scx_bpf_locked_rq))
		return false;
	rq = scx_bpf_locked_rq();
	return rq && BPF_CORE_READ(rq, nr_running) > BPF_CORE_READ(rq, scx.nr_running);
}

/*
 * The task that just ran keeps the CPU by a new slice, which the kernel reads as "keep running prev"
 * (@cctx: its CPU's); its priodl was refreshed by prev_keeps_cpu. No enqueue(SCX_ENQ_LAST) follows (see
 * higher_class_waits), so nothing is left for ready_to_queue to take over.
 */
static __always_inline void keep_by_slice(struct task_struct *prev, struct task_ctx *pctx, struct cpu_ctx *cctx)
{
	pctx->refreshed_cpu = 0;
	prev->scx.slice = pctx->time_slice > 0 ? pctx->time_slice : rr_interval_ns;
	keep_on_cpu(pctx, cctx, task_priodl(prev, pctx));
	stat_inc(VRQ_STAT_KEEP_SERVED);
}

/*
 * Dispatch, step 3: the task that just ran is not in any queue yet; it competes with the best head by
 * its own priodl (vrq_keeps_cpu). Its run is charged first: a slice the slice timer ended is used up
 * only once charged (otherwise only the tick charges), and an uncharged one would keep its old deadline
 * and win again until the next tick. Then its deadline is refreshed on this CPU's queue (renewed if its
 * slice is used up). @now: dispatch's clock reading. True: it keeps the CPU (dispatch takes nothing; see
 * keep_on_cpu).
 */
__hidden bool prev_keeps_cpu(s32 cpu, struct task_struct *prev __task, u32 own, const struct best_head *best,
			     u64 now)
{
	struct task_ctx *pctx;
	struct cpu_ctx *cctx;
	u64 priodl;

	if (!prev_may_stay(cpu, prev) || !(pctx = task_ctx_of(prev)))
		return false;
	cctx = cpu_ctx_of(cpu);
	charge_slice(pctx, now);
	/*
	 * A turn-end kick (end_longest_turn) lands here, before any stopping: a turn that is over is
	 * used up now, or prev would compete with its old deadline -- earlier than the woken task's
	 * renewed one after the faster clock passed it -- keep the CPU and lose the kick. Renewed, it
	 * starts a new turn if it wins all the same.
	 */
	if (end_turn_if_over(prev, pctx, cpu, now) && cctx) {
		cctx->turn_started = now;
		stat_inc(VRQ_STAT_TURN_OVER_DISPATCH);
	}
	refresh_deadline(prev, pctx, own, false, VRQ_QUEUED_UNREAD);
	priodl = task_priodl(prev, pctx);
	if (!vrq_keeps_cpu(priodl, best->q != VRQ_NO_QUEUE, best->priodl)) {
		/* its enqueue follows before this CPU starts the winner: the refresh holds till then */
		if (cctx) {
			pctx->refreshed_cpu = cpu + 1;
			pctx->refreshed_turn_seq = cctx->turn_seq;
		}
		return false;
	}
	count_sticky_passed(best, priodl);
	/* beside a higher class by its slice, else through enqueue(SCX_ENQ_LAST) */
	if (higher_class_waits())
		keep_by_slice(prev, pctx, cctx);
	return true;
}

/*
 * The head dispatch chose was gone by the take (take_best failed): beside a higher class the task that
 * just ran stays by its slice, as prev_keeps_cpu keeps it there. True if it does.
 */
__hidden bool keep_served(s32 cpu, struct task_struct *prev __task)
{
	struct task_ctx *pctx;

	if (!prev_may_stay(cpu, prev) || !higher_class_waits() || !(pctx = task_ctx_of(prev)))
		return false;
	keep_by_slice(prev, pctx, cpu_ctx_of(cpu));
	return true;
}

/*
 * Move the task sticky_pick_in_queue chose (@pid) from this CPU's queue @own to this CPU; false if it
 * is no longer among the first VRQ_STICKY_SCAN_MAX (it ran elsewhere or left), and the head is taken.
 */
static __always_inline bool take_picked(u32 own, s32 pid)
{
	struct task_struct *p;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, own, 0) {
		if (++seen > VRQ_STICKY_SCAN_MAX)
			break;
		if (p->pid == pid)
			return scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
	}
	return false;
}

/*
 * Dispatch, step 4, the upgrade of BFS's upgradeable-lock experiment: only now lock the chosen queue, to
 * move its first task that may run here to this CPU. If another queue's task is gone by then, fall back
 * to this CPU's own queue. Records the queue's depth for the statistics.
 */
__hidden bool take_best(u32 own, const struct best_head *best)
{
	struct vrq_queue *vq;
	u64 depth;

	if (best->q == VRQ_NO_QUEUE)
		return false;
	vq = queue_state(best->q);
	depth = scx_bpf_dsq_nr_queued(best->q);
	vq->nr_queued = depth;
	if (depth > vq->max_queued)
		vq->max_queued = depth;
	if ((best->q == own && best->pick_pid && take_picked(own, best->pick_pid)) ||
	    scx_bpf_dsq_move_to_local(best->q, 0)) {
		stat_inc(best->q == own ? VRQ_STAT_DISPATCH_LOCAL : VRQ_STAT_DISPATCH_STEAL);
		return true;
	}
	if (best->q == own)
		return false;
	stat_inc(VRQ_STAT_STEAL_FAIL);
	if (scx_bpf_dsq_move_to_local(own, 0)) {
		stat_inc(VRQ_STAT_DISPATCH_LOCAL);
		return true;
	}
	return false;
}

/*
 * Dispatch, step 5: nothing to run here; say why (VRQ's sched_goidle breakdown). A runnable @prev that
 * may stay but lost to a head that was gone by the take is none of these.
 */
__hidden int count_goidle(s32 cpu, struct task_struct *prev)
{
	if (!prev)
		stat_inc(VRQ_STAT_GOIDLE_IDLE);
	else if (!(prev->scx.flags & SCX_TASK_QUEUED))
		stat_inc(VRQ_STAT_GOIDLE_BLOCKED);
	else if (!bpf_cpumask_test_cpu(cpu, prev->cpus_ptr))
		stat_inc(VRQ_STAT_GOIDLE_NEEDOTHER);
	return 0;
}

