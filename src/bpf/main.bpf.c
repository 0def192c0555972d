/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq: a BFS/VRQ-lineage virtual-deadline scheduler for sched_ext.
 *
 * Tasks wait in vtime-ordered dispatch queues keyed by priodl (priority over virtual deadline); the
 * earliest deadline runs first. --queue chooses which CPUs share one queue: all of them (BFS's global
 * run queue), those of one LLC, or each CPU alone (VRQ/PDS). A CPU looking for work reads the heads of
 * the other queues without their locks and locks only the one it takes from (the read-then-upgrade
 * of BFS's upgradeable-lock experiment). Each queue keeps its own clock (VRQ's RQ niffies).
 *
 * The rules themselves (deadline, priodl, slice, distances) live in policy.h; this file wires them to
 * the sched_ext callbacks and counts every path in the `stats` map.
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "policy.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Knobs, set by the loader before load (src/cli.rs: their flags; the defaults here are the same). */
const volatile u32 queue_mode = VRQ_QUEUE_LLC;
const volatile u64 rr_interval_ns = 6ULL * VRQ_NSEC_PER_MSEC;
const volatile u64 min_slice_ns = 250ULL * VRQ_NSEC_PER_USEC;
const volatile u64 max_round_ns = 1000ULL * VRQ_NSEC_PER_MSEC;
const volatile u64 target_latency_ns = 2ULL * VRQ_NSEC_PER_MSEC;	/* 0: off (BFS: rr_interval however many wait) */
const volatile u64 target_floor_ns = 1000ULL * VRQ_NSEC_PER_USEC;	/* the target's shortest turn */
const volatile u64 short_run_ns = 6ULL * VRQ_NSEC_PER_MSEC;	/* short runners count as woken (0: off) */
const volatile bool short_run_renew = true;	/* a short runner's slice left below its average run is renewed */
const volatile bool under_share_first = true;	/* a task waking under its CPU share goes first */
const volatile u32 wake_credit_pct = 50;		/* 0: off (BFS: a passed deadline renews from now) */
const volatile bool sync_handoff = true;	/* run a sync wake-up's wakee on the waker's CPU */
const volatile bool preempt_local = true;	/* preempt the CPU handling the wake-up when it may */
const volatile u64 idle_bound_ns = 2000ULL * VRQ_NSEC_PER_MSEC;
const volatile u32 yield_type = VRQ_YIELD_BETTER;
const volatile u32 group_mode = VRQ_GROUP_SESSION;
const volatile bool fork_depth_penalty = false;
const volatile u32 freq_threshold_pct = 0;		/* 0: frequency-blind CPU selection */
const volatile u64 migration_delay_ns = 0;		/* 0: no delayed migration */
const volatile bool sticky_tasks = false;
const volatile u32 nr_cpus = 1;
const volatile struct vrq_cpu_topo cpu_topo[VRQ_MAX_CPUS];
/* 1 for each CPU on line when the loader read the topology: only those have a cpu_topo entry */
const volatile u8 cpu_in_topology[VRQ_MAX_CPUS];

/* Derived at init from the knobs and the topology. */
u32 cpu_queue[VRQ_MAX_CPUS];
u32 queue_rep_cpu[VRQ_MAX_QUEUES];	/* a CPU of each queue, for its distance to others */
u32 nr_queues;
/*
 * The CPUs on line now (CPU hotplug: vrq_cpu_online / vrq_cpu_offline keep them): each queue's
 * (a queue's round divides its waiting tasks among them) and all of them (the target latency's clock
 * rate). Read through online_cpus_of_queue / online_cpus, which never return 0.
 */
s32 queue_nr_cpus[VRQ_MAX_QUEUES];
s32 nr_online_cpus;
u8 cpu_is_online[VRQ_MAX_CPUS];

struct vrq_queue queues[VRQ_MAX_QUEUES];

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
 * with --short-run-us, short runners queued again (policy.h: vrq_clock_waiters). Their count sets the
 * clock's rate: enqueue counts a task (count_latency_waiter, task_ctx.latency_waiter), running and
 * quiescent uncount it.
 * clock_update resets it when the queues are empty, so that a miscount does not outlive a busy spell,
 * and starts a new generation (waiters_gen): a task counted before the reset is not uncounted after it.
 * Without the generation a reset could drive the count below 0 for as long as the queues then stayed
 * busy: the queues it reads do not hold a woken task that dispatch has already moved to a CPU's local
 * queue, which was uncounted from the new zero when it ran -- and at -1 one woken task waiting counts as
 * none. The counter clockmiscount (updates that found the count below 0) tells; the suite checks it.
 */
s64 latency_waiters;
u64 waiters_gen;
#define CLOCK_UPDATE_NS VRQ_NSEC_PER_MSEC

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct vrq_stats);
} stats SEC(".maps");

/*
 * Wait and run-length histograms (struct vrq_lat_hists, intf.h), always on. VRQ_LAT_HIST=0 at build
 * time compiles the recording out (the map stays, all zero): only to measure what it costs.
 */
#ifndef VRQ_LAT_HIST
#define VRQ_LAT_HIST 1
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct vrq_lat_hists);
} lat_hists SEC(".maps");

/*
 * Delayed migration, per waker CPU: the tasks placed on it instead of on a scaled idle CPU that have not
 * run yet. enqueue (start_delay) counts a placement in; running (delayed_task_runs) counts one out while the
 * generation is the same; the CPU's tick ends the delay (end_delay: new generation, count reset,
 * an idle CPU woken).
 */
struct delay_waker {
	s64 pending;		/* placed here, not yet run, this generation */
	u64 gen;		/* bumped each time the pending ones' delay ran out */
	u64 first_at;		/* when the oldest pending one was placed */
	s32 scaled_cpu;		/* the scaled idle CPU the latest one passed over */
};

/* Per-CPU state, readable by every CPU (try_preempt reads what the others run). */
struct cpu_ctx {
	u64 running_priodl;			/* priodl of the task running here; 0 when none
						 * (set_running_priodl: running, keep_on_cpu, stopping) */
	struct delay_waker delay;		/* delayed migration, this CPU as the waker */
	/* short slices: which run of this CPU the slice timer was armed for (see slice_timer_fired) */
	u64 run_seq;				/* start_run bumps it for every run */
	u64 timer_seq;				/* the run_seq start_run armed the timer for */
	u64 run_started;			/* when the current run began (start_run); with a target
						 * latency, find_cpu_for ends the longest turn for a
						 * waiting woken task */
	u8 scaled;				/* frequency-scaled at the last look (--freq-threshold) */
	u8 waker_preempted;			/* short runners: a task woken by the one running here
						 * preempts it (preempt_for_wakeup); its run ends there.
						 * start_run clears it */
	struct bpf_cpumask __kptr *smt;		/* CPUs within VRQ_DIST_SMT of this one */
	struct bpf_cpumask __kptr *llc;		/* ... within VRQ_DIST_LLC */
	struct bpf_cpumask __kptr *pkg;		/* ... within VRQ_DIST_PKG */
	struct bpf_cpumask __kptr *node;	/* ... within VRQ_DIST_NODE */
	struct bpf_cpumask __kptr *tmp;		/* scratch, used only by this CPU */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/*
 * The CPUs that are fast / scaled (frequency-scaled: below --freq-threshold), as last seen (each CPU
 * updates its own bit on its tick and when it looks for work). Two masks because cpumask kfuncs have
 * no and-not.
 */
struct perf_masks {
	struct bpf_cpumask __kptr *fast;
	struct bpf_cpumask __kptr *scaled;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct perf_masks);
} perf_masks SEC(".maps");

/*
 * TEST INTERFACE: per-CPU performance levels (1..VRQ_PERF_ONE) that replace scx_bpf_cpuperf_cur()'s
 * reading where non-zero. A VM has no frequency scaling; the in-VM tests write this map to give CPUs
 * scaled or full-speed levels and check that selection follows. Nothing else writes it: all zero, it
 * changes nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, u32);
} test_cpuperf SEC(".maps");

/*
 * One timer per CPU to end slices shorter than the scheduler tick. sched_ext ends a slice only on a
 * tick (4 ms at HZ=250); when a long queue shrinks the slice below rr_interval (--max-round-ms), a
 * round would otherwise still cost a tick per task -- 10,000 tasks on 2 CPUs, 20 s, past the
 * watchdog. Armed only for shrunk slices, so the normal case costs nothing.
 */
struct slice_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, struct slice_timer);
} slice_timers SEC(".maps");

/*
 * Group accounting: each group's runnable tasks, and those of all groups together (the others' count
 * decides how much a group's own counts: policy.h, vrq_group_multiplier). Each a count and its average
 * over about one rr_interval (struct vrq_load); the counts change atomically.
 */
static struct vrq_load all_grouped_tasks;
static s64 busy_groups;		/* groups with a runnable task: the fast path of a group alone */

/* Keyed by the group's id (tgid or session id). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct vrq_load);
} group_runnable SEC(".maps");

/*
 * State a task carries from one callback to another, one struct or field per hand-off, each saying who
 * writes it and who reads and clears it.
 */

/* select_cpu -> the enqueue of the same wake-up. */
struct wakeup_handoff {
	u8 sync;		/* SCX_WAKE_SYNC: the waker is about to sleep, so the wakee preempts nobody.
				 * select_cpu writes it; enqueue takes it (reads and clears, vrq_take_once:
				 * select_cpu is skipped for a task allowed on one CPU); running clears it (a
				 * task select_cpu inserted itself is never enqueued) */
};

/* Delayed migration: select_cpu -> enqueue -> running. */
struct delay_placement {
	s32 scaled_cpu;		/* select_cpu: placed on the waker instead of this scaled idle
				 * CPU (-1: not placed); enqueue takes it (hold_for_delay) */
	s32 waker;		/* enqueue (start_delay): the waker CPU it was queued on, counted
				 * in that CPU's delay.pending (-1: none); running reads and
				 * clears it (delayed_task_runs) */
	u64 gen;		/* with waker: that CPU's delay.gen when it was placed; running compares */
};

