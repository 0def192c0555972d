/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's delayed migration (--migration-delay-us; after the delayed thread migration RFC): a woken or
 * forked task whose first idle CPU in line is frequency-scaled is placed on its fast waker instead
 * (select_cpu), counted there (enqueue), and counted out when it runs (running); the waker's tick ends
 * the delay of those still waiting (end_delay). Its per-task state is task_ctx.delay, its per-CPU state
 * cpu_ctx.delay.
 */
#include "vrq.bpf.h"

/* Delayed migration: only wake-ups and forks, and only onto a fast waker that may run the task. */
__hidden bool delay_may_apply(struct task_struct *p __task, s32 waker, u64 wake_flags)
{
	return vrq_delay_placement(migration_delay_ns, 1, cpu_scaled(waker), bpf_cpumask_test_cpu(waker, p->cpus_ptr),
				   0) &&
	       (wake_flags & (SCX_WAKE_TTWU | SCX_WAKE_FORK));
}

/*
 * Delayed migration, the delay ends: the tasks placed on @cpu (a waker) have waited it out without
 * running (vrq_delay_expired). Wake the scaled idle CPU the latest of them passed over, else the
 * nearest idle CPU -- its dispatch reads every queue's head and takes them (one kick: the rest wait for
 * the next) -- and start a new generation, so those tasks are counted as migrated-after-delay, not as
 * run-before-delay.
 */
__hidden int end_delay(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	const struct cpumask *near;
	s64 waiting;
	s32 idle;
	u32 dist;

	if (!cctx)
		return 0;
	cctx->delay.gen++;
	waiting = __sync_lock_test_and_set(&cctx->delay.pending, 0);
	if (waiting <= 0)
		return 0;
	/* counted as migrated-after-delay also where this CPU may wake nobody (may_kick): they are no
	 * longer held for it, and the next dispatch of a CPU they may use takes them */
	stat_add(VRQ_STAT_DELAY_MIGRATED, waiting);
	if (!may_kick())
		return 0;
	/* as the delayed-migration RFC does: migrate to the idle core it was meant for (the task may
	 * run there, and only there perhaps: its affinity was checked when that CPU was chosen) ... */
	idle = cctx->delay.scaled_cpu;
	if (idle >= 0 && idle < nr_cpus && scx_bpf_test_and_clear_cpu_idle(idle)) {
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
	} else {
		/* ... or, that one busy by now, to the nearest idle CPU */
		bpf_for(dist, VRQ_DIST_SMT, VRQ_DIST_ANY) {
			if (!(near = distance_mask(cctx, dist)))
				continue;
			idle = scx_bpf_pick_idle_cpu(near, 0);
			if (idle >= 0) {
				scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
				break;
			}
		}
	}
	return 0;
}

/*
 * Delayed migration, the delay starts: count a task placed on the waker @cpu instead of on @scaled_cpu.
 * Its delay is checked on that CPU's tick (vrq_tick): a BPF
 * timer per placement measured costlier per wake-up (bench/migration-check, docs/measured.md), and a
 * waker that keeps its CPU ticks, while one that sleeps runs the task first.
 */
static void start_delay(struct task_ctx *tctx, s32 cpu, s32 scaled_cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (!cctx)
		return;
	tctx->delay.waker = cpu;
	tctx->delay.gen = cctx->delay.gen;
	cctx->delay.scaled_cpu = scaled_cpu;
	if (__sync_fetch_and_add(&cctx->delay.pending, 1) <= 0)
		cctx->delay.first_at = scx_bpf_now();
}

/*
 * Delayed migration (enqueue, step 3): select_cpu placed @p on this, the waker's, fast CPU instead of a
 * scaled idle one. Take that hand-off; if the task is queued here indeed, count it against the delay
 * and wake nobody, preempt nobody: the waker usually sleeps first and runs it here; if not, its tick
 * wakes an idle CPU for it (end_delay). True: placed, nothing more to do.
 */
__hidden bool hold_for_delay(struct task_ctx *tctx __tctx, s32 cpu)
{
	s32 scaled_cpu = tctx->delay.scaled_cpu;

	if (scaled_cpu < 0)
		return false;
	tctx->delay.scaled_cpu = -1;
	if (cpu != bpf_get_smp_processor_id())
		return false;
	start_delay(tctx, cpu, scaled_cpu);
	return true;
}

/*
 * Delayed migration: a task placed on a waker runs. Same generation as the waker's: its delay has not
 * run out yet, so it ran before the delay. (Racing the tick's reset can leave the count one off for a
 * moment; it only decides whether an expiry wakes an idle CPU, and a task it misses still runs from its
 * queue like any other.)
 */
__hidden int delayed_task_runs(struct task_ctx *tctx __tctx)
{
	struct cpu_ctx *wctx;

	if (tctx->delay.waker < 0)
		return 0;
	wctx = cpu_ctx_of(tctx->delay.waker);
	if (wctx && wctx->delay.gen == tctx->delay.gen) {
		__sync_fetch_and_sub(&wctx->delay.pending, 1);
		stat_inc(VRQ_STAT_DELAY_RAN_BEFORE);
	}
	tctx->delay.waker = -1;
	return 0;
}

/*
 * Delayed migration, on @cpu's tick: have the tasks placed on it (a waker) waited out the delay
 * (vrq_delay_expired)? Then end it (end_delay).
 */
__hidden int delay_tick(s32 cpu, u64 now)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (migration_delay_ns && cctx && cctx->delay.pending > 0 &&
	    vrq_delay_expired(cctx->delay.first_at, now, migration_delay_ns))
		end_delay(cpu);
	return 0;
}
