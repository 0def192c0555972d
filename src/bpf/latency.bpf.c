/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's latency rules, beyond BFS: the target latency's clock (--target-latency-ms: the queues' clock
 * runs faster while latency waiters wait, and a woken task may end the longest turn that has run its
 * course), short runners (--short-run-us, --short-run-renew) and under-share wake-ups
 * (--under-share-first). The rules themselves are in policy.h.
 */
#include "vrq.bpf.h"

/*
 * The clock the queues' niffies follow: real time, or faster while --target-latency-ms shortens turns
 * (policy.h: vrq_clock_rate, vrq_clock_now). One for all queues, so that deadlines on different queues
 * stay comparable. Updated by the tick (clock_update); read lock-free: a reader racing an update can
 * see the clock a moment behind, which the queues' monotonic niffies absorb.
 */
u64 clock_mark;			/* real time of the last update */
u64 clock_ahead;		/* how far the clock had run ahead of real time by then */
u64 clock_rate = VRQ_RATE_ONE;	/* its rate since then */
/*
 * clock_update's count of waiting tasks. In global memory, not on the stack: a sum carried on the stack
 * through the loop over queues has a new range at every iteration, so the verifier could never see the
 * loop converge (the program was refused, E2BIG); a global reads back as any value.
 */
u64 clock_waiting;
/*
 * Latency waiters: the tasks waiting for a CPU whose wait the target latency bounds -- woken tasks and,
 * with --short-run-us, short runners queued again (policy.h: vrq_latency_waiter, vrq_clock_waiters).
 * Their count sets the clock's rate: enqueue counts a task (count_latency_waiter,
 * task_ctx.latency_waiter), running and quiescent uncount it.
 * clock_update resets it when the queues are empty, so that a miscount does not outlive a busy spell,
 * and starts a new generation (waiters_gen): a task counted before the reset is not uncounted after it.
 * Without the generation a reset could drive the count below 0 for as long as the queues then stayed
 * busy: the queues it reads do not hold a woken task that dispatch has already moved to a CPU's local
 * queue, which was uncounted from the new zero when it ran -- and at -1 one latency waiter counts as
 * none. The counter clock_miscount (updates that found the count below 0) tells; the suite checks it.
 */
s64 latency_waiters;
u64 waiters_gen;
#define CLOCK_UPDATE_NS VRQ_NSEC_PER_MSEC

/*
 * The tick's update of the queues' clock (once per CLOCK_UPDATE_NS, by whichever CPU gets there first):
 * bank what it gained at the old rate, then set the rate from how many tasks wait now: the latency
 * waiters against --target-latency-ms, every queued task against --round-target-ms
 * (vrq_queues_clock_rate).
 */
__hidden int clock_update(u64 now)
{
	u64 mark = clock_mark, rate = clock_rate;
	u32 q;

	if ((s64)(now - mark) < (s64)CLOCK_UPDATE_NS)
		return 0;
	if (__sync_val_compare_and_swap(&clock_mark, mark, now) != mark)
		return 0;
	if (rate > VRQ_RATE_ONE)
		__sync_fetch_and_add(&clock_ahead, vrq_clock_gain(now - mark, rate));
	clock_waiting = 0;
	bpf_for(q, 0, nr_queues) {
		s32 n = queue_may_hold(q) ? scx_bpf_dsq_nr_queued(q) : 0;

		if (n > 0)
			clock_waiting += n;
	}
	if (latency_waiters < 0)
		stat_inc(VRQ_STAT_CLOCK_MISCOUNT);
	if (!clock_waiting && latency_waiters) {
		/* zero first: a task counted in between, in the old generation, stays counted until the next
		 * reset (an excess, bounded by the tasks queued), never uncounted from the new one's zero */
		latency_waiters = 0;
		__sync_fetch_and_add(&waiters_gen, 1);
	}
	clock_rate = vrq_queues_clock_rate(rr_interval_ns, target_latency_ns, round_target_ns, target_floor_ns,
					   vrq_clock_waiters(latency_waiters, clock_waiting), clock_waiting,
					   online_cpus(), hold_floor);
	return 0;
}

/* The clock's rate for the latency waiters at this moment (clock_rate follows it on the tick). */
static __always_inline u64 latency_waiters_rate(void)
{
	return vrq_clock_rate_reach(rr_interval_ns, target_latency_ns,
				    vrq_latency_reach(target_latency_ns, round_target_ns, hold_floor), target_floor_ns,
				    vrq_clock_waiters(latency_waiters, ~0ULL), online_cpus());
}

/*
 * The rate a turn that starts now is given (start_turn): the latency waiters' rate at this moment, or
 * the clock's if faster. clock_rate follows the waiters only on the tick (every 4 ms at HZ=250): a turn
 * begun right after a latency waiter arrived -- the turn of the task that won the dispatch its kick
 * caused -- got a whole rr_interval at the rate of before, and the waiter waited it out (a sleeper
 * beside two hogs with --under-share-first false waited a whole rr_interval at every wake-up).
 */
__hidden u64 turn_rate(void)
{
	u64 rate = latency_waiters_rate();

	return rate > clock_rate ? rate : clock_rate;
}

/*
 * Target latency: @p waits for a CPU, queued by its wake-up, or with --short-run-us queued again as a
 * short runner (policy.h: vrq_short_runner): a latency waiter, counted toward the clock's rate
 * (vrq_latency_waiter).
 */