/* Latency histograms: runnable / stopping -> running -> stopping. */
struct lat_marks {
	u64 wait_since;		/* runnable (a wake-up) or stopping (still runnable) writes when
				 * its wait began; running records the wait and clears it (0: not
				 * waiting) */
	u64 run_since;		/* running writes when its run began; stopping records the run
				 * and clears it */
	u8 wait_requeue;	/* with wait_since: the wait was begun by a deschedule, not a wake-up */
};

struct task_ctx {
	/* the deadline and the slice (refresh_deadline, charge_slice) */
	u64 deadline;		/* virtual deadline, on the clock of queue `queue` */
	u64 offset;		/* the deadline offset it was given at its last renewal (clock time) */
	s64 time_slice;		/* what is left of the current slice (ns) */
	u64 last_charged;	/* when run time was last charged to time_slice */
	u32 queue;		/* the queue whose clock `deadline` is on (VRQ_NO_QUEUE: none yet) */
	u32 group;		/* group id counted in group_runnable while runnable (0: none) */
	u32 fork_depth;		/* forks from init (init's children: 1) */
	u8 kernel_wakeup;	/* a kernel thread woken: VRQ_PRIO_KERNEL (task_prio) until it uses up its
				 * slice. enqueue writes it on a wake-up; new_deadline_from_now clears it */
	u64 enq_at;		/* enqueue: when it was last queued; rescue_starved_idle reads it */
	/* hand-offs between callbacks */
	struct wakeup_handoff wake;	/* select_cpu -> enqueue */
	struct delay_placement delay;	/* delayed migration: select_cpu -> enqueue -> running */
	s32 sticky_cpu;		/* sticky tasks, stopping -> dispatch: the CPU it was descheduled
				 * from while runnable (-1: none). stopping (mark_sticky) writes
				 * it; dispatch reads it (sticky_elsewhere); running (sticky_ends)
				 * and keep_on_cpu clear it */
	u8 yielded;		/* yield -> stopping: it called sched_yield(), so leaving is
				 * voluntary (not sticky). yield writes it; stopping (mark_sticky)
				 * reads and clears it */
	u8 latency_waiter;	/* target latency, enqueue -> running / quiescent: queued by its
				 * wake-up or as a short runner, and counted in latency_waiters.
				 * enqueue (count_latency_waiter) sets it; running and quiescent
				 * (uncount_latency_waiter) clear it */
	u64 waiters_gen;	/* ... in this waiters_gen (count_latency_waiter writes it) */
	/* dispatch -> enqueue: the task that just ran lost its CPU in that CPU's dispatch, which refreshed
	 * its deadline; enqueue (ready_to_queue) takes it as is while that CPU has begun no other run.
	 * prev_keeps_cpu writes both; ready_to_queue clears fresh_cpu */
	s32 fresh_cpu;		/* that CPU + 1 (0: none) */
	u64 fresh_seq;		/* its run_seq then */
	/* short runners (policy.h: vrq_short_runner): CPU time since its last sleep, and the average of
	 * such runs. charge_slice adds to run_ns; stopping (end_run) averages it and starts a new one */
	u64 run_ns;
	u64 avg_run_ns;
	/* under-share wake-ups (policy.h: vrq_under_share): when it last fell asleep (0: awake), and the
	 * average of its sleeps. stopping writes slept_at; runnable averages the sleep and clears it */
	u64 slept_at;
	u64 avg_sleep_ns;
	struct lat_marks lat;	/* latency histograms */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

#define VRQ_NO_QUEUE ((u32)-1)

static __always_inline void stat_add(u32 idx, u64 n)
{
	u32 zero = 0;
	struct vrq_stats *st = bpf_map_lookup_elem(&stats, &zero);

	if (st && idx < VRQ_NR_STATS)
		st->counters[idx] += n;
}

static __always_inline void stat_inc(u32 idx)
{
	stat_add(idx, 1);
}

#if VRQ_LAT_HIST
/*
 * Count the time from @since to @now in this CPU's histogram @kind (0 wake, 1 requeue, 2 run) of @p's
 * latency class. Signed: @since may come from another CPU's clock, a little ahead of this one.
 */
static __always_inline void lat_record(const struct task_struct *p, u32 kind, u64 since, u64 now)
{
	s64 ns = (s64)(now - since);
	u32 zero = 0, cls = vrq_lat_class(p->policy, !!(p->flags & PF_KTHREAD));
	u32 b = vrq_hist_bucket(ns > 0 ? ns : 0);
	struct vrq_lat_hists *h = bpf_map_lookup_elem(&lat_hists, &zero);

	if (!h || cls >= VRQ_NR_LAT_CLASSES || b >= VRQ_HIST_BUCKETS)
		return;
	if (kind == 0)
		h->wake[cls][b]++;
	else if (kind == 1)
		h->requeue[cls][b]++;
	else
		h->run[cls][b]++;
}
#endif

static __always_inline struct task_ctx *task_ctx_of(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

static __always_inline struct cpu_ctx *cpu_ctx_of(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

/*
 * Array indexes are masked as well as range-checked: the verifier tracks a mask through the compiler's
 * transformations where it can lose a plain comparison. VRQ_MAX_CPUS is a power of two.
 */
#define CPU_IDX(cpu) ((u32)(cpu) & (VRQ_MAX_CPUS - 1))
#define QUEUE_IDX(q) ((u32)(q) & (VRQ_MAX_QUEUES - 1))

static __always_inline u32 queue_of_cpu(s32 cpu)
{
	return cpu_queue[CPU_IDX(cpu)];
}

/* The CPUs of queue @q on line now; at least 1, so that a queue whose CPUs all went off line (its
 * tasks taken by the others' dispatch) still divides by something. */
static __always_inline u32 online_cpus_of_queue(u32 q)
{
	s32 n = queue_nr_cpus[QUEUE_IDX(q)];

	return n > 0 ? n : 1;
}

static __always_inline u32 online_cpus(void)
{
	s32 n = nr_online_cpus;

	return n > 0 ? n : 1;
}

/*
 * May this CPU kick another (or itself)? Not between its cpu_offline and its death, nor on its way
 * up before its cpu_online (CPU hotplug). scx_bpf_kick_cpu queues the kick on an irq_work of the
 * CPU that calls it, and a CPU in those windows -- which pushes its tasks to other CPUs through
 * enqueue on its way down -- can be left with that irq_work pending and its interrupt lost: every
 * later kick from the CPU is then dropped, and sched_ext's disable waits for the irq_work forever
 * (seen on Debian's 7.3.4 under QEMU 10.0.2, 2026-11-26: seven of eight CPUs off and back under 16
 * hogs, then the unload hung in free_kick_syncs until an NMI backtrace made the CPU run its
 * irq_works). Such a CPU claims no idle CPU and kicks nobody: a task it moves to an idle CPU is
 * rescheduled there by the kernel itself, and any other waits for the next dispatch.
 */
static __always_inline bool may_kick(void)
{
	return cpu_is_online[CPU_IDX(bpf_get_smp_processor_id())];
}

static __always_inline struct vrq_queue *queue_state(u32 q)
{
	return &queues[QUEUE_IDX(q)];
}

/*
 * A copy of a CPU's topology. Read through the volatile array: a pointer cast to plain const would let
 * the compiler fold the reads to the zeros the object is declared with, not what the loader wrote.
 */
static __always_inline struct vrq_cpu_topo topo_of(u32 cpu)
{
	struct vrq_cpu_topo t = {
		.core = cpu_topo[CPU_IDX(cpu)].core,
		.llc = cpu_topo[CPU_IDX(cpu)].llc,
		.pkg = cpu_topo[CPU_IDX(cpu)].pkg,
		.node = cpu_topo[CPU_IDX(cpu)].node,
	};

	return t;
}

static __always_inline u32 cpu_distance(u32 a, u32 b)
{
	struct vrq_cpu_topo ta = topo_of(a), tb = topo_of(b);

	return vrq_cpu_distance(a, &ta, b, &tb);
}

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
 * The tick's update of the queues' clock (once per CLOCK_UPDATE_NS, by whichever CPU gets there first):
 * bank what it gained at the old rate, then set the rate from how many tasks wait now.
 */
static void clock_update(u64 now)
{
	u64 mark = clock_mark, rate = clock_rate;
	u32 q;

	if ((s64)(now - mark) < (s64)CLOCK_UPDATE_NS)
		return;
	if (__sync_val_compare_and_swap(&clock_mark, mark, now) != mark)
		return;
	if (rate > VRQ_RATE_ONE)
		__sync_fetch_and_add(&clock_ahead, vrq_clock_gain(now - mark, rate));
	clock_waiting = 0;
	bpf_for(q, 0, nr_queues) {
		s32 n = scx_bpf_dsq_nr_queued(q);

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
	clock_rate = vrq_clock_rate(rr_interval_ns, target_latency_ns, target_floor_ns,
				    vrq_clock_waiters(latency_waiters, clock_waiting), online_cpus());
}

/* The clock's rate for the latency waiters at this moment (clock_rate follows it on the tick). */
static __always_inline u64 latency_waiters_rate(void)
{
	return vrq_clock_rate(rr_interval_ns, target_latency_ns, target_floor_ns,
			      vrq_clock_waiters(latency_waiters, ~0ULL), online_cpus());
}

/*
 * Target latency: @p waits for a CPU, queued by its wake-up or, with --short-run-us, queued again as a
 * short runner (policy.h: vrq_short_runner): a latency waiter, counted toward the clock's rate.
 */
static __always_inline void count_latency_waiter(struct task_ctx *tctx, u64 enq_flags)
{
	if (!target_latency_ns || tctx->latency_waiter)
		return;
	if (!(enq_flags & SCX_ENQ_WAKEUP)) {
		if (!vrq_short_runner(tctx->avg_run_ns, tctx->run_ns, short_run_ns))
			return;
		stat_inc(VRQ_STAT_SHORT_RUN_WAIT);
	}
	tctx->latency_waiter = 1;
	tctx->waiters_gen = waiters_gen;
	__sync_fetch_and_add(&latency_waiters, 1);
}

/* ... and its wait is over: it runs, or it left the queue without running. */
static __always_inline void uncount_latency_waiter(struct task_ctx *tctx)
{
	if (!tctx->latency_waiter)
		return;
	tctx->latency_waiter = 0;
	if (tctx->waiters_gen == waiters_gen)	/* else a reset since has already forgotten it */
		__sync_fetch_and_sub(&latency_waiters, 1);
}

static __always_inline s32 task_nice(const struct task_struct *p)
{
	return (s32)p->static_prio - 120;
}

/* The task's priority class (policy.h: vrq_task_prio); @tctx may be NULL (no kernel-wakeup boost). */
static __always_inline u32 task_prio(const struct task_struct *p, const struct task_ctx *tctx)
{
	return vrq_task_prio(p->policy, !!(p->flags & PF_EXITING), tctx && tctx->kernel_wakeup);
}

static __always_inline u64 task_priodl(const struct task_struct *p, const struct task_ctx *tctx)
{
	return vrq_priodl(task_prio(p, tctx), tctx->deadline);
}

/*
 * The slice a task gets on queue @q, @queued tasks long now, with the queues' clock at @rate (policy.h:
 * vrq_task_slice); @why (may be NULL) gets the rule that gave it.
 */
static __always_inline u64 task_slice(const struct task_struct *p, u32 q, u64 queued, u64 rate, u32 *why)
{
	return vrq_task_slice(rr_interval_ns, min_slice_ns, max_round_ns, rate, queued, online_cpus_of_queue(q),
			      !!(p->flags & PF_KTHREAD), why);
}

/* The group a task belongs to under --group-accounting (0 when off). */
static __always_inline u32 group_of(struct task_struct *p)
{
	struct pid *sid;

	switch (group_mode) {
	case VRQ_GROUP_THREAD:
		return p->tgid;
	case VRQ_GROUP_SESSION:
		/* direct loads (fault-safe), not probe-read helper calls: this runs at every wake-up */
		sid = p->signal->pids[PIDTYPE_SID];
		return sid ? sid->numbers[0].nr : p->tgid;
	default:
		return 0;
	}
}

/*
 * The deadline multiplier of @group (fixed point, VRQ_GROUP_LOAD_ONE is 1): its runnable tasks averaged
 * over about one rr_interval, weighed in by the other groups' count.
 */
static __always_inline u64 group_multiplier_of(u32 group)
{
	struct vrq_load *g;
	u64 now;

	/* a group alone (a pipe's two tasks in one session): no lookup, no division */
	if (!group || busy_groups <= 1)
		return VRQ_GROUP_LOAD_ONE;
	if (!(g = bpf_map_lookup_elem(&group_runnable, &group)))
		return VRQ_GROUP_LOAD_ONE;
	now = scx_bpf_now();
	return vrq_group_multiplier(vrq_load_avg_at(g, now, rr_interval_ns),
				    vrq_load_avg_at(&all_grouped_tasks, now, rr_interval_ns));
}

/* Charge the run time since the last charge to the task's slice, and to its run (short runners). */
static __always_inline void charge_slice(struct task_ctx *tctx, u64 now)
{
	s64 ran = (s64)(now - tctx->last_charged);

	if (ran > 0) {
		tctx->time_slice -= ran;
		tctx->run_ns += ran;
	}
	tctx->last_charged = now;
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
	u64 depth_n = fork_depth_penalty ? vrq_fork_depth_scale(tctx->fork_depth) : 1;
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
 * --under-share-first: @p wakes having used less CPU than its share beside the tasks competing on queue
 * @q (vrq_under_share): it goes first -- at nice 0 alone in its group, one offset before now
 * (vrq_under_share_deadline) -- whether its deadline was just renewed or kept. BFS would leave it
 * behind every task whose deadline is earlier -- in a queue longer than the offset covers, every CPU
 * hog that waited its round -- so a task that sleeps most of the time waited turn after turn (a
 * periodic sleeper beside eight hogs on its CPU: p50 8-10 ms, EEVDF's 57 us). Its slice is what it had:
 * the rule moves its place, not its CPU time.
 *
 * A global function, so the verifier walks it once per program, its caller seeing only its return: as
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
	base_offset = vrq_nice0_offset(vrq_offset_slice(slice, rr_interval_ns, clock_rate));
	tctx->deadline = vrq_under_share_deadline(tctx->deadline, niffies, tctx->offset, base_offset);
	stat_inc(VRQ_STAT_UNDER_SHARE);
	return 0;
}

/*
 * Bring a task's deadline onto queue @q's clock, then give it a new one when vrq_renew_deadline() says
 * so (@woken: it is queued by its wake-up, not after being descheduled while runnable), else keep it
 * and fit its remaining slice to the queue. Idempotent.
 */
static void refresh_deadline(struct task_struct *p, struct task_ctx *tctx, u32 q, bool woken)
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

/* The one writer of a CPU's running_priodl (0: nothing runs there), which find_cpu_for reads. */
static __always_inline void set_running_priodl(struct cpu_ctx *cctx, u64 priodl)
{
	if (cctx)
		cctx->running_priodl = priodl;
}

/*
 * Keeping a task on its CPU. Two callbacks decide it and this carries it out:
 *  - dispatch (prev_keeps_cpu): the task that just ran has a priodl no larger than any queue head this
 *    CPU could take; dispatch takes nothing and the kernel hands the task back through
 *    enqueue(SCX_ENQ_LAST), which calls this;
 *  - tick (renew_on_tick): its slice ran out and nothing waits anywhere; renewed in place, without a
 *    trip through schedule().
 * Both have refreshed its deadline on this CPU's queue as a task that was not woken (renewed if its
 * slice is used up). @priodl is its priodl after that. It never left: no sticky mark.
 */
static __always_inline void keep_on_cpu(struct task_ctx *tctx, struct cpu_ctx *cctx, u64 priodl)
{
	tctx->sticky_cpu = -1;
	set_running_priodl(cctx, priodl);
}

/* The CPUs within distance @dist of @cctx's CPU (its masks built at init); NULL for other distances. */
static const struct cpumask *distance_mask(struct cpu_ctx *cctx, u32 dist)
{
	struct bpf_cpumask *m;

	switch (dist) {
	case VRQ_DIST_SMT:
		m = cctx->smt;
		break;
	case VRQ_DIST_LLC:
		m = cctx->llc;
		break;
	case VRQ_DIST_PKG:
		m = cctx->pkg;
		break;
	case VRQ_DIST_NODE:
		m = cctx->node;
		break;
	default:
		m = NULL;
	}
	return (const struct cpumask *)m;
}

/* A CPU's performance level: the test interface's value if one is set, else sched_ext's reading. */
static __always_inline u32 cpu_perf(s32 cpu)
{
	u32 key = CPU_IDX(cpu), *injected = bpf_map_lookup_elem(&test_cpuperf, &key);

	if (injected && *injected)
		return *injected;
	return scx_bpf_cpuperf_cur(cpu);
}

/* Look at @cpu's frequency again and move it between the fast and scaled masks if it changed. */
static void refresh_cpu_perf(s32 cpu)
{
	struct bpf_cpumask *fast_cpus, *scaled_cpus;
	struct cpu_ctx *cctx;
	struct perf_masks *pm;
	u32 zero = 0;
	u8 scaled;

	if (!freq_threshold_pct || !(cctx = cpu_ctx_of(cpu)) || !(pm = bpf_map_lookup_elem(&perf_masks, &zero)))
		return;
	scaled = vrq_cpu_scaled(cpu_perf(cpu), freq_threshold_pct);
	if (scaled == cctx->scaled)
		return;
	cctx->scaled = scaled;
	fast_cpus = pm->fast;
	scaled_cpus = pm->scaled;
	if (!fast_cpus || !scaled_cpus)
		return;
	if (scaled) {
		bpf_cpumask_clear_cpu(cpu, fast_cpus);
		bpf_cpumask_set_cpu(cpu, scaled_cpus);
	} else {
		bpf_cpumask_clear_cpu(cpu, scaled_cpus);
		bpf_cpumask_set_cpu(cpu, fast_cpus);
	}
}

static __always_inline bool cpu_scaled(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	return cctx && cctx->scaled;
}

/* A CPU of @mask that is idle right now, without claiming it; -1 if none. */
static s32 idle_cpu_in(const struct cpumask *mask)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	u32 cpu = bpf_cpumask_any_and_distribute(mask, idle);

	scx_bpf_put_idle_cpumask(idle);
	return cpu < nr_cpus ? (s32)cpu : -1;
}

/*
 * Is any CPU @p may use idle right now? One read of the idle mask: a wake-up on a saturated machine
 * (the common case under load) skips every step of the search and every claim it would try.
 */
static __always_inline bool idle_cpu_allowed(const struct task_struct *p)
{
	return idle_cpu_in(p->cpus_ptr) >= 0;
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
};

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

/*
 * Find and claim an idle CPU for @p, in VRQ's best_mask_cpu order (vrq_select_step in policy.h):
 * nearest to @prev_cpu first, fast before scaled at each distance when --freq-threshold is on.
 * With @may_delay (delayed migration applies to this wake-up), reaching a step of scaled CPUs with one
 * of them idle stops the search without claiming it: the caller places the task on the waker. A task
 * allowed on one CPU stops at the first wider step.
 */
static struct pick pick_idle_cpu(struct task_struct *p, s32 prev_cpu, bool may_delay)
{
	struct pick r = { .cpu = -1, .dist = VRQ_DIST_ANY, .scaled_cpu = -1 };
	struct cpu_ctx *prev_ctx = cpu_ctx_of(prev_cpu), *this_ctx = cpu_ctx_of(bpf_get_smp_processor_id());
	bool freq_aware = freq_threshold_pct != 0;
	const struct cpumask *perf_cpus, *search;
	struct perf_masks *pm = NULL;
	u32 zero = 0, i, dist, perf;

	if (!idle_cpu_allowed(p))
		return r;	/* nothing to claim, nor a scaled idle CPU to pass over */
	if (freq_aware)
		pm = bpf_map_lookup_elem(&perf_masks, &zero);
	bpf_for(i, 0, VRQ_SELECT_MAX_STEPS) {
		if (!vrq_select_step(i, freq_aware, &dist, &perf))
			break;
		if (!perf_cpus_of(pm, perf, &perf_cpus))
			continue;
		if (dist == VRQ_DIST_SAME) {
			if (try_prev_cpu(p, prev_cpu, perf, perf_cpus, may_delay, &r))
				break;
			continue;
		}
		if (p->nr_cpus_allowed == 1)
			break;	/* only its one CPU, already looked at */
		search = step_cpus(p, prev_ctx, this_ctx, dist, perf_cpus);
		if (search && try_step(search, dist, perf, freq_aware, may_delay, &r))
			break;
	}
	return r;
}

/*
 * Insert @p straight into @cpu's local DSQ, the CPU select_cpu returns, its deadline refreshed on that
 * CPU's queue as a wake-up. Nothing passes it there: the CPU is idle (nothing queued it may run, else it
 * would not be idle), or it is the waker's with nothing waiting for it (sync hand-off). The kernel
 * wakes the CPU because a task arrived on it: no kick, so no idle->idle reschedule.
 */
static __always_inline void insert_on_cpu(struct task_struct *p, struct task_ctx *tctx, s32 cpu)
{
	refresh_deadline(p, tctx, queue_of_cpu(cpu), true);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, 0);
}

/* Sync hand-off (--sync-handoff): the waker is about to sleep and nothing else waits for its CPU. */
static __always_inline bool sync_handoff_applies(struct task_struct *p, s32 waker, u64 wake_flags)
{
	/* most wake-ups are not sync: decide those before reading any queue */
	if (!sync_handoff || !(wake_flags & SCX_WAKE_SYNC))
		return false;
	return vrq_sync_handoff(sync_handoff, wake_flags & SCX_WAKE_SYNC, bpf_cpumask_test_cpu(waker, p->cpus_ptr),
				cpu_scaled(waker), scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL),
				scx_bpf_dsq_nr_queued(queue_of_cpu(waker)));
}

/* Delayed migration: only wake-ups and forks, and only onto a fast waker that may run the task. */
static __always_inline bool delay_may_apply(struct task_struct *p, s32 waker, u64 wake_flags)
{
	return vrq_delay_placement(migration_delay_ns, 1, cpu_scaled(waker), bpf_cpumask_test_cpu(waker, p->cpus_ptr),
				   0) &&
	       (wake_flags & (SCX_WAKE_TTWU | SCX_WAKE_FORK));
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
 * ops.select_cpu: a task wakes (or is forked, or execs); runs on the waker's CPU and returns the CPU the
 * task goes to. Steps: start the hand-offs to enqueue (wake.sync, delay.scaled_cpu); sync hand-off;
 * else look for an idle CPU (pick_idle_cpu): a scaled one passed over for delayed migration sends the
 * task to the waker (enqueue follows there), a claimed one gets the task straight into its local DSQ
 * (enqueue is not called); none: the previous CPU, and enqueue follows. Writes the task's deadline and
 * time_slice when it inserts the task.
 */
s32 BPF_STRUCT_OPS(vrq_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 waker = bpf_get_smp_processor_id();
	struct pick pk;

	if (!tctx)
		return prev_cpu;
	tctx->wake.sync = !!(wake_flags & SCX_WAKE_SYNC);
	tctx->delay.scaled_cpu = -1;

	if (sync_handoff_applies(p, waker, wake_flags)) {
		insert_on_cpu(p, tctx, waker);
		stat_inc(VRQ_STAT_SYNC_HANDOFF);
		return waker;
	}
	pk = pick_idle_cpu(p, prev_cpu, delay_may_apply(p, waker, wake_flags));
	if (pk.delay) {
		/* enqueue() follows on this CPU and queues it here without waking anyone (see there) */
		tctx->delay.scaled_cpu = pk.scaled_cpu;	/* >= 0 whenever pk.delay */
		stat_inc(VRQ_STAT_DELAY_PLACED);
		return waker;
	}
	if (pk.cpu >= 0) {
		insert_on_cpu(p, tctx, pk.cpu);
		stat_inc(VRQ_STAT_SEL_PREV + pk.dist);
		if (pk.scaled)
			stat_inc(VRQ_STAT_SEL_SCALED);
		stat_inc(VRQ_STAT_DIRECT_IDLE);
		return pk.cpu;
	}
	stat_inc(VRQ_STAT_SEL_BUSY);
	return queue_from_waker(p, prev_cpu, waker, wake_flags) ? waker : prev_cpu;
}

/*
 * Delayed migration, the delay ends: the tasks placed on @cpu (a waker) have waited it out without
 * running (vrq_delay_expired). Wake the scaled idle CPU the latest of them passed over, else the
 * nearest idle CPU -- its dispatch reads every queue's head and takes them (one kick: the rest wait for
 * the next) -- and start a new generation, so those tasks are counted as migrated-after-delay, not as
 * run-before-delay.
 */
static void end_delay(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	const struct cpumask *near;
	s64 waiting;
	s32 idle;
	u32 dist;

	if (!cctx)
		return;
	cctx->delay.gen++;
	waiting = __sync_lock_test_and_set(&cctx->delay.pending, 0);
	if (waiting <= 0)
		return;
	/* counted as migrated-after-delay also where this CPU may wake nobody (may_kick): they are no
	 * longer held for it, and the next dispatch of a CPU they may use takes them */
	stat_add(VRQ_STAT_DELAY_MIGRATED, waiting);
	if (!may_kick())
		return;
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

/* What find_cpu_for learns from the CPUs a queued task may use, when none of them is idle. */
struct busy_cpus {
	u64 latest_priodl;	/* the latest running_priodl among them (BFS try_preempt's victim) ... */
	s32 latest_cpu;		/* ... and its CPU (-1: none) */
	u64 longest_since;	/* the earliest start of a run under way among them ... */
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
		if (cctx->run_started < busy->longest_since) {
			busy->longest_since = cctx->run_started;
			busy->longest_cpu = cpu;
		}
	}
	return false;
}

/*
 * Target latency, for a woken task that waits and preempted nobody: the longest turn under way on the
 * CPUs it may use ends now if it has lasted the turn at the rate the woken tasks waiting set -- what it
 * would have been given, had it begun while they waited. The kick makes its task compete again in
 * dispatch, which counts the slice used up (end_turn_if_over), so it competes with a new deadline.
 */
static __always_inline void end_longest_turn(const struct busy_cpus *busy)
{
	u64 now = scx_bpf_now();

	if (!target_latency_ns || busy->longest_cpu < 0 || (s64)(now - busy->longest_since) <= 0 || !may_kick())
		return;
	if (vrq_turn_over(now - busy->longest_since, rr_interval_ns, latency_waiters_rate())) {
		scx_bpf_kick_cpu(busy->longest_cpu, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_TURN_ENDED);
	}
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

/* A local preemption, by a kick or directly: the run it ends was ended by its wakee (short runners). */
static __always_inline void count_local_preemption(struct cpu_ctx *local_ctx)
{
	local_ctx->waker_preempted = 1;
	stat_inc(VRQ_STAT_PREEMPT_KICK);
	stat_inc(VRQ_STAT_PREEMPT_LOCAL);
}

/*
 * A woken task found no idle CPU: BFS try_preempt -- preempt the allowed CPU running the latest
 * running_priodl if the waking task's priodl is earlier (--preempt-local: this CPU first, if it may);
 * failing that, with a target latency, end the longest turn that has run its course. @sync_wakeup: the
 * wake.sync hand-off, which never preempts (nor does SCHED_BATCH).
 */
static void preempt_for_wakeup(struct task_struct *p, u64 priodl, bool sync_wakeup, const struct busy_cpus *busy)
{
	s32 local = bpf_get_smp_processor_id();
	struct cpu_ctx *local_ctx = cpu_ctx_of(local);

	if (!vrq_may_preempt(p->policy, sync_wakeup)) {
		stat_inc(VRQ_STAT_BATCH_NO_PREEMPT);
		return;
	}
	if (!may_kick())
		return;
	if (preempts_local(p, priodl, local, local_ctx)) {
		scx_bpf_kick_cpu(local, SCX_KICK_PREEMPT);
		count_local_preemption(local_ctx);
		return;
	}
	if (busy->latest_cpu >= 0 && vrq_should_preempt(priodl, busy->latest_priodl)) {
		scx_bpf_kick_cpu(busy->latest_cpu, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_PREEMPT_KICK);
		return;
	}
	end_longest_turn(busy);
}

/*
 * --preempt-local, the direct form (enqueue, before queueing): @p woke on this CPU, may preempt (not
 * SCHED_BATCH, not a sync wake-up), its priodl is earlier than the task running here
 * (vrq_preempt_local) and no earlier than the head of its queue -- so the kick of preempt_for_wakeup
 * would make this CPU's dispatch take @p itself. It goes straight onto this CPU's local DSQ with
 * SCX_ENQ_PREEMPT instead: the kernel ends the running task's slice and reschedules in this same
 * path, where a kick (scx_bpf_kick_cpu) is bounced through an irq_work -- a second interrupt -- and
 * the queue's dispatch follows. A task delayed-migration placed here is left to hold_for_delay. Only
 * its own queue's head is read (--queue cpu: another queue's earlier head waits for the next
 * dispatch here or on its own CPUs). True: inserted, nothing more to do.
 */
static __always_inline bool preempt_local_direct(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u32 q,
						 u64 priodl, bool sync_wakeup, u64 enq_flags)
{
	struct cpu_ctx *local_ctx;
	struct task_struct *head;

	if (!preempt_local || cpu != bpf_get_smp_processor_id() || tctx->delay.scaled_cpu >= 0 ||
	    !vrq_may_preempt(p->policy, sync_wakeup))
		return false;
	local_ctx = cpu_ctx_of(cpu);
	if (!preempts_local(p, priodl, cpu, local_ctx))
		return false;
	head = __COMPAT_scx_bpf_dsq_peek(q);
	if (head && head->scx.dsq_vtime < priodl)
		return false;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags | SCX_ENQ_PREEMPT);
	count_local_preemption(local_ctx);
	stat_inc(VRQ_STAT_PREEMPT_DIRECT);
	return true;
}

/*
 * Enqueue, last step: a task was queued (select_cpu found no idle CPU, or it was not woken through
 * select_cpu). Wake an idle CPU that may run it; else, if it woke, preempt for it (preempt_for_wakeup).
 */
static void find_cpu_for(struct task_struct *p, u64 priodl, bool wakeup, bool sync_wakeup)
{
	struct busy_cpus busy = { .latest_cpu = -1, .longest_since = ~0ULL, .longest_cpu = -1 };

	if (kick_idle_or_survey(p, &busy, wakeup) || !wakeup)
		return;
	preempt_for_wakeup(p, priodl, sync_wakeup, &busy);
}

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
static __always_inline u64 ready_to_queue(struct task_struct *p, struct task_ctx *tctx, u32 q, bool woken)
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
 * Delayed migration (enqueue, step 3): select_cpu placed @p on this, the waker's, fast CPU instead of a
 * scaled idle one. Take that hand-off; if the task is queued here indeed, count it against the delay
 * and wake nobody, preempt nobody: the waker usually sleeps first and runs it here; if not, its tick
 * wakes an idle CPU for it (end_delay). True: placed, nothing more to do.
 */
static __always_inline bool hold_for_delay(struct task_ctx *tctx, s32 cpu)
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
 * ops.enqueue: @p must be queued -- select_cpu found no idle CPU, or it was preempted or its slice ended
 * while others wait, or its properties changed while queued or running; SCX_ENQ_LAST: dispatch let it
 * keep its CPU. Steps: take the wake-up hand-off (wake.sync); ready it (ready_to_queue); SCX_ENQ_LAST:
 * keep it on its CPU (keep_on_cpu); else insert it into its CPU's queue by priodl; delayed migration
 * (hold_for_delay); a task still running with slice left needs no CPU; else find_cpu_for. Reads
 * delay.scaled_cpu (taken); writes deadline, time_slice, kernel_wakeup, enq_at, sticky_cpu (SCX_ENQ_LAST),
 * delay.waker / delay.gen and the waker CPU's delay (delayed migration), running_priodl (SCX_ENQ_LAST).
 */
void BPF_STRUCT_OPS(vrq_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	u32 q = queue_of_cpu(cpu);
	bool sync_wakeup;
	u64 priodl;

	if (!tctx) {
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, rr_interval_ns, enq_flags);
		return;
	}
	stat_inc(VRQ_STAT_ENQUEUE);
	sync_wakeup = vrq_take_once(&tctx->wake.sync);
	priodl = ready_to_queue(p, tctx, q, enq_flags & SCX_ENQ_WAKEUP);
	if (enq_flags & SCX_ENQ_LAST) {
		keep_on_cpu(tctx, cpu_ctx_of(cpu), priodl);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags);
		stat_inc(VRQ_STAT_KEEP_LAST);
		return;
	}
	if ((enq_flags & SCX_ENQ_WAKEUP) && preempt_local_direct(p, tctx, cpu, q, priodl, sync_wakeup, enq_flags)) {
		count_latency_waiter(tctx, enq_flags);
		return;
	}
	scx_bpf_dsq_insert_vtime(p, q, tctx->time_slice, priodl, enq_flags);
	count_latency_waiter(tctx, enq_flags);
	if (hold_for_delay(tctx, cpu))
		return;
	/*
	 * A task re-queued while it keeps running (its nice or affinity changed mid-slice) needs no other
	 * CPU: kicking an idle one would only make it reschedule idle->idle (VRQ's resched_best_idle
	 * fix). A task switched out with its slice gone does, if an idle CPU may run it.
	 */
	if (scx_bpf_task_running(p) && p->scx.slice > 0)
		return;
	find_cpu_for(p, priodl, enq_flags & SCX_ENQ_WAKEUP, sync_wakeup);
}

/*
 * SCHED_IDLE tasks wait behind every normal task, but never long enough to trip the sched_ext
 * watchdog: every eighth of --idle-bound-ms this CPU looks at the tail of its own queue (where idle
 * tasks sort) and runs up to VRQ_IDLE_RESCUE_MAX that have waited longer than the bound, each with a
 * --min-slice-us slice (in effect until the next tick), so that many idle tasks -- any user may make
 * them -- all get their turn within the watchdog while normal tasks lose little.
 */
#define VRQ_IDLE_RESCUE_MAX 4

/* Dispatch, step 1: run SCHED_IDLE tasks that waited past the bound; true if any. */
static bool rescue_starved_idle(s32 cpu, u32 q, u64 now)
{
	struct vrq_queue *vq = queue_state(q);
	struct task_struct *p;
	u32 rescued = 0;

	if (now - vq->idle_scan_at < idle_bound_ns / 8)
		return false;
	vq->idle_scan_at = now;

	bpf_for_each(scx_dsq, p, q, SCX_DSQ_ITER_REV) {
		struct task_ctx *tctx;

		tctx = task_ctx_of(p);
		if (task_prio(p, tctx) != VRQ_PRIO_IDLE)
			break;	/* reached the normal tasks: no idle task is left behind them */
		if (!tctx || now - tctx->enq_at < idle_bound_ns)
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		scx_bpf_dsq_move_set_slice(BPF_FOR_EACH_ITER, min_slice_ns);
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_inc(VRQ_STAT_IDLE_BOUND);
			if (++rescued >= VRQ_IDLE_RESCUE_MAX)
				break;
		}
	}
	return rescued > 0;
}

