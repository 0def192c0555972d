/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq: a queued task finds a CPU (enqueue's last step) -- an idle one is woken, else a woken task
 * preempts by BFS's try_preempt (the latest running priodl), the CPU handling its wake-up first with
 * --preempt-local (directly, without a kick, when it would take the task itself), and failing that
 * ends the longest turn that has run its course (target latency, latency.bpf.c). A task a bound
 * kernel thread preempted, with nothing waiting, resumes behind it instead (--stay-behind-kthread).
 */
#include "vrq.bpf.h"

/* What kick_idle_or_preempt learns from the CPUs a queued task may use, when none of them is idle. */
struct busy_cpus {
	u64 latest_priodl;	/* the latest running_priodl among them (BFS try_preempt's victim) ... */
	s32 latest_cpu;		/* ... and its CPU (-1: none) */
	u64 longest_since;	/* the earliest start of a turn under way among them ... */
	s32 longest_cpu;	/* ... and its CPU (-1: none) */
};

/*
 * Wake an idle CPU @p may use (true: done; it will find @p by reading the queue heads), or, for a
 * wake-up (@survey), fill @busy. The idle mask is read once first: under load no CPU is idle, and a
 * task queued again (not woken) then needs nothing more.
 */
static bool kick_idle_or_survey(struct task_struct *p, struct busy_cpus *busy, bool survey)
{
	bool any_idle = may_kick() && idle_cpu_allowed(p);
	u32 cpu;

	if (!any_idle && !survey)
		return false;
	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx;

		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		/* CPU hotplug: one coming on line may run tasks (its kernel threads) before its
		 * cpu_online, one going off line may still show idle: kick any idle one found, and go on
		 * looking past one not (or no longer) known on line */
		if (any_idle && scx_bpf_test_and_clear_cpu_idle(cpu)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			stat_inc(VRQ_STAT_IDLE_KICK);
			if (cpu_is_online[CPU_IDX(cpu)])
				return true;
			continue;
		}
		if (!survey || !cpu_is_online[CPU_IDX(cpu)])
			continue;
		cctx = cpu_ctx_of(cpu);
		if (!cctx || !cctx->running_priodl)
			continue;
		if (cctx->running_priodl > busy->latest_priodl) {
			busy->latest_priodl = cctx->running_priodl;
			busy->latest_cpu = cpu;
		}
		if (cctx->turn_started < busy->longest_since) {
			busy->longest_since = cctx->turn_started;
			busy->longest_cpu = cpu;
		}
	}
	return false;
}

/*
 * --preempt-local: does @p, woken with @priodl and allowed to preempt (vrq_may_preempt), beat the task
 * running on @local, the CPU handling its wake-up (vrq_preempt_local)?
 */
static __always_inline bool preempts_local(struct task_struct *p, u64 priodl, s32 local,
					   const struct cpu_ctx *local_ctx)
{
	return local_ctx && vrq_preempt_local(preempt_local, bpf_cpumask_test_cpu(local, p->cpus_ptr), priodl,
					      local_ctx->running_priodl);
}

/*
 * A local preemption, by a kick or directly. The run it ends was ended by its wakee (short runners, and
 * --handoff-slice) only when the wake-up ran in the task's own context (in_own_context): a wake-up from
 * an interrupt on this CPU (a sleeper's timer, a timer's kworker, kdamond, kcompactd) runs in whatever
 * task it interrupted, which woke nobody. Counted as its hand-off, a CPU hog's run "ended" just into its
 * turn: it counted as a short runner, a latency waiter that shortened every turn, and --short-run-renew
 * renewed its deadline, so that it waited a whole further round.
 */
static __always_inline void count_local_preemption(struct cpu_ctx *local_ctx)
{
	if (in_own_context())
		local_ctx->waker_preempted = 1;
	stat_inc(VRQ_STAT_PREEMPT_LOCAL);
}

/*
 * @p preempts the task running on the CPU of @cctx: note whether @p is a kernel thread bound to that CPU,
 * for the preempted task's enqueue (stays_behind_kthread). The latest preemption's preemptor counts.
 */
static __always_inline void note_preemptor(struct task_struct *p, struct cpu_ctx *cctx)
{
	if (cctx)
		cctx->kthread_preempted = vrq_bound_kthread(!!(p->flags & PF_KTHREAD), p->nr_cpus_allowed);
}

/*
 * A woken task found no idle CPU: BFS try_preempt -- preempt the allowed CPU running the latest
 * running_priodl if the waking task's priodl is earlier (--preempt-local: this CPU first, if it may);
 * failing that, with a target latency, end the longest turn that has run its course. @sync_wakeup: the
 * wake_sync hand-off, which never preempts (nor does SCHED_BATCH).
 */
static void preempt_for_wakeup(struct task_struct *p, u64 priodl, bool sync_wakeup, const struct busy_cpus *busy)
{
	s32 local = bpf_get_smp_processor_id();
	struct cpu_ctx *local_ctx = cpu_ctx_of(local);

	if (!vrq_may_preempt(p->policy, sync_wakeup)) {
		stat_inc(VRQ_STAT_NO_PREEMPT);
		return;
	}
	if (!may_kick())
		return;
	if (preempts_local(p, priodl, local, local_ctx)) {
		note_preemptor(p, local_ctx);
		scx_bpf_kick_cpu(local, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_PREEMPT_KICK);
		count_local_preemption(local_ctx);
		return;
	}
	if (busy->latest_cpu >= 0 && vrq_should_preempt(priodl, busy->latest_priodl)) {
		note_preemptor(p, cpu_ctx_of(busy->latest_cpu));
		scx_bpf_kick_cpu(busy->latest_cpu, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_PREEMPT_KICK);
		return;
	}
	end_longest_turn(busy->longest_cpu, busy->longest_since);
}