__hidden int count_latency_waiter(struct task_ctx *tctx __tctx, u64 enq_flags)
{
	bool woken = enq_flags & SCX_ENQ_WAKEUP, short_runner;

	if (!target_latency_ns || tctx->target.latency_waiter)
		return 0;
	short_runner = !woken && vrq_short_runner(tctx->avg_run_ns, tctx->run_ns, short_run_ns);
	if (!vrq_latency_waiter(woken, short_runner))
		return 0;
	if (short_runner)
		stat_inc(VRQ_STAT_SHORT_RUN_WAIT);
	tctx->target.latency_waiter = 1;
	tctx->target.waiters_gen = waiters_gen;
	__sync_fetch_and_add(&latency_waiters, 1);
	return 0;
}

/* ... and its wait is over: it runs, or it left the queue without running. */
__hidden int uncount_latency_waiter(struct task_ctx *tctx __tctx)
{
	if (!tctx->target.latency_waiter)
		return 0;
	tctx->target.latency_waiter = 0;
	if (tctx->target.waiters_gen == waiters_gen)	/* else a reset since has already forgotten it */
		__sync_fetch_and_sub(&latency_waiters, 1);
	return 0;
}

/*
 * --under-share-first: @p wakes having used less CPU than its share beside the tasks competing on queue
 * @q (vrq_under_share): it goes first -- at nice 0 alone in its group, one offset before now
 * (vrq_under_share_deadline) -- whether its deadline was just renewed or kept. BFS would leave it
 * behind every task whose deadline is earlier -- in a queue longer than the offset covers, every CPU
 * hog that waited its round -- so a task that sleeps most of the time waited turn after turn, where
 * EEVDF runs it at once. Its slice is what it had: the rule moves its place, not its CPU time.
 *
 * A global function -- not __hidden, which the verifier treats as static -- so the verifier walks it
 * once per program, its caller seeing only its return: as
 * an inlined part of refresh_deadline (a static helper, walked again for each state any of its six
 * callers reach it in) its branches multiplied with theirs -- 423k instructions verified instead of
 * 180k, and a reload after CPU hotplug beside four hogs on two emulated CPUs took 50-60 s instead of
 * ~20 s (src/verifier.rs). The clock's rate is read here again, as refresh_deadline read it (a global
 * function takes five arguments at most). Returns 0; @tctx NULL does nothing.
 */
__noinline int place_under_share(struct task_ctx *tctx, u32 q, u64 queued, u64 niffies, u64 slice)
{
	u32 cpus = online_cpus_of_queue(q);
	u64 others, base_offset;

	if (!tctx || !under_share_first || !tctx->offset)
		return 0;
	/* one running on each of the queue's CPUs, and the queued ones shared among them */
	others = (queued + cpus - 1) / cpus + 1;
	if (!vrq_under_share(tctx->avg_run_ns, tctx->avg_sleep_ns, others))
		return 0;
	/* its own offset as at its last renewal (nice, group, depth; clock time, so the same at any
	 * rate): no group lookup on every wake-up */
	base_offset = vrq_nice0_offset(vrq_clock_slice(slice, rr_interval_ns, clock_rate));
	tctx->deadline = vrq_under_share_deadline(tctx->deadline, niffies, tctx->offset, base_offset);
	stat_inc(VRQ_STAT_UNDER_SHARE);
	return 0;
}

/*
 * Target latency, for a woken task that waits and preempted nobody: the longest turn under way on the
 * CPUs it may use ends now if it has lasted the turn at the rate the latency waiters set -- what it
 * would have been given, had it begun while they waited. The kick makes its task compete again in
 * dispatch, which counts the slice used up (end_turn_if_over), so it competes with a new deadline.
 */
__hidden int end_longest_turn(s32 longest_cpu, u64 longest_since)
{
	u64 now = scx_bpf_now();

	if (!target_latency_ns || longest_cpu < 0 || (s64)(now - longest_since) <= 0 || !may_kick())
		return 0;
	if (vrq_turn_over(now - longest_since, rr_interval_ns, latency_waiters_rate())) {
		scx_bpf_kick_cpu(longest_cpu, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_TURN_ENDED);
	}
	return 0;
}

/*
 * Target latency: @p, still runnable, competes for its CPU again or leaves it while latency waiters wait,
 * after a turn as long as the one their wait sets (vrq_turn_over; end_longest_turn's kick, or a deadline
 * preemption): its slice is used up, so it gets a new deadline now instead of going on with the old one.
 * Kernel threads keep rr_interval (vrq_task_slice). True if it did.
 */
__hidden bool end_turn_if_over(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u64 now)
{
	struct cpu_ctx *cctx;

	if (!target_latency_ns || !(cctx = cpu_ctx_of(cpu)) || (p->flags & PF_KTHREAD) || tctx->time_slice <= 0)
		return false;
	if (!vrq_turn_over(now - cctx->turn_started, rr_interval_ns, latency_waiters_rate()))
		return false;
	tctx->time_slice = 0;
	return true;
}

/*
 * Short runners: @p's run ends when it sleeps, or when a task it woke preempts it here (a request
 * queue's hand-off: the worker would have slept but for the preemption). Average it, start a new one.
 * With --short-run-renew, a slice left shorter than that average counts as used up
 * (vrq_should_renew_short_run): the deadline's renewal (at its sleep, or its enqueue) gives the next run
 * a whole slice.
 */
__hidden int end_run(struct task_ctx *tctx __tctx, s32 cpu, bool runnable)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (runnable && !(cctx && cctx->waker_preempted))
		return 0;
	tctx->avg_run_ns = vrq_run_avg(tctx->avg_run_ns, tctx->run_ns);
	tctx->run_ns = 0;
	if (short_run_renew && vrq_should_renew_short_run(tctx->time_slice, tctx->avg_run_ns, short_run_ns)) {
		tctx->time_slice = 0;
		stat_inc(VRQ_STAT_SHORT_RUN_RENEW);
	}
	return 0;
}