/* What dispatch found at the heads of the queues (find_best_head). */
struct best_head {
	u32 q;			/* the queue whose head has the smallest key (VRQ_NO_QUEUE: none) */
	u32 dist;		/* its distance from this CPU, which breaks ties */
	u64 priodl;		/* its key: the head's priodl, later by the sticky offset if it is
				 * sticky elsewhere */
	u64 sticky_passed;	/* the smallest priodl among the heads made later as sticky
				 * ((u64)-1: none) */
};

/*
 * BFS sticky tasks: does @head, the head of queue @q, count as later for this CPU of queue @own? When
 * it is sticky to a CPU of @q (another CPU had to leave it there), unless taking it evens out the two
 * queues (vrq_sticky_holds).
 */
static __always_inline bool sticky_elsewhere(struct task_struct *head, u32 q, u32 own)
{
	struct task_ctx *hctx;

	if (!sticky_tasks || q == own)
		return false;
	hctx = task_ctx_of(head);
	return hctx && hctx->sticky_cpu >= 0 && queue_of_cpu(hctx->sticky_cpu) == q &&
	       vrq_sticky_holds(scx_bpf_dsq_nr_queued(q), online_cpus_of_queue(q),
				scx_bpf_dsq_nr_queued(own), online_cpus_of_queue(own));
}

