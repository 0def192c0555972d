/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's CPU selection (select_cpu): sync hand-off to the waker, else an idle CPU in VRQ's
 * best_mask_cpu order (policy.h: vrq_select_step) -- nearest first, fast before scaled with
 * --freq-threshold, at one distance the kind of CPU the task prefers first with --capacity-aware
 * (capacity.bpf.c) -- claimed and given the task straight away; a scaled one may be passed over for
 * delayed migration (delay.bpf.c).
 */
#include "vrq.bpf.h"

/*
 * Is @p's wake-up the end of a vfork: the waker, @p's child, in execve and waking @p from its own context
 * (the exec's release of the parent's memory)? Not a wake-up from an interrupt that came while a task
 * was in execve (in_own_context): a timer's wake-up of a frame thread there was taken for one and
 * preempted nobody, and the thread waited for the exec (a frame loop beside a fork storm, traced).
 * select_cpu's first step (wake_sync, with the vfork hand-off).
 */
__hidden bool parent_woken_by_exec(struct task_struct *p __task)
{
	struct task_struct *waker = bpf_get_current_task_btf();

	/* the cheap tests first: this runs at every wake-up */
	return BPF_CORE_READ_BITFIELD(waker, in_execve) && BPF_CORE_READ(waker, real_parent) == p &&
	       in_own_context();
}

static bool cpu_idle_now(s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool hit = bpf_cpumask_test_cpu(cpu, idle);

	scx_bpf_put_idle_cpumask(idle);
	return hit;
}

/* What pick_idle_cpu found. */
struct pick {
	s32 cpu;		/* the claimed idle CPU, or -1 */
	u32 dist;		/* its distance from the previous CPU */
	bool scaled;		/* it is frequency-scaled */
	bool delay;		/* none claimed: the first idle CPU in line is scaled; place the
				 * task on the waker instead */
	s32 scaled_cpu;		/* with delay: that scaled idle CPU, where the task goes if the
				 * delay runs out */
	u8 cap;			/* the capacity rule: VRQ_CAP_ANY (did not apply), else the kind
				 * preferred, found idle at the claimed CPU's distance */
	bool cap_other;		/* with cap: none of that kind was idle there; the other kind's taken */
};

/*
 * The waking task's capacity preference (vrq_cap_pref), VRQ_CAP_ANY without --capacity-aware or while
 * all CPUs are of one kind: then nothing else of the rule runs.
 */
static __always_inline u32 capacity_pref(struct task_struct *p, struct task_ctx *tctx, u64 wake_flags)
{
	if (!capacity_aware || !vrq_cap_mixed(nr_big_cpus, nr_little_cpus))
		return VRQ_CAP_ANY;
	return vrq_cap_pref(p->policy, task_nice(p), !(wake_flags & SCX_WAKE_FORK), tctx->avg_run_ns,
			    tctx->avg_sleep_ns, rr_interval_ns);
}

static __always_inline bool cpu_little(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	return cctx && cctx->little;
}

/* The mask of the kind @pref prefers; NULL for none (or the mask is missing: no preference then). */
static __always_inline const struct cpumask *cap_cpus_of(u32 pref)
{
	struct cap_masks *cm;
	u32 zero = 0;

	if (pref == VRQ_CAP_ANY || !(cm = bpf_map_lookup_elem(&cap_masks, &zero)))
		return NULL;
	return (const struct cpumask *)(pref == VRQ_CAP_BIG ? cm->big : cm->little);
}

/*
 * The CPUs of a selection step's frequency class (@perf): the fast or the scaled mask, NULL for any
 * class. False when the mask is missing (the step is skipped).
 */
static __always_inline bool perf_cpus_of(struct perf_masks *pm, u32 perf, const struct cpumask **cpus)
{
	struct bpf_cpumask *m = NULL;

	*cpus = NULL;
	if (perf == VRQ_PERF_ANY)
		return true;
	if (pm)
		m = perf == VRQ_PERF_FAST ? pm->fast : pm->scaled;
	if (!m)
		return false;
	*cpus = (const struct cpumask *)m;
	return true;
}

/*
 * The same-CPU step: the previous CPU itself, if @p may run there and it is of the step's class
 * (@perf_cpus). True when the search ends here: it was claimed, or (@may_delay, a scaled step) it is
 * idle and the task goes to the waker instead.
 */