/*
 * --preempt-local, the direct form (enqueue, before queueing). enqueue holds the run queue of @p's own
 * CPU (scx_bpf_task_cpu), and a task inserted on SCX_DSQ_LOCAL here goes onto that CPU's local DSQ; the
 * kernel then reschedules that CPU itself -- an idle one because a task above the idle class came onto
 * it, a busy one for SCX_ENQ_PREEMPT -- in this same path, where a kick (scx_bpf_kick_cpu) is bounced
 * through an irq_work, a second interrupt, and the CPU's dispatch then reads the queue heads only to
 * take @p. So @p goes straight there when that CPU is the one the kick would go to:
 * - it is the CPU handling the wake-up (a timer's or device's interrupt there, a waker there), or the
 *   only CPU @p may run on (select_cpu is not called for such a task; BFS's try_preempt has no other
 *   CPU to weigh);
 * - it is idle (claimed here), or @p may preempt (vrq_may_preempt) the task running there: on the CPU
 *   handling the wake-up by vrq_preempt_local, elsewhere by BFS's vrq_should_preempt;
 * - @p would head its queue, so that the kick's dispatch would take @p itself. Only its own queue's
 *   head is read (--queue cpu: another queue's earlier head waits for the next dispatch there).
 * Not a task delayed migration placed (hold_for_delay), nor while a higher class holds the CPU (it runs
 * nothing of its local DSQ until it comes back). True: inserted, nothing more to do.
 */
__hidden bool preempt_local_direct(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 priodl,
				   bool sync_wakeup, u64 enq_flags)
{
	s32 cpu = scx_bpf_task_cpu(p);
	bool waking_cpu = cpu == bpf_get_smp_processor_id();
	struct cpu_ctx *cctx;
	struct task_struct *head;
	bool idle;

	if (!preempt_local || (!waking_cpu && p->nr_cpus_allowed != 1) || tctx->delay.scaled_cpu >= 0 ||
	    !cpu_is_online[CPU_IDX(cpu)] || !(cctx = cpu_ctx_of(cpu)) || cctx->released)
		return false;
	/* an idle CPU runs nothing: its running_priodl is 0; the claim below confirms it */
	idle = !cctx->running_priodl;
	if (!idle && (!vrq_may_preempt(p->policy, sync_wakeup) ||
		      (waking_cpu ? !preempts_local(p, priodl, cpu, cctx)
				  : !vrq_should_preempt(priodl, cctx->running_priodl))))
		return false;
	head = __COMPAT_scx_bpf_dsq_peek(queue_of_cpu(cpu));
	if (head && head->scx.dsq_vtime < priodl)
		return false;
	if (idle) {
		if (!scx_bpf_test_and_clear_cpu_idle(cpu))
			return false;	/* not idle after all: the kick's path decides */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags);
		stat_inc(VRQ_STAT_DIRECT_IDLE);
		return true;
	}
	note_preemptor(p, cctx);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags | SCX_ENQ_PREEMPT);
	if (waking_cpu)
		count_local_preemption(cctx);
	stat_inc(VRQ_STAT_PREEMPT_DIRECT);
	return true;
}

/*
 * --stay-behind-kthread (policy.h: vrq_stays_behind_kthread), enqueue: @p, queued again on @cpu and not by
 * its wake-up, is that CPU's current task switched out for a kernel thread bound to the CPU
 * (note_preemptor), and nothing waits in its queue @q. By now the kernel thread is on this CPU's local
 * DSQ (inserted there directly, or taken there by the dispatch the preemption ran), so @p goes onto it
 * too, behind the kernel thread, with the slice it has: it runs again here as soon as that is done, and
 * no other CPU takes it in between. Not while a higher class holds the CPU: it may hold it long. True:
 * inserted, nothing more to do.
 */
__hidden bool stays_behind_kthread(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q,
				   u64 enq_flags)
{
	struct cpu_ctx *cctx;
	bool requeued_running;

	if (!stay_behind_kthread || (enq_flags & SCX_ENQ_WAKEUP) || !(cctx = cpu_ctx_of(cpu)) || cctx->released)
		return false;
	requeued_running = cpu == bpf_get_smp_processor_id() && scx_bpf_task_running(p);
	if (!vrq_stays_behind_kthread(stay_behind_kthread, requeued_running, cctx->kthread_preempted,
				      scx_bpf_dsq_nr_queued(q)))
		return false;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags);
	stat_inc(VRQ_STAT_STAYED_BEHIND_KTHREAD);
	return true;
}

/*
 * Enqueue, last step: a task was queued (select_cpu found no idle CPU, or it was not woken through
 * select_cpu). Wake an idle CPU that may run it; else, if it woke, preempt for it (preempt_for_wakeup).
 */
__hidden int kick_idle_or_preempt(struct task_struct *p __task, u64 priodl, bool wakeup, bool sync_wakeup)
{
	struct busy_cpus busy = { .latest_cpu = -1, .longest_since = ~0ULL, .longest_cpu = -1 };

	if (kick_idle_or_survey(p, &busy, wakeup) || !wakeup)
		return 0;
	preempt_for_wakeup(p, priodl, sync_wakeup, &busy);
	return 0;
}