/*
 * Dispatch, step 2: the earliest priodl among the queue heads this CPU may run, read without taking any
 * queue lock (MuQSS's lockless peek); ties go to the nearest queue (enum vrq_distance).
 */
static __always_inline void find_best_head(s32 cpu, u32 own, struct best_head *best)
{
	struct task_struct *head;
	u32 q, dist;
	u64 key;

	best->q = VRQ_NO_QUEUE;
	best->dist = VRQ_NR_DIST;
	best->priodl = 0;
	best->sticky_passed = (u64)-1;
	bpf_for(q, 0, nr_queues) {
		if (q != own)
			stat_inc(VRQ_STAT_PEEK);
		head = __COMPAT_scx_bpf_dsq_peek(q);
		if (!head)
			continue;
		/*
		 * In its own queue, a head this CPU may not run still stands for the queue: tasks behind it
		 * may be allowed here, and taking moves the first one that is. Another queue's such head
		 * is left to the CPUs it may run on.
		 */
		if (q != own && !bpf_cpumask_test_cpu(cpu, head->cpus_ptr))
			continue;
		key = head->scx.dsq_vtime;
		if (sticky_elsewhere(head, q, own)) {
			if (key < best->sticky_passed)
				best->sticky_passed = key;
			key = vrq_sticky_priodl(key, vrq_sticky_offset(rr_interval_ns));
		}
		/* only ties between queues read it: one queue needs no topology lookup */
		dist = nr_queues > 1 ? cpu_distance(cpu, queue_rep_cpu[QUEUE_IDX(q)]) : VRQ_DIST_SAME;
		if (best->q == VRQ_NO_QUEUE || key < best->priodl || (key == best->priodl && dist < best->dist)) {
			best->q = q;
			best->priodl = key;
			best->dist = dist;
		}
	}
}