static __always_inline bool try_prev_cpu(struct task_struct *p, s32 prev_cpu, u32 perf,
					 const struct cpumask *perf_cpus, bool may_delay, struct pick *r)
{
	if (!bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr))
		return false;
	if (perf_cpus && !bpf_cpumask_test_cpu(prev_cpu, perf_cpus))
		return false;
	if (perf == VRQ_PERF_SCALED && may_delay && cpu_idle_now(prev_cpu)) {
		r->delay = true;
		r->scaled_cpu = prev_cpu;
		return true;
	}
	if (!scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		return false;
	r->cpu = prev_cpu;
	r->dist = VRQ_DIST_SAME;
	r->scaled = perf == VRQ_PERF_SCALED;
	return true;
}

/*
 * The CPUs a wider step searches: those within @dist of the previous CPU (@prev_ctx's masks) that
 * @p may use, of the step's class, built in this CPU's scratch mask. NULL: the step cannot be searched.
 */
static __always_inline const struct cpumask *step_cpus(struct task_struct *p, struct cpu_ctx *prev_ctx,
							struct cpu_ctx *this_ctx, u32 dist,
							const struct cpumask *perf_cpus)
{
	const struct cpumask *near;
	struct bpf_cpumask *tmp;

	if (dist == VRQ_DIST_ANY && !perf_cpus)
		return p->cpus_ptr;
	if (!prev_ctx || !this_ctx || !(tmp = this_ctx->tmp))
		return NULL;
	near = distance_mask(prev_ctx, dist);
	if (!near)
		return NULL;
	bpf_cpumask_and(tmp, near, p->cpus_ptr);
	if (perf_cpus)
		bpf_cpumask_and(tmp, (const struct cpumask *)tmp, perf_cpus);
	return (const struct cpumask *)tmp;
}

/*
 * A wider step: claim an idle CPU of @search. True when the search ends here: one was claimed, or
 * (@may_delay, a scaled step) one is idle and the task goes to the waker instead.
 */
static __always_inline bool try_step(const struct cpumask *search, u32 dist, u32 perf, bool freq_aware,
				     bool may_delay, struct pick *r)
{
	s32 cpu;

	if (perf == VRQ_PERF_SCALED && may_delay && (r->scaled_cpu = idle_cpu_in(search)) >= 0) {
		r->delay = true;
		return true;
	}
	cpu = scx_bpf_pick_idle_cpu(search, 0);
	if (cpu < 0)
		return false;
	r->cpu = cpu;
	r->dist = dist;
	r->scaled = perf == VRQ_PERF_SCALED || (freq_aware && cpu_scaled(cpu));
	return true;
}

/* The CPUs of @search of one capacity kind (@kind), in this CPU's scratch mask. NULL: none to search. */
static __always_inline const struct cpumask *of_kind(struct cpu_ctx *this_ctx, const struct cpumask *search,
						      const struct cpumask *kind)
{
	struct bpf_cpumask *tmp;

	if (!this_ctx || !(tmp = this_ctx->tmp))
		return NULL;
	bpf_cpumask_and(tmp, search, kind);
	return (const struct cpumask *)tmp;
}

/*
 * Find and claim an idle CPU for @p, in VRQ's best_mask_cpu order (vrq_select_step in policy.h):
 * nearest to @prev_cpu first, fast before scaled at each distance when --freq-threshold is on.
 * With @may_delay (delayed migration applies to this wake-up), reaching a step of scaled CPUs with one
 * of them idle stops the search without claiming it: the caller places the task on the waker. A task
 * allowed on one CPU stops at the first wider step.
 *
 * With a capacity preference (@cap_pref, --capacity-aware), each wider step searches its CPUs of the
 * preferred kind first, then all of them: the kind orders idle CPUs of one distance, never the
 * distances, and an idle CPU of the other kind is still taken before the task would wait. A previous
 * CPU of the other kind is left for an idle one of the preferred kind in its LLC (vrq_cap_leaves_prev),
 * else kept when idle (its cache).
 *
 * What it found goes to @r; returns 0. A global function -- not __hidden, which the verifier treats as
 * static -- so the verifier walks it once per program with unknown arguments, its caller seeing only
 * that @r was written: inlined, the search (each wider step twice with a capacity preference) was
 * walked again for each preference select_cpu_for knew as a constant, and each path's result (distance,
 * kind, other kind) carried its own state into the rest of select_cpu. The knobs are read here, where
 * the verifier still knows them: @may_delay and @cap_pref count only with their mechanism on, as the
 * caller computed them (delay_may_apply, capacity_pref), so a mechanism off is still no path walked.
 */