/* A sticky head that would have beaten the task that runs (@winner) counted as later: say so. */
static __always_inline void count_sticky_passed(const struct best_head *best, u64 winner)
{
	if (best->sticky_passed < winner)
		stat_inc(VRQ_STAT_STICKY_PASSED);
}

/* The task that just ran is still runnable and may run on this CPU (else: goidle_reason). */
static __always_inline bool prev_may_stay(s32 cpu, struct task_struct *prev)
{
	return prev && (prev->scx.flags & SCX_TASK_QUEUED) && bpf_cpumask_test_cpu(cpu, prev->cpus_ptr);
}

/*
 * Target latency: @p, still runnable, competes for its CPU again or leaves it while latency waiters wait,
 * after a run as long as the turn their wait sets (vrq_turn_over; end_longest_turn's kick, or a deadline
 * preemption): its slice is used up, so it gets a new deadline now instead of going on with the old one.
 * Kernel threads keep rr_interval (vrq_task_slice). True if it did.
 */
static __always_inline bool end_turn_if_over(struct task_struct *p, struct task_ctx *tctx, struct cpu_ctx *cctx,
					     u64 now)
{
	if (!target_latency_ns || !cctx || (p->flags & PF_KTHREAD) || tctx->time_slice <= 0)
		return false;
	if (!vrq_turn_over(now - cctx->run_started, rr_interval_ns, latency_waiters_rate()))
		return false;
	tctx->time_slice = 0;
	return true;
}

/*
 * Dispatch, step 3: the task that just ran is not in any queue yet; it competes with the best head by
 * its own priodl (vrq_keeps_cpu). Its run is charged first: a slice the slice timer ended is used up
 * only once charged (otherwise only the tick charges), and an uncharged one would keep its old deadline
 * and win again until the next tick. Then its deadline is refreshed on this CPU's queue (renewed if its
 * slice is used up). True: it keeps the CPU (dispatch takes nothing; see keep_on_cpu).
 */
static __always_inline bool prev_keeps_cpu(s32 cpu, struct task_struct *prev, u32 own,
					   const struct best_head *best)
{
	struct task_ctx *pctx;
	struct cpu_ctx *cctx;
	u64 priodl, now;

	if (!prev_may_stay(cpu, prev) || !(pctx = task_ctx_of(prev)))
		return false;
	cctx = cpu_ctx_of(cpu);
	now = scx_bpf_now();
	charge_slice(pctx, now);
	/*
	 * A turn-end kick (end_longest_turn) lands here, before any stopping: a turn that is over is
	 * used up now, or prev would compete with its old deadline -- earlier than the woken task's
	 * renewed one after the faster clock passed it -- keep the CPU and lose the kick. Renewed, it
	 * starts a new turn if it wins all the same.
	 */
	if (end_turn_if_over(prev, pctx, cctx, now)) {
		cctx->run_started = now;
		stat_inc(VRQ_STAT_TURN_OVER_DISPATCH);
	}
	refresh_deadline(prev, pctx, own, false);
	priodl = task_priodl(prev, pctx);
	if (!vrq_keeps_cpu(priodl, best->q != VRQ_NO_QUEUE, best->priodl)) {
		/* its enqueue follows before this CPU starts the winner: the refresh holds till then */
		if (cctx) {
			pctx->fresh_cpu = cpu + 1;
			pctx->fresh_seq = cctx->run_seq;
		}
		return false;
	}
	count_sticky_passed(best, priodl);
	return true;
}

/*
 * Dispatch, step 4, the upgrade of BFS's upgradeable-lock experiment: only now lock the chosen queue, to
 * move its first task that may run here to this CPU. If another queue's task is gone by then, fall back
 * to this CPU's own queue. Records the queue's depth for the statistics.
 */
static __always_inline bool take_best(u32 own, const struct best_head *best)
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
	if (scx_bpf_dsq_move_to_local(best->q, 0)) {
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
static __always_inline void count_goidle(s32 cpu, struct task_struct *prev)
{
	if (!prev)
		stat_inc(VRQ_STAT_GOIDLE_IDLE);
	else if (!(prev->scx.flags & SCX_TASK_QUEUED))
		stat_inc(VRQ_STAT_GOIDLE_BLOCKED);
	else if (!bpf_cpumask_test_cpu(cpu, prev->cpus_ptr))
		stat_inc(VRQ_STAT_GOIDLE_NEEDOTHER);
}

/*
 * ops.dispatch: CPU @cpu needs a task (its task blocked, its slice ran out, or it was kicked); @prev is
 * the task that just ran (NULL if the CPU was idle). Reads every queue's head and @prev's task_ctx;
 * writes @prev's time_slice / last_charged / deadline (it competes), this CPU's scaled bit, the chosen
 * queue's depth figures and idle_scan_at of its own.
 */
void BPF_STRUCT_OPS(vrq_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 own = queue_of_cpu(cpu);
	u64 now = scx_bpf_now();
	struct best_head best;

	if ((u32)cpu >= VRQ_MAX_CPUS)
		return;
	refresh_cpu_perf(cpu);
	if (rescue_starved_idle(cpu, own, now))
		return;
	find_best_head(cpu, own, &best);
	if (prev_keeps_cpu(cpu, prev, own, &best))
		return;
	if (best.q != VRQ_NO_QUEUE)
		count_sticky_passed(&best, best.priodl);
	if (take_best(own, &best))
		return;
	count_goidle(cpu, prev);
}

/* The slice of the run it was armed for is over: make that CPU reschedule, if it is still that run. */
static int slice_timer_fired(void *map, int *key, struct slice_timer *t)
{
	struct cpu_ctx *cctx = cpu_ctx_of(*key);

	if (cctx && cctx->timer_seq == cctx->run_seq && may_kick()) {
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_SLICE_TIMER);
	}
	return 0;
}

/*
 * Start this CPU's run @cctx->run_seq. While the queue is long, a slice is shrunk (--max-round-ms) and
 * must be ended by the slice timer: sched_ext would end it only on the next tick. A slice given while
 * the queue was still short (a crowd woken at once) is cut to what the queue allows now, or the first
 * round would last as long as a fixed slice makes it. While the queue is short, ordinary slices and
 * their remainders end on the tick, as the deadlines assume.
 */
static void start_run(struct task_struct *p, struct task_ctx *tctx, s32 cpu, struct cpu_ctx *cctx, u32 q)
{
	struct slice_timer *st;
	u32 key = CPU_IDX(cpu);
	u64 slice;

	cctx->run_seq++;
	cctx->waker_preempted = 0;
	cctx->run_started = tctx->last_charged;
	slice = task_slice(p, q, scx_bpf_dsq_nr_queued(q), clock_rate, NULL);
	if (slice >= rr_interval_ns)
		return;
	if (p->scx.slice > slice) {
		p->scx.slice = slice;
		tctx->time_slice = slice;
		stat_inc(VRQ_STAT_SLICE_SHRUNK);
	}
	cctx->timer_seq = cctx->run_seq;
	if ((st = bpf_map_lookup_elem(&slice_timers, &key)))
		bpf_timer_start(&st->timer, p->scx.slice, BPF_F_TIMER_CPU_PIN);
}

/* Latency histograms: @p's wait (after a wake-up or a deschedule) ends at @now: it runs. */
static __always_inline void lat_wait_ends(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
#if VRQ_LAT_HIST
	if (tctx->lat.wait_since)
		lat_record(p, tctx->lat.wait_requeue, tctx->lat.wait_since, now);
	tctx->lat.wait_since = 0;
	tctx->lat.run_since = now;
#endif
}

/* Latency histograms: @p's run ends at @now; still @runnable, it waits from now until it runs again. */
static __always_inline void lat_run_ends(struct task_struct *p, struct task_ctx *tctx, u64 now, bool runnable)
{
#if VRQ_LAT_HIST
	if (tctx->lat.run_since)
		lat_record(p, 2, tctx->lat.run_since, now);
	tctx->lat.run_since = 0;
	tctx->lat.wait_since = runnable ? now : 0;
	tctx->lat.wait_requeue = 1;
#endif
}

/* Sticky tasks: a task sticky to a CPU runs, there (kept) or elsewhere (stolen); the mark is spent. */
static __always_inline void sticky_ends(struct task_ctx *tctx, s32 cpu)
{
	if (tctx->sticky_cpu < 0)
		return;
	stat_inc(tctx->sticky_cpu == cpu ? VRQ_STAT_STICKY_KEPT : VRQ_STAT_STICKY_STOLEN);
	tctx->sticky_cpu = -1;
}

/*
 * Delayed migration: a task placed on a waker runs. Same generation as the waker's: its delay has not
 * run out yet, so it ran before the delay. (Racing the tick's reset can leave the count one off for a
 * moment; it only decides whether an expiry wakes an idle CPU, and a task it misses still runs from its
 * queue like any other.)
 */
static __always_inline void delayed_task_runs(struct task_ctx *tctx)
{
	struct cpu_ctx *wctx;

	if (tctx->delay.waker < 0)
		return;
	wctx = cpu_ctx_of(tctx->delay.waker);
	if (wctx && wctx->delay.gen == tctx->delay.gen) {
		__sync_fetch_and_sub(&wctx->delay.pending, 1);
		stat_inc(VRQ_STAT_DELAY_RAN_BEFORE);
	}
	tctx->delay.waker = -1;
}

/*
 * ops.running: @p starts on its CPU. Steps: a task taken from another queue moves onto this CPU's clock
 * (refresh_deadline); start charging (last_charged); its wait ends (latency histograms); the hand-offs
 * that end with a run end (wake.sync, sticky_cpu, delay.waker / the waker's delay.pending); start the
 * run (start_run: run_seq, a shrunk slice and its timer) and publish its priodl (running_priodl).
 */