__noinline int pick_idle_cpu(struct task_struct *p __task, s32 prev_cpu, bool may_delay, u32 cap_pref,
			     struct pick *r __arg_nonnull)
{
	const struct cpumask *cap_cpus = capacity_aware ? cap_cpus_of(cap_pref) : NULL;
	struct cpu_ctx *prev_ctx = cpu_ctx_of(prev_cpu), *this_ctx = cpu_ctx_of(bpf_get_smp_processor_id());
	bool freq_aware = freq_threshold != 0;
	const struct cpumask *perf_cpus, *search;
	struct perf_masks *pm = NULL;
	u32 zero = 0, i, dist, perf;

	r->cpu = -1;
	r->dist = VRQ_DIST_ANY;
	r->scaled = false;
	r->delay = false;
	r->scaled_cpu = -1;
	r->cap = VRQ_CAP_ANY;
	r->cap_other = false;
	may_delay = may_delay && migration_delay_ns;
	if (!idle_cpu_allowed(p))
		return 0;	/* nothing to claim, nor a scaled idle CPU to pass over */
	if (freq_aware)
		pm = bpf_map_lookup_elem(&perf_masks, &zero);
	if (cap_cpus && p->nr_cpus_allowed > 1 && vrq_cap_leaves_prev(cap_pref, cpu_little(prev_cpu)) &&
	    (search = step_cpus(p, prev_ctx, this_ctx, VRQ_DIST_LLC, NULL)) &&
	    (search = of_kind(this_ctx, search, cap_cpus)) &&
	    try_step(search, VRQ_DIST_LLC, VRQ_PERF_ANY, freq_aware, false, r)) {
		r->cap = cap_pref;
		return 0;
	}
	bpf_for(i, 0, VRQ_SELECT_MAX_STEPS) {
		if (!vrq_select_step(i, freq_aware, &dist, &perf))
			break;
		if (!perf_cpus_of(pm, perf, &perf_cpus))
			continue;
		if (dist == VRQ_DIST_SAME) {
			if (try_prev_cpu(p, prev_cpu, perf, perf_cpus, may_delay, r))
				break;
			continue;
		}
		if (p->nr_cpus_allowed == 1)
			break;	/* only its one CPU, already looked at */
		search = step_cpus(p, prev_ctx, this_ctx, dist, perf_cpus);
		if (!search)
			continue;
		if (cap_cpus) {
			/* the step's CPUs of the preferred kind (of_kind overwrites the step's set in the
			 * scratch mask: it is built again for the second try) */
			const struct cpumask *kind = of_kind(this_ctx, search, cap_cpus);

			if (kind && try_step(kind, dist, perf, freq_aware, may_delay, r)) {
				r->cap = cap_pref;
				break;
			}
			search = step_cpus(p, prev_ctx, this_ctx, dist, perf_cpus);
			if (!search)
				continue;
			if (try_step(search, dist, perf, freq_aware, may_delay, r)) {
				r->cap = cap_pref;
				r->cap_other = true;
				break;
			}
			continue;
		}
		if (try_step(search, dist, perf, freq_aware, may_delay, r))
			break;
	}
	return 0;
}

/*
 * Insert @p straight into @cpu's local DSQ, the CPU select_cpu returns, its deadline refreshed on that
 * CPU's queue as a wake-up (@queued: that queue's depth if already read, else VRQ_QUEUED_UNREAD).
 * Nothing passes it there: the CPU is idle (nothing queued it may run, else it would not be idle), or
 * it is the waker's with nothing waiting for it (sync hand-off). The kernel wakes the CPU because a
 * task arrived on it: no kick, so no idle->idle reschedule. Returns the refresh's clock reading.
 */
static __always_inline u64 insert_on_cpu(struct task_struct *p, struct task_ctx *tctx, s32 cpu, s64 queued)
{
	u64 now = refresh_deadline(p, tctx, queue_of_cpu(cpu), true, queued);

	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, 0);
	return now;
}

/*
 * Sync hand-off: the waker is about to sleep -- a sync wake-up (--sync-handoff), or the fork of a vfork
 * child (--vfork-handoff; vfork_done is set before the child's first wake-up): vrq_waker_sleeps -- and
 * nothing else waits for its CPU: when it applies, the waker's queue was read empty.
 */
static __always_inline bool sync_handoff_applies(struct task_struct *p, s32 waker, u64 wake_flags)
{
	bool vfork_child = (wake_flags & SCX_WAKE_FORK) && p->vfork_done;
	int sleeps = vrq_waker_sleeps(sync_handoff, !!(wake_flags & SCX_WAKE_SYNC), vfork_handoff, vfork_child);

	/* most wake-ups are neither: decide those before reading any queue */
	if (!sleeps)
		return false;
	return vrq_sync_handoff(sleeps, bpf_cpumask_test_cpu(waker, p->cpus_ptr), cpu_scaled(waker),
				scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL), scx_bpf_dsq_nr_queued(queue_of_cpu(waker)));
}