void BPF_STRUCT_OPS(vrq_running, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	u32 q = queue_of_cpu(cpu);

	if (!tctx)
		return;
	if (tctx->queue != q)
		refresh_deadline(p, tctx, q, false);
	tctx->last_charged = scx_bpf_now();
	lat_wait_ends(p, tctx, tctx->last_charged);
	tctx->wake.sync = 0;		/* that wake-up is over, enqueued or not */
	uncount_latency_waiter(tctx);
	sticky_ends(tctx, cpu);
	delayed_task_runs(tctx);
	if (cctx)
		start_run(p, tctx, cpu, cctx, q);
	set_running_priodl(cctx, task_priodl(p, tctx));
}

/*
 * Is any task waiting that this CPU might run instead of the current one? (Queue depths only; the
 * kfunc returns a negative error for a queue it does not know, which is not a waiting task.)
 */
static bool anything_waiting(void)
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
static __always_inline void renew_on_tick(struct task_struct *p, struct task_ctx *tctx, struct cpu_ctx *cctx,
					  u32 q)
{
	refresh_deadline(p, tctx, q, false);
	p->scx.slice = tctx->time_slice > 0 ? tctx->time_slice : rr_interval_ns;
	keep_on_cpu(tctx, cctx, task_priodl(p, tctx));
	stat_inc(VRQ_STAT_SLICE_RENEWED);
}

/*
 * ops.tick: every scheduler tick of a CPU running @p (4 ms at HZ=250). Steps: with a target latency,
 * update the queues' clock rate (clock_update); advance the CPU's queue clock; charge @p's time_slice; look at the CPU's frequency again (scaled); with delayed migration,
 * check whether the tasks placed on this CPU waited out the delay (end_delay); the kernel's slice
 * ran out and nothing waits: renew it in place (renew_on_tick).
 */
void BPF_STRUCT_OPS(vrq_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	u64 now = scx_bpf_now();
	u32 q = queue_of_cpu(cpu);

	if (target_latency_ns)
		clock_update(now);
	advance_niffies(q);
	if (tctx)
		charge_slice(tctx, now);
	refresh_cpu_perf(cpu);
	if (migration_delay_ns && cctx && cctx->delay.pending > 0 &&
	    vrq_delay_expired(cctx->delay.first_at, now, migration_delay_ns))
		end_delay(cpu);
	if (tctx && p->scx.slice == 0 && !anything_waiting())
		renew_on_tick(p, tctx, cctx, q);
}

/*
 * Going to sleep with its slice used up: the new deadline counts from now, as BFS renews it when the
 * slice ends, not from the wake-up to come -- renewed then, a task that sleeps often would come back
 * once per slice with the latest deadline of all and wait behind every hog.
 */
static __always_inline void renew_before_sleep(struct task_struct *p, struct task_ctx *tctx, bool runnable)
{
	if (!runnable && tctx->queue != VRQ_NO_QUEUE)
		refresh_deadline(p, tctx, tctx->queue, false);
}

/*
 * BFS sticky: a task that leaves this CPU involuntarily (preempted or out of slice), not by yielding, is
 * sticky to it. The yield hand-off (yielded) is spent either way.
 */
static __always_inline void mark_sticky(struct task_struct *p, struct task_ctx *tctx, bool runnable)
{
	if (sticky_tasks && runnable && !tctx->yielded) {
		tctx->sticky_cpu = scx_bpf_task_cpu(p);
		stat_inc(VRQ_STAT_STICKY_SET);
	}
	tctx->yielded = 0;
}

/*
 * Short runners: @p's run ends when it sleeps, or when a task it woke preempts it here (a request
 * queue's hand-off: the worker would have slept but for the preemption). Average it, start a new one.
 * With --short-run-renew, a slice left shorter than that average counts as used up (vrq_renew_short_run):
 * the deadline's renewal (at its sleep, or its enqueue) gives the next run a whole slice.
 */
static __always_inline void end_run(struct task_ctx *tctx, struct cpu_ctx *cctx, bool runnable)
{
	if (runnable && !(cctx && cctx->waker_preempted))
		return;
	tctx->avg_run_ns = vrq_run_avg(tctx->avg_run_ns, tctx->run_ns);
	tctx->run_ns = 0;
	if (short_run_renew && vrq_renew_short_run(tctx->time_slice, tctx->avg_run_ns, short_run_ns)) {
		tctx->time_slice = 0;
		stat_inc(VRQ_STAT_SHORT_RUN_RENEW);
	}
}

/*
 * ops.stopping: @p leaves its CPU, still @runnable (preempted, slice over, yielded) or not (it sleeps).
 * Steps: charge its time_slice; with a target latency, a turn over uses up its slice
 * (end_turn_if_over); its run for the short-runner rule ends if it sleeps or its wakee preempted it
 * (end_run); its run ends for the latency histograms (lat); asleep with its slice used up:
 * renew (renew_before_sleep); sticky mark (sticky_cpu, taking yielded); the CPU runs nothing
 * (running_priodl 0).
 */
void BPF_STRUCT_OPS(vrq_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx_of(p);
	struct cpu_ctx *cctx = cpu_ctx_of(scx_bpf_task_cpu(p));

	if (tctx) {
		u64 now = scx_bpf_now();

		charge_slice(tctx, now);
		if (runnable)
			end_turn_if_over(p, tctx, cctx, now);
		end_run(tctx, cctx, runnable);
		lat_run_ends(p, tctx, now, runnable);
		renew_before_sleep(p, tctx, runnable);
		if (!runnable)
			tctx->slept_at = now;
		mark_sticky(p, tctx, runnable);
	}
	set_running_priodl(cctx, 0);
}

/*
 * ops.yield: sched_yield() (BFS yield_type, policy.h). Giving up the CPU is zeroing the kernel's slice:
 * the CPU then dispatches, where the caller competes by its priodl like any task that just ran.
 * Expiring also uses up our own slice (time_slice), so that competition starts from a new deadline.
 * Writes yielded for the stopping that follows (a yield makes no task sticky). yield_to() (@to set) is
 * not supported: nothing is done and false tells the kernel so.
 */
bool BPF_STRUCT_OPS(vrq_yield, struct task_struct *from, struct task_struct *to)
{
	struct task_ctx *tctx;

	if (to)
		return false;
	stat_inc(VRQ_STAT_YIELD);
	tctx = task_ctx_of(from);
	if (tctx)
		tctx->yielded = vrq_yield_gives_up_cpu(yield_type);
	if (vrq_yield_expires_slice(yield_type) && tctx)
		tctx->time_slice = 0;
	if (vrq_yield_gives_up_cpu(yield_type))
		from->scx.slice = 0;
	return false;
}

/*
 * Latency histograms: @p's wake-up wait begins -- only if no wait is under way, and as a requeued wait
 * for the running task: runnable also follows a change of a task's nice or affinity (dequeued and
 * queued again), which continues the wait of a waiting task, and for the running task comes between a
 * stopping() and a running() -- no wake-up. (Every run still follows one recorded wait.)
 */
static __always_inline void lat_wait_begins(struct task_struct *p, struct task_ctx *tctx)
{
#if VRQ_LAT_HIST
	if (!tctx->lat.wait_since) {
		tctx->lat.wait_since = scx_bpf_now();
		tctx->lat.wait_requeue = scx_bpf_task_running(p);
	}
#endif
}

/*
 * Group accounting: @g's count changes by @delta, and so does the count of all grouped tasks (and of
 * busy groups, when @g becomes busy or idle); each average first counts the time the count held.
 */
static __always_inline void group_load_add(struct vrq_load *g, s64 delta)
{
	u64 now = scx_bpf_now();
	s64 before;

	if (delta < 0 && g->nr <= 0)
		return;
	vrq_load_note_change(g, now, rr_interval_ns);
	vrq_load_note_change(&all_grouped_tasks, now, rr_interval_ns);
	before = __sync_fetch_and_add(&g->nr, delta);
	__sync_fetch_and_add(&all_grouped_tasks.nr, delta);
	if ((before == 0 && delta > 0) || (before > 0 && before + delta == 0))
		__sync_fetch_and_add(&busy_groups, delta > 0 ? 1 : -1);
}

/* Group accounting: one more runnable task in @group (creating its entry for the first one). */
static __always_inline void group_runnable_inc(u32 group)
{
	struct vrq_load first = {}, *g;	/* no tasks, no average: group_load_add starts it */

	g = bpf_map_lookup_elem(&group_runnable, &group);
	if (!g) {
		/* first runnable task of the group; if another CPU created the entry meanwhile, count on it */
		bpf_map_update_elem(&group_runnable, &group, &first, BPF_NOEXIST);
		g = bpf_map_lookup_elem(&group_runnable, &group);
	}
	if (g)
		group_load_add(g, 1);
}

/*
 * ops.runnable: @p becomes runnable (woken, or new, or its properties change). Its wake-up wait begins
 * (lat.wait_since, lat.wait_requeue); with group accounting, it records its group (group) and counts it in
 * group_runnable while it is runnable (quiescent takes it off).
 */
void BPF_STRUCT_OPS(vrq_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;
	u32 group;

	if (!(tctx = task_ctx_of(p)))
		return;
	lat_wait_begins(p, tctx);
	if (tctx->slept_at) {
		tctx->avg_sleep_ns = vrq_run_avg(tctx->avg_sleep_ns, scx_bpf_now() - tctx->slept_at);
		tctx->slept_at = 0;
	}
	if (group_mode == VRQ_GROUP_OFF)
		return;
	group = group_of(p);
	tctx->group = group;
	if (group)
		group_runnable_inc(group);
}

/* ops.quiescent: @p is no longer runnable (it sleeps, or leaves). Group accounting: one fewer in its
 * group. */
void BPF_STRUCT_OPS(vrq_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx;
	struct vrq_load *g;

	if (!(tctx = task_ctx_of(p)))
		return;
	uncount_latency_waiter(tctx);
	if (group_mode == VRQ_GROUP_OFF || !tctx->group)
		return;
	if ((g = bpf_map_lookup_elem(&group_runnable, &tctx->group)))
		group_load_add(g, -1);
}