/*
 * ops.tick on @cpu, running @p: a sync wake-up says the waker sleeps at once, but a pipe's writer is
 * flagged so and may write on; its wakee, on this CPU's local queue, no other CPU can take, while
 * another may sit idle. Still waiting a tick after the hand-off (past the time to wake a CPU), the
 * waker's slice ends: the wakee runs here, where its data is, and the waker, queued again, goes to an
 * idle CPU if there is one. So a hand-off's wakee waits for its waker at most until the next tick
 * (the wake-up rule's fourth bound, docs/design.md).
 */
__hidden int end_sync_handoff_wait(struct task_struct *p __task, s32 cpu, u64 now)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (!cctx || !cctx->sync_handoff_at || now - cctx->sync_handoff_at <= VRQ_IDLE_WAIT_GRACE_NS)
		return 0;
	cctx->sync_handoff_at = 0;
	if (!scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL))
		return 0;
	p->scx.slice = 0;
	stat_inc(VRQ_STAT_SYNC_HANDOFF_ENDED);
	return 0;
}

/*
 * No idle CPU: the woken task is queued. With --preempt-local, from the waker's CPU when that CPU
 * shares the task's queue (the same queue, so the same order): the kernel then queues it there without
 * an IPI to the previous CPU, and the local preemption that follows (preempt_for_wakeup) takes it on the
 * CPU it is already on -- a move from another CPU's run queue costs several times a local one.
 */
static __always_inline bool queue_from_waker(struct task_struct *p, s32 prev_cpu, s32 waker, u64 wake_flags)
{
	return preempt_local && waker != prev_cpu && (wake_flags & SCX_WAKE_TTWU) &&
	       queue_of_cpu(waker) == queue_of_cpu(prev_cpu) && bpf_cpumask_test_cpu(waker, p->cpus_ptr);
}

/*
 * select_cpu's steps after the hand-offs to enqueue are started (see vrq_select_cpu in main.bpf.c):
 * sync hand-off; else look for an idle CPU (pick_idle_cpu): a scaled one passed over for delayed
 * migration sends the task to the waker, a claimed one gets the task straight into its local DSQ; none:
 * the previous CPU (or the waker's, queue_from_waker). Returns the CPU.
 */
__hidden s32 select_cpu_for(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 prev_cpu, u64 wake_flags)
{
	s32 waker = bpf_get_smp_processor_id();
	struct pick pk = {};

	if (sync_handoff_applies(p, waker, wake_flags)) {
		struct cpu_ctx *wctx = cpu_ctx_of(waker);
		/* the waker's queue was just read empty (sync_handoff_applies): not looked up again */
		u64 now = insert_on_cpu(p, tctx, waker, 0);

		if (wctx)
			wctx->sync_handoff_at = now;
		/* a fork is never flagged sync: the other is a vfork child's */
		stat_inc(wake_flags & SCX_WAKE_SYNC ? VRQ_STAT_SYNC_HANDOFF : VRQ_STAT_VFORK_HANDOFF);
		return waker;
	}
	pick_idle_cpu(p, prev_cpu, delay_may_apply(p, waker, wake_flags), capacity_pref(p, tctx, wake_flags), &pk);
	if (pk.delay) {
		/* enqueue() follows on this CPU and queues it here without waking anyone (see there) */
		tctx->delay.scaled_cpu = pk.scaled_cpu;	/* >= 0 whenever pk.delay */
		stat_inc(VRQ_STAT_DELAY_PLACED);
		return waker;
	}
	if (pk.cpu >= 0) {
		insert_on_cpu(p, tctx, pk.cpu, VRQ_QUEUED_UNREAD);
		stat_inc(VRQ_STAT_SEL_PREV + pk.dist);
		if (pk.scaled)
			stat_inc(VRQ_STAT_SEL_SCALED);
		if (pk.cap != VRQ_CAP_ANY)
			stat_inc(pk.cap_other ? VRQ_STAT_SEL_CAP_OTHER :
				 pk.cap == VRQ_CAP_BIG ? VRQ_STAT_SEL_CAP_BIG : VRQ_STAT_SEL_CAP_LITTLE);
		stat_inc(VRQ_STAT_DIRECT_IDLE);
		return pk.cpu;
	}
	stat_inc(VRQ_STAT_SEL_BUSY);
	return queue_from_waker(p, prev_cpu, waker, wake_flags) ? waker : prev_cpu;
}