/* Forks from init: walk up real_parent (bounded); pid 1 and kernel threads' parents end it. */
static u32 fork_depth_of(struct task_struct *p)
{
	struct task_struct *t = p;
	u32 depth = 0, i;

	if (!fork_depth_penalty)
		return 0;
	bpf_for(i, 0, VRQ_FORK_DEPTH_MAX) {
		s32 pid = BPF_CORE_READ(t, pid);

		if (pid <= 1)
			break;
		depth++;
		t = BPF_CORE_READ(t, real_parent);
		if (!t)
			break;
	}
	return depth;
}

/*
 * ops.init_task: @p enters the scheduler (forked, or already there when it loads). Creates its task_ctx:
 * a used-up slice, so that its first enqueue gives it a deadline from now; on no queue's clock yet;
 * no hand-off under way; its fork depth (--fork-depth-penalty).
 */
s32 BPF_STRUCT_OPS(vrq_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	/* a new task starts with a used-up slice: its first enqueue gives it a deadline from now */
	tctx->time_slice = 0;
	tctx->deadline = 0;
	tctx->queue = VRQ_NO_QUEUE;
	tctx->fork_depth = fork_depth_of(p);
	tctx->delay.waker = -1;
	tctx->delay.scaled_cpu = -1;
	tctx->sticky_cpu = -1;
	return 0;
}

/* Build a cpumask of the CPUs within distance @dist of @cpu (VRQ_NR_DIST: all, above: none) into *@slot. */
static s32 build_distance_mask(u32 cpu, u32 dist, struct bpf_cpumask __kptr **slot)
{
	struct bpf_cpumask *mask, *old;
	u32 other;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	bpf_for(other, 0, nr_cpus) {
		if (other >= VRQ_MAX_CPUS || cpu >= VRQ_MAX_CPUS)
			break;
		if (!cpu_in_topology[CPU_IDX(other)])
			continue;
		if (dist == VRQ_NR_DIST ||
		    (dist < VRQ_NR_DIST && cpu_distance(cpu, other) <= dist))
			bpf_cpumask_set_cpu(other, mask);
	}
	old = bpf_kptr_xchg(slot, mask);
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

/* Every CPU starts as fast; each corrects its own bit when it next ticks or looks for work. */
static s32 init_perf_masks(void)
{
	struct perf_masks *pm;
	u32 zero = 0;
	s32 err;

	if (!freq_threshold_pct)
		return 0;
	if (!(pm = bpf_map_lookup_elem(&perf_masks, &zero)))
		return -ENOENT;
	if ((err = build_distance_mask(0, VRQ_NR_DIST, &pm->fast)))
		return err;
	return build_distance_mask(0, VRQ_NR_DIST + 1, &pm->scaled);	/* no distance: empty */
}

static s32 init_slice_timers(void)
{
	struct slice_timer *t;
	u32 cpu;
	s32 err;

	bpf_for(cpu, 0, nr_cpus) {
		u32 key = cpu;

		if (!(t = bpf_map_lookup_elem(&slice_timers, &key)))
			return -ENOENT;
		if ((err = bpf_timer_init(&t->timer, &slice_timers, CLOCK_MONOTONIC)) ||
		    (err = bpf_timer_set_callback(&t->timer, slice_timer_fired)))
			return err;
	}
	return 0;
}

/* Which queue each CPU uses; queue ids are dense from 0 (the loader numbers LLCs densely). */
static s32 map_cpus_to_queues(void)
{
	u32 cpu, q;

	nr_queues = 0;
	nr_online_cpus = 0;
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= VRQ_MAX_CPUS)
			break;
		if (!cpu_in_topology[CPU_IDX(cpu)])
			continue;	/* off line at load: no topology; its coming on line reloads */
		struct vrq_cpu_topo t = topo_of(cpu);

		q = vrq_queue_of(queue_mode, cpu, &t);
		if (q >= VRQ_MAX_QUEUES) {
			scx_bpf_error("CPU %u maps to queue %u, out of range", cpu, q);
			return -EINVAL;
		}
		cpu_queue[CPU_IDX(cpu)] = q;
		if (!queue_nr_cpus[QUEUE_IDX(q)])
			queue_rep_cpu[QUEUE_IDX(q)] = cpu;
		queue_nr_cpus[QUEUE_IDX(q)]++;
		cpu_is_online[CPU_IDX(cpu)] = 1;
		nr_online_cpus++;
		if (q + 1 > nr_queues)
			nr_queues = q + 1;
	}
	return 0;
}

/* Each CPU's masks of the CPUs within each distance, and its scratch mask. */
static s32 init_cpu_masks(void)
{
	u32 cpu;
	s32 err;

	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx = cpu_ctx_of(cpu);

		if (!cctx)
			return -ENOENT;
		if ((err = build_distance_mask(cpu, VRQ_DIST_SMT, &cctx->smt)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_LLC, &cctx->llc)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_PKG, &cctx->pkg)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_NODE, &cctx->node)) ||
		    (err = build_distance_mask(cpu, VRQ_NR_DIST, &cctx->tmp)))
			return err;
	}
	return 0;
}

/*
 * ops.init: the scheduler loads. Maps CPUs to queues (cpu_queue, queue_rep_cpu, queue_nr_cpus,
 * nr_queues), creates one DSQ per queue, builds every CPU's masks, the fast / scaled masks and the
 * slice timers.
 */
s32 BPF_STRUCT_OPS_SLEEPABLE(vrq_init)
{
	u32 q;
	s32 err;

	if (nr_cpus > VRQ_MAX_CPUS || nr_cpus > scx_bpf_nr_cpu_ids()) {
		scx_bpf_error("nr_cpus %u out of range", nr_cpus);
		return -EINVAL;
	}
	if ((err = map_cpus_to_queues()))
		return err;
	bpf_for(q, 0, nr_queues) {
		err = scx_bpf_create_dsq(q, -1);
		if (err) {
			scx_bpf_error("failed to create queue %u: %d", q, err);
			return err;
		}
	}
	if ((err = init_cpu_masks()) || (err = init_perf_masks()) || (err = init_slice_timers()))
		return err;
	return 0;
}

/*
 * CPU hotplug. Without ops.cpu_online / cpu_offline the kernel unloads a sched_ext scheduler at every
 * hotplug event (a restart the loader honours: a whole BPF load, and the kernel's scheduler meanwhile);
 * with them the scheduler stays. Between the two callbacks the kernel queues tasks only on CPUs on line,
 * and moves a leaving CPU's tasks to others through enqueue. What follows the CPU here: the count of
 * CPUs on line per queue and in all (a queue's slice and round divide its waiting tasks among them; the
 * target latency's clock divides the waiters among all); the running task's priodl, which wake-up
 * preemption and the turn-end kick read (their survey also skips a CPU off line: a kick would not
 * reach it); the slice timer's run (a timer the kernel moved off the CPU fires for nothing); and the
 * tasks a delayed migration held for it as the waker (their delay ends now; cpu_offline runs on the
 * leaving CPU itself, which may wake nobody -- may_kick -- so another CPU's next dispatch takes
 * them). A queue whose CPUs are all off line (--queue cpu) is emptied
 * by the others: every CPU's dispatch reads every queue's head.
 *
 * A CPU that was off line when the loader read the topology has no place in the queues: its coming on
 * line asks the loader for a restart, which reads the topology again (as a hotplug during the load
 * does: the kernel then exits the scheduler itself, its hotplug sequence number having changed).
 */
static void cpu_goes(s32 cpu, bool online)
{
	struct cpu_ctx *cctx;
	u32 q;

	if ((u32)cpu >= VRQ_MAX_CPUS || cpu_is_online[CPU_IDX(cpu)] == online)
		return;
	cpu_is_online[CPU_IDX(cpu)] = online;
	q = queue_of_cpu(cpu);
	__sync_fetch_and_add(&queue_nr_cpus[QUEUE_IDX(q)], online ? 1 : -1);
	__sync_fetch_and_add(&nr_online_cpus, online ? 1 : -1);
	if (online || !(cctx = cpu_ctx_of(cpu)))
		return;
	cctx->running_priodl = 0;
	cctx->run_seq++;
	if (migration_delay_ns)
		end_delay(cpu);
}

void BPF_STRUCT_OPS(vrq_cpu_online, s32 cpu)
{
	if ((u32)cpu >= nr_cpus || (u32)cpu >= VRQ_MAX_CPUS || !cpu_in_topology[CPU_IDX(cpu)]) {
		scx_bpf_exit(SCX_ECODE_ACT_RESTART | SCX_ECODE_RSN_HOTPLUG,
			     "CPU %d came on line, off line when the topology was read: reloading to read it again",
			     cpu);
		return;
	}
	cpu_goes(cpu, true);
	stat_inc(VRQ_STAT_CPU_ONLINE);
}

void BPF_STRUCT_OPS(vrq_cpu_offline, s32 cpu)
{
	cpu_goes(cpu, false);
	stat_inc(VRQ_STAT_CPU_OFFLINE);
}

void BPF_STRUCT_OPS(vrq_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(vrq_ops,
	       .select_cpu	= (void *)vrq_select_cpu,
	       .enqueue		= (void *)vrq_enqueue,
	       .dispatch	= (void *)vrq_dispatch,
	       .running		= (void *)vrq_running,
	       .tick		= (void *)vrq_tick,
	       .yield		= (void *)vrq_yield,
	       .runnable	= (void *)vrq_runnable,
	       .quiescent	= (void *)vrq_quiescent,
	       .stopping	= (void *)vrq_stopping,
	       .init_task	= (void *)vrq_init_task,
	       .cpu_online	= (void *)vrq_cpu_online,
	       .cpu_offline	= (void *)vrq_cpu_offline,
	       .init		= (void *)vrq_init,
	       .exit		= (void *)vrq_exit,
	       .timeout_ms	= VRQ_WATCHDOG_MS,
	       .name		= "vrq");
