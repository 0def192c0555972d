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
const volatile u64 target_latency_ns = 3ULL * VRQ_NSEC_PER_MSEC;	/* 0: off (BFS: rr_interval however many wait) */
const volatile u32 wake_credit_pct = 50;		/* 0: off (BFS: a passed deadline renews from now) */
const volatile bool sync_handoff = true;	/* run a sync wake-up's wakee on the waker's CPU */
const volatile bool preempt_local = true;	/* preempt the CPU handling the wake-up when it may */
const volatile u64 idle_bound_ns = 2000ULL * VRQ_NSEC_PER_MSEC;
const volatile u32 yield_type = VRQ_YIELD_BETTER;
const volatile u32 group_mode = VRQ_GROUP_OFF;
const volatile bool fork_depth_penalty = false;
const volatile u32 freq_threshold_pct = 0;		/* 0: frequency-blind CPU selection */
const volatile u64 migration_delay_ns = 0;		/* 0: no delayed migration */
const volatile bool sticky_tasks = false;
const volatile u32 nr_cpus = 1;
const volatile struct vrq_cpu_topo cpu_topo[VRQ_MAX_CPUS];

/* Derived at init from the knobs and the topology. */
u32 cpu_queue[VRQ_MAX_CPUS];
u32 queue_rep_cpu[VRQ_MAX_QUEUES];	/* a CPU of each queue, for its distance to others */
u32 queue_nr_cpus[VRQ_MAX_QUEUES];
u32 nr_queues;

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

/* Per-CPU state, readable by every CPU (try_preempt reads what the others run). */
struct cpu_ctx {
	u64 running_priodl;			/* priodl of the task running here; 0 when none */
	/* delayed migration: tasks placed here instead of on a cold idle CPU, not yet run */
	s64 delay_pending;
	u64 delay_gen;				/* bumped each time the pending ones' delay ran out */
	u64 delay_first_at;			/* when the oldest pending one was placed */
	s32 delay_cold;				/* the cold idle CPU the latest one was meant for */
	/* short slices: which run of this CPU the slice timer was armed for (see slice_timer_fired) */
	u64 run_seq;
	u64 timer_seq;
	u8 scaled;				/* frequency-scaled at the last look (--freq-threshold) */
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
 * The CPUs that are / are not frequency-scaled, as last seen (each CPU updates its own bit on its tick
 * and when it looks for work). Two masks because cpumask kfuncs have no and-not.
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

/* Runnable tasks per group (--group-accounting), keyed by the group's id (tgid or session id). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, s64);
} group_runnable SEC(".maps");

struct task_ctx {
	u64 deadline;		/* virtual deadline, on the clock of queue `queue` */
	s64 time_slice;		/* what is left of the current slice (ns) */
	u64 last_charged;	/* when run time was last charged to time_slice */
	u64 enq_at;		/* when it was last queued (bounds SCHED_IDLE waits) */
	u32 queue;		/* the queue whose clock `deadline` is on */
	u32 group;		/* group id counted in group_runnable while runnable (0: none) */
	u32 fork_depth;		/* forks from init (init's children: 1) */
	s32 delay_cpu;		/* delayed migration: the waker CPU it was placed on (-1: none) */
	s32 delay_cold;		/* set by select_cpu: placed on the waker instead of this cold idle CPU;
				 * enqueue counts the task as delay-placed and clears it (-1: not placed) */
	u64 delay_gen;		/* that CPU's delay_gen when it was placed */
	s32 sticky_cpu;		/* sticky tasks: the CPU it was descheduled from while runnable (-1: none) */
	u8 sync_wakeup;		/* set by select_cpu for the enqueue of the same wake-up, which takes
				 * (clears) it; running clears it too (a task handed to an idle CPU
				 * is never enqueued) */
	u8 yielded;		/* it called sched_yield(): leaving the CPU is voluntary */
	u8 kernel_wakeup;	/* a kernel thread woken: VRQ_PRIO_KERNEL until it sleeps or uses up its slice */
	/* latency histograms */
	u8 wait_requeue;	/* the wait was begun by a deschedule, not a wake-up */
	u64 wait_since;		/* when it became runnable or was descheduled still runnable; 0: not waiting */
	u64 run_since;		/* when it started running */
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

/* Advance a queue's clock to now and return it. */
static __always_inline u64 queue_niffies(u32 q)
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
		__sync_fetch_and_add(&clock_ahead, (now - mark) * (rate - VRQ_RATE_ONE) / VRQ_RATE_ONE);
	clock_waiting = 0;
	bpf_for(q, 0, nr_queues) {
		s32 n = scx_bpf_dsq_nr_queued(q);

		if (n > 0)
			clock_waiting += n;
	}
	clock_rate = vrq_clock_rate(rr_interval_ns, target_latency_ns, clock_waiting, nr_cpus);
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
 * The slice a task gets on queue @q as long as it is now, with the queues' clock at @rate (policy.h:
 * vrq_task_slice); @why (may be NULL) gets the rule that gave it.
 */
static __always_inline u64 task_slice(const struct task_struct *p, u32 q, u64 rate, u32 *why)
{
	return vrq_task_slice(rr_interval_ns, min_slice_ns, max_round_ns, rate, scx_bpf_dsq_nr_queued(q),
			      queue_nr_cpus[QUEUE_IDX(q)], !!(p->flags & PF_KTHREAD), why);
}

/* The group a task belongs to under --group-accounting (0 when off). */
static __always_inline u32 group_of(struct task_struct *p)
{
	struct pid *sid;

	switch (group_mode) {
	case VRQ_GROUP_THREAD:
		return p->tgid;
	case VRQ_GROUP_SESSION:
		sid = BPF_CORE_READ(p, signal, pids[PIDTYPE_SID]);
		return sid ? BPF_CORE_READ(sid, numbers[0].nr) : p->tgid;
	default:
		return 0;
	}
}

static __always_inline u64 group_runnable_of(u32 group)
{
	s64 *n;

	if (!group)
		return 1;
	n = bpf_map_lookup_elem(&group_runnable, &group);
	return n && *n > 0 ? *n : 1;
}

/* Charge the run time since the last charge to the task's slice. */
static __always_inline void charge_slice(struct task_ctx *tctx, u64 now)
{
	if ((s64)(now - tctx->last_charged) > 0)
		tctx->time_slice -= (s64)(now - tctx->last_charged);
	tctx->last_charged = now;
}

/*
 * Bring a task's deadline onto queue @q's clock and renew it when vrq_renew_deadline() says so (@woken:
 * it is queued by its wake-up, not after being descheduled while runnable). Idempotent.
 */
static void refresh_deadline(struct task_struct *p, struct task_ctx *tctx, u32 q, bool woken)
{
	u64 niffies = queue_niffies(q), rate = clock_rate;
	u32 slice_rule;
	u64 slice;

	if (tctx->queue != q) {
		if (tctx->queue != VRQ_NO_QUEUE) {
			struct vrq_queue *src = queue_state(tctx->queue);

			tctx->deadline = vrq_rebase_deadline(tctx->deadline, src->niffies, niffies);
			stat_inc(VRQ_STAT_NIFFIES_REBASE);
		}
		tctx->queue = q;
	}

	slice = task_slice(p, q, rate, &slice_rule);
	if (vrq_renew_deadline(tctx->time_slice, slice, tctx->deadline, niffies, woken)) {
		if (slice < rr_interval_ns)
			stat_inc(VRQ_STAT_SLICE_SHRUNK);
		if (slice_rule == VRQ_SLICE_TARGET)
			stat_inc(VRQ_STAT_TARGET_SHRUNK);
		if (slice_rule >= VRQ_SLICE_FLOOR_GAVE_WAY)
			stat_inc(VRQ_STAT_FLOOR_GAVE_WAY);
		if (slice_rule == VRQ_SLICE_ROUND_OVER)
			stat_inc(VRQ_STAT_ROUND_OVER);
		u64 group_n = group_runnable_of(tctx->group);
		u64 depth_n = fork_depth_penalty ? vrq_fork_depth_scale(tctx->fork_depth) : 1;
		/* the offset is in the queues' clock time: the same for every task at any rate */
		u64 offset = vrq_group_deadline(0, task_nice(p), vrq_offset_slice(slice, rr_interval_ns, rate),
						group_n * depth_n);
		u64 credit = vrq_wakeup_credit(tctx->time_slice, woken, slice, offset, wake_credit_pct);

		/* a kernel thread that used up its slice competes as a normal task (enqueue sets it again
		 * on its next wake-up) */
		tctx->kernel_wakeup = 0;
		if (credit) {
			tctx->time_slice = vrq_credited_slice(tctx->time_slice, slice);
			stat_inc(VRQ_STAT_WAKE_CREDIT);
		} else {
			tctx->time_slice = slice;
		}
		tctx->deadline = niffies + offset - credit;
		stat_inc(VRQ_STAT_NEW_DEADLINE);
		if (group_n > 1)
			stat_inc(VRQ_STAT_GROUP_SCALED);
		if (depth_n > 1)
			stat_inc(VRQ_STAT_DEPTH_SCALED);
	} else if (tctx->time_slice > (s64)slice) {
		/* the queue grew long: do not let a stale long slice hold up the round */
		tctx->time_slice = slice;
		stat_inc(VRQ_STAT_SLICE_SHRUNK);
	}
}

static const struct cpumask *level_mask(struct cpu_ctx *cctx, u32 level)
{
	struct bpf_cpumask *m;

	switch (level) {
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
	struct bpf_cpumask *fast, *slow;
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
	fast = pm->fast;
	slow = pm->scaled;
	if (!fast || !slow)
		return;
	if (scaled) {
		bpf_cpumask_clear_cpu(cpu, fast);
		bpf_cpumask_set_cpu(cpu, slow);
	} else {
		bpf_cpumask_clear_cpu(cpu, slow);
		bpf_cpumask_set_cpu(cpu, fast);
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
	u32 level;		/* its distance from the previous CPU */
	bool scaled;		/* it is frequency-scaled */
	bool delay;		/* none claimed: the first idle CPU in line is cold, place on the waker instead */
	s32 cold;		/* with delay: that cold idle CPU, where the task goes if the delay runs out */
};

/*
 * Find and claim an idle CPU for @p, in VRQ's best_mask_cpu order (vrq_select_step in policy.h):
 * nearest to @prev_cpu first, non-scaled before scaled at each distance when --freq-threshold is on.
 * With @may_delay (delayed migration applies to this wake-up), reaching a step of scaled CPUs with one
 * of them idle stops the search without claiming it: the caller places the task on the waker.
 */
static struct pick pick_idle_cpu(struct task_struct *p, s32 prev_cpu, bool may_delay)
{
	struct pick r = { .cpu = -1, .level = VRQ_DIST_ANY, .cold = -1 };
	struct cpu_ctx *prev_ctx = cpu_ctx_of(prev_cpu), *this_ctx = cpu_ctx_of(bpf_get_smp_processor_id());
	bool freq_aware = freq_threshold_pct != 0;
	struct perf_masks *pm = NULL;
	struct bpf_cpumask *tmp;
	u32 zero = 0, i;

	if (freq_aware)
		pm = bpf_map_lookup_elem(&perf_masks, &zero);
	bpf_for(i, 0, VRQ_SELECT_MAX_STEPS) {
		const struct cpumask *level_cpus, *perf_cpus = NULL, *search;
		u32 lvl, perf;
		s32 cpu;

		if (!vrq_select_step(i, freq_aware, &lvl, &perf))
			break;
		if (perf != VRQ_PERF_ANY) {
			struct bpf_cpumask *m = NULL;

			if (pm)
				m = perf == VRQ_PERF_FAST ? pm->fast : pm->scaled;
			if (!m)
				continue;
			perf_cpus = (const struct cpumask *)m;
		}

		if (lvl == VRQ_DIST_SAME) {
			if (!bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr))
				continue;
			if (perf_cpus && !bpf_cpumask_test_cpu(prev_cpu, perf_cpus))
				continue;
			if (perf == VRQ_PERF_SCALED && may_delay && cpu_idle_now(prev_cpu)) {
				r.delay = true;
				r.cold = prev_cpu;
				return r;
			}
			if (scx_bpf_test_and_clear_cpu_idle(prev_cpu)) {
				r.cpu = prev_cpu;
				r.level = VRQ_DIST_SAME;
				r.scaled = perf == VRQ_PERF_SCALED;
				return r;
			}
			continue;
		}
		if (p->nr_cpus_allowed == 1)
			break;	/* only its one CPU, already looked at */

		if (lvl == VRQ_DIST_ANY && !perf_cpus) {
			search = p->cpus_ptr;
		} else {
			if (!prev_ctx || !this_ctx || !(tmp = this_ctx->tmp))
				continue;
			level_cpus = level_mask(prev_ctx, lvl);
			if (!level_cpus)
				continue;
			bpf_cpumask_and(tmp, level_cpus, p->cpus_ptr);
			if (perf_cpus)
				bpf_cpumask_and(tmp, (const struct cpumask *)tmp, perf_cpus);
			search = (const struct cpumask *)tmp;
		}
		if (perf == VRQ_PERF_SCALED && may_delay && (r.cold = idle_cpu_in(search)) >= 0) {
			r.delay = true;
			return r;
		}
		cpu = scx_bpf_pick_idle_cpu(search, 0);
		if (cpu >= 0) {
			r.cpu = cpu;
			r.level = lvl;
			r.scaled = perf == VRQ_PERF_SCALED || (freq_aware && cpu_scaled(cpu));
			return r;
		}
	}
	return r;
}

s32 BPF_STRUCT_OPS(vrq_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 waker = bpf_get_smp_processor_id();
	bool may_delay;
	struct pick pk;

	if (!tctx)
		return prev_cpu;
	tctx->sync_wakeup = !!(wake_flags & SCX_WAKE_SYNC);
	tctx->delay_cold = -1;

	/* the waker is about to sleep and nothing else waits for its CPU: run the wakee there */
	if (vrq_sync_handoff(sync_handoff, wake_flags & SCX_WAKE_SYNC, bpf_cpumask_test_cpu(waker, p->cpus_ptr),
			     cpu_scaled(waker), scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL),
			     scx_bpf_dsq_nr_queued(queue_of_cpu(waker)))) {
		refresh_deadline(p, tctx, queue_of_cpu(waker), true);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, 0);
		stat_inc(VRQ_STAT_SYNC_HANDOFF);
		return waker;
	}

	/* delayed migration: only wake-ups and forks, and only onto a warm waker that may run the task */
	may_delay = vrq_delay_placement(migration_delay_ns, 1, cpu_scaled(waker),
					bpf_cpumask_test_cpu(waker, p->cpus_ptr), 0) &&
		    (wake_flags & (SCX_WAKE_TTWU | SCX_WAKE_FORK));
	pk = pick_idle_cpu(p, prev_cpu, may_delay);
	if (pk.delay) {
		/* enqueue() follows on this CPU and queues it here without waking anyone (see there) */
		tctx->delay_cold = pk.cold;	/* >= 0 whenever pk.delay */
		stat_inc(VRQ_STAT_DELAY_PLACED);
		return waker;
	}
	if (pk.cpu >= 0) {
		/*
		 * Hand the task straight to the idle CPU claimed for it: an idle CPU has nothing queued
		 * that it may run (else it would not be idle), so no earlier deadline is passed over, and
		 * no other CPU can take the task away from the warm, chosen one. The kernel wakes the CPU
		 * because a task arrived on it: no kick, so no idle->idle reschedule.
		 */
		refresh_deadline(p, tctx, queue_of_cpu(pk.cpu), true);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, 0);
		stat_inc(VRQ_STAT_SEL_PREV + pk.level);
		if (pk.scaled)
			stat_inc(VRQ_STAT_SEL_SCALED);
		stat_inc(VRQ_STAT_DIRECT_IDLE);
		return pk.cpu;
	}
	stat_inc(VRQ_STAT_SEL_BUSY);
	return prev_cpu;
}

/*
 * Delayed migration: the tasks placed on @cpu (a waker) have waited out their delay without running.
 * Wake the cold idle CPU the latest of them was meant for, else the nearest idle CPU -- its dispatch
 * reads every queue's head and takes them (one kick: the rest wait for the next) -- and start a new
 * generation, so those tasks are counted as migrated-after-delay, not as run-before-delay.
 */
static void delay_expired(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	const struct cpumask *near;
	s64 waiting;
	s32 idle;
	u32 lvl;

	if (!cctx)
		return;
	cctx->delay_gen++;
	waiting = __sync_lock_test_and_set(&cctx->delay_pending, 0);
	if (waiting <= 0)
		return;
	/* as the delayed-migration RFC does: migrate to the idle core it was meant for (the task may
	 * run there, and only there perhaps: its affinity was checked when that CPU was chosen) ... */
	idle = cctx->delay_cold;
	if (idle >= 0 && idle < nr_cpus && scx_bpf_test_and_clear_cpu_idle(idle)) {
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
	} else {
		/* ... or, that one busy by now, to the nearest idle CPU */
		bpf_for(lvl, VRQ_DIST_SMT, VRQ_DIST_ANY) {
			if (!(near = level_mask(cctx, lvl)))
				continue;
			idle = scx_bpf_pick_idle_cpu(near, 0);
			if (idle >= 0) {
				scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
				break;
			}
		}
	}
	stat_add(VRQ_STAT_DELAY_MIGRATED, waiting);
}

/*
 * Count a task placed on the waker @cpu. Its delay is checked on that CPU's tick (vrq_tick): a BPF
 * timer per placement measured costlier per wake-up (bench/migration-check, docs/measured.md), and a
 * waker that keeps its CPU ticks, while one that sleeps runs the task first.
 */
static void delay_track(struct task_ctx *tctx, s32 cpu, s32 cold)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (!cctx)
		return;
	tctx->delay_cpu = cpu;
	tctx->delay_gen = cctx->delay_gen;
	cctx->delay_cold = cold;
	if (__sync_fetch_and_add(&cctx->delay_pending, 1) <= 0)
		cctx->delay_first_at = scx_bpf_now();
}

/*
 * A task was queued (select_cpu found no idle CPU, or it was not woken through select_cpu). First wake an idle CPU that may run it (it
 * will find the task by scanning the queues); else, on a wake-up, BFS try_preempt: preempt the allowed
 * CPU running the largest priodl if the waking task's is smaller.
 */
static void find_cpu_for(struct task_struct *p, u64 priodl, bool wakeup, bool sync_wakeup)
{
	struct cpu_ctx *local_ctx;
	u64 worst_priodl = 0;
	s32 worst_cpu = -1, local;
	u32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx;

		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			stat_inc(VRQ_STAT_IDLE_KICK);
			return;
		}
		cctx = cpu_ctx_of(cpu);
		if (cctx && cctx->running_priodl > worst_priodl) {
			worst_priodl = cctx->running_priodl;
			worst_cpu = cpu;
		}
	}
	if (!wakeup)
		return;
	if (!vrq_may_preempt(p->policy, sync_wakeup)) {
		stat_inc(VRQ_STAT_BATCH_NO_PREEMPT);
		return;
	}
	local = bpf_get_smp_processor_id();
	local_ctx = cpu_ctx_of(local);
	if (local_ctx && vrq_preempt_local(preempt_local, bpf_cpumask_test_cpu(local, p->cpus_ptr), priodl,
					   local_ctx->running_priodl)) {
		scx_bpf_kick_cpu(local, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_PREEMPT_KICK);
		stat_inc(VRQ_STAT_PREEMPT_LOCAL);
		return;
	}
	if (worst_cpu >= 0 && vrq_should_preempt(priodl, worst_priodl)) {
		scx_bpf_kick_cpu(worst_cpu, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_PREEMPT_KICK);
	}
}

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
	sync_wakeup = vrq_take_once(&tctx->sync_wakeup);
	refresh_deadline(p, tctx, q, enq_flags & SCX_ENQ_WAKEUP);
	/*
	 * vrq_task_prio(): the kernel's own work does not wait behind a long queue of user tasks. Set by
	 * a wake-up; a kernel thread requeued with slice left (preempted, or at a cond_resched() in the
	 * middle of its work) keeps it; refresh_deadline() drops it once the slice is used up.
	 */
	if (enq_flags & SCX_ENQ_WAKEUP) {
		tctx->kernel_wakeup = !!(p->flags & PF_KTHREAD);
		if (tctx->kernel_wakeup)
			stat_inc(VRQ_STAT_KERNEL_WAKEUP);
	}
	priodl = task_priodl(p, tctx);
	tctx->enq_at = scx_bpf_now();

	/*
	 * The CPU found nothing better than this task, which it just ran (dispatch compared their
	 * priodl): keep it there with its renewed slice.
	 */
	if (enq_flags & SCX_ENQ_LAST) {
		struct cpu_ctx *cctx = cpu_ctx_of(cpu);

		if (cctx)
			cctx->running_priodl = priodl;
		tctx->sticky_cpu = -1;	/* it never left */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags);
		stat_inc(VRQ_STAT_KEEP_LAST);
		return;
	}

	scx_bpf_dsq_insert_vtime(p, q, tctx->time_slice, priodl, enq_flags);
	/*
	 * Delayed migration (select_cpu placed it on this, the waker's, warm CPU instead of a cold idle
	 * one): wake nobody and preempt nobody. The waker usually sleeps first and runs it here; if not,
	 * the delay check wakes an idle CPU for it.
	 */
	if (tctx->delay_cold >= 0) {
		s32 cold = tctx->delay_cold;

		tctx->delay_cold = -1;
		if (cpu == bpf_get_smp_processor_id()) {
			delay_track(tctx, cpu, cold);
			return;
		}
	}
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

static bool dispatch_starved_idle(s32 cpu, u32 q, u64 now)
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

void BPF_STRUCT_OPS(vrq_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 own = queue_of_cpu(cpu), q, best_q = VRQ_NO_QUEUE, best_dist = VRQ_NR_DIST;
	u64 best_priodl = 0, now = scx_bpf_now();
	u64 sticky_raw = (u64)-1;	/* smallest priodl among the sticky heads counted as later */
	struct task_struct *head;
	bool prev_runnable;

	if ((u32)cpu >= VRQ_MAX_CPUS)
		return;
	refresh_cpu_perf(cpu);

	if (dispatch_starved_idle(cpu, own, now))
		return;

	/*
	 * Earliest priodl among the queue heads this CPU may run, read without taking any queue lock;
	 * ties go to the nearest queue (the search follows the cache-locality order of enum vrq_distance).
	 */
	bpf_for(q, 0, nr_queues) {
		u32 dist, rep;
		u64 key;

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
		/*
		 * BFS sticky: a task another CPU had to leave counts as later anywhere but there, unless
		 * taking it evens out the two queues
		 */
		if (sticky_tasks && q != own) {
			struct task_ctx *hctx = task_ctx_of(head);

			if (hctx && hctx->sticky_cpu >= 0 && queue_of_cpu(hctx->sticky_cpu) == q &&
			    vrq_sticky_holds(scx_bpf_dsq_nr_queued(q), queue_nr_cpus[QUEUE_IDX(q)],
					     scx_bpf_dsq_nr_queued(own), queue_nr_cpus[QUEUE_IDX(own)])) {
				if (key < sticky_raw)
					sticky_raw = key;
				key = vrq_sticky_priodl(key, vrq_sticky_offset(rr_interval_ns));
			}
		}
		rep = queue_rep_cpu[QUEUE_IDX(q)];
		dist = cpu_distance(cpu, rep);
		if (best_q == VRQ_NO_QUEUE || key < best_priodl || (key == best_priodl && dist < best_dist)) {
			best_q = q;
			best_priodl = key;
			best_dist = dist;
		}
	}

	/*
	 * The task that just ran is not in any queue yet: it competes with the heads by its own
	 * (renewed, if its slice is used up) priodl. If it wins, dispatch nothing; the kernel then hands
	 * it back through enqueue(SCX_ENQ_LAST), which keeps it on this CPU.
	 */
	prev_runnable = prev && (prev->scx.flags & SCX_TASK_QUEUED);
	if (prev_runnable && bpf_cpumask_test_cpu(cpu, prev->cpus_ptr)) {
		struct task_ctx *pctx = task_ctx_of(prev);

		if (pctx) {
			u64 prev_priodl;

			/*
			 * Charge its run first: a slice the slice timer ended is used up only once charged
			 * (otherwise only the tick charges), and an uncharged one would keep its old deadline
			 * and win again until the next tick.
			 */
			charge_slice(pctx, scx_bpf_now());
			refresh_deadline(prev, pctx, own, false);
			prev_priodl = task_priodl(prev, pctx);
			if (best_q == VRQ_NO_QUEUE || prev_priodl <= best_priodl) {
				if (sticky_raw < prev_priodl)
					stat_inc(VRQ_STAT_STICKY_PASSED);
				return;
			}
		}
	}
	if (best_q != VRQ_NO_QUEUE && sticky_raw < best_priodl)
		stat_inc(VRQ_STAT_STICKY_PASSED);

	if (best_q != VRQ_NO_QUEUE) {
		struct vrq_queue *vq = queue_state(best_q);
		u64 depth = scx_bpf_dsq_nr_queued(best_q);

		vq->nr_queued = depth;
		if (depth > vq->max_queued)
			vq->max_queued = depth;
		/* the upgrade: only now take the chosen queue's lock, to move its first runnable task here */
		if (scx_bpf_dsq_move_to_local(best_q, 0)) {
			stat_inc(best_q == own ? VRQ_STAT_DISPATCH_LOCAL : VRQ_STAT_DISPATCH_STEAL);
			return;
		}
		if (best_q != own) {
			stat_inc(VRQ_STAT_STEAL_FAIL);
			if (scx_bpf_dsq_move_to_local(own, 0)) {
				stat_inc(VRQ_STAT_DISPATCH_LOCAL);
				return;
			}
		}
	}

	/* Nothing to run here: say why (VRQ's sched_goidle breakdown). */
	if (!prev)
		stat_inc(VRQ_STAT_GOIDLE_IDLE);
	else if (!prev_runnable)
		stat_inc(VRQ_STAT_GOIDLE_BLOCKED);
	else if (!bpf_cpumask_test_cpu(cpu, prev->cpus_ptr))
		stat_inc(VRQ_STAT_GOIDLE_NEEDOTHER);
}

/* The slice of the run it was armed for is over: make that CPU reschedule, if it is still that run. */
static int slice_timer_fired(void *map, int *key, struct slice_timer *t)
{
	struct cpu_ctx *cctx = cpu_ctx_of(*key);

	if (cctx && cctx->timer_seq == cctx->run_seq) {
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
	slice = task_slice(p, q, clock_rate, NULL);
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

void BPF_STRUCT_OPS(vrq_running, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	u32 q = queue_of_cpu(cpu);

	if (!tctx)
		return;
	/* a task taken from another queue now lives on this CPU's clock */
	if (tctx->queue != q)
		refresh_deadline(p, tctx, q, false);
	tctx->last_charged = scx_bpf_now();
#if VRQ_LAT_HIST
	if (tctx->wait_since)
		lat_record(p, tctx->wait_requeue, tctx->wait_since, tctx->last_charged);
	tctx->wait_since = 0;
	tctx->run_since = tctx->last_charged;
#endif
	tctx->sync_wakeup = 0;		/* that wake-up is over, enqueued or not */
	if (tctx->sticky_cpu >= 0) {
		stat_inc(tctx->sticky_cpu == cpu ? VRQ_STAT_STICKY_KEPT : VRQ_STAT_STICKY_STOLEN);
		tctx->sticky_cpu = -1;
	}
	if (tctx->delay_cpu >= 0) {
		struct cpu_ctx *wctx = cpu_ctx_of(tctx->delay_cpu);

		/*
		 * Same generation: its delay has not run out yet. (Racing the tick's reset can leave the
		 * count one off for a moment; it only decides whether an expiry wakes an idle CPU, and a
		 * task it misses still runs from its queue like any other.)
		 */
		if (wctx && wctx->delay_gen == tctx->delay_gen) {
			__sync_fetch_and_sub(&wctx->delay_pending, 1);
			stat_inc(VRQ_STAT_DELAY_RAN_BEFORE);
		}
		tctx->delay_cpu = -1;
	}
	if (cctx) {
		start_run(p, tctx, cpu, cctx, q);
		cctx->running_priodl = task_priodl(p, tctx);
	}
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

void BPF_STRUCT_OPS(vrq_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	u64 now = scx_bpf_now();

	if (target_latency_ns)
		clock_update(now);
	queue_niffies(queue_of_cpu(cpu));
	if (tctx)
		charge_slice(tctx, now);
	refresh_cpu_perf(cpu);
	if (migration_delay_ns && cctx && cctx->delay_pending > 0 &&
	    vrq_delay_expired(cctx->delay_first_at, now, migration_delay_ns))
		delay_expired(cpu);

	/*
	 * The slice ran out (the kernel reschedules when it reads 0 after this callback) but nothing
	 * waits anywhere: renew it here, with the new deadline BFS would give, instead of a trip
	 * through schedule() and dispatch that can only pick this task again (keep_last).
	 */
	if (tctx && p->scx.slice == 0 && !anything_waiting()) {
		refresh_deadline(p, tctx, queue_of_cpu(cpu), false);
		p->scx.slice = tctx->time_slice > 0 ? tctx->time_slice : rr_interval_ns;
		if (cctx)
			cctx->running_priodl = task_priodl(p, tctx);
		stat_inc(VRQ_STAT_SLICE_RENEWED);
	}
}

void BPF_STRUCT_OPS(vrq_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx_of(p);
	struct cpu_ctx *cctx = cpu_ctx_of(scx_bpf_task_cpu(p));

	if (tctx) {
		u64 now = scx_bpf_now();

		charge_slice(tctx, now);
#if VRQ_LAT_HIST
		if (tctx->run_since)
			lat_record(p, 2, tctx->run_since, now);
		tctx->run_since = 0;
		/* still runnable: it waits from now until it runs again */
		tctx->wait_since = runnable ? now : 0;
		tctx->wait_requeue = 1;
#endif
		/*
		 * Going to sleep with its slice used up: the new deadline counts from now, as BFS renews it
		 * when the slice ends, not from the wake-up to come -- renewed then, a task that sleeps often
		 * would come back once per slice with the latest deadline of all and wait behind every hog.
		 */
		if (!runnable && tctx->queue != VRQ_NO_QUEUE)
			refresh_deadline(p, tctx, tctx->queue, false);
		/* BFS sticky: it leaves this CPU involuntarily (preempted or out of slice), not by yielding */
		if (sticky_tasks && runnable && !tctx->yielded) {
			tctx->sticky_cpu = scx_bpf_task_cpu(p);
			stat_inc(VRQ_STAT_STICKY_SET);
		}
		tctx->yielded = 0;
	}
	if (cctx)
		cctx->running_priodl = 0;
}

/*
 * sched_yield() (BFS yield_type, policy.h). Giving up the CPU is zeroing the kernel's slice: the CPU
 * then dispatches, where the caller competes by its priodl like any task that just ran. Expiring also
 * uses up our own slice, so that competition starts from a new deadline. yield_to() (@to set) is not
 * supported: nothing is done and false tells the kernel so.
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
 * A task becomes runnable (woken, or new): its wake-up wait starts (latency histograms); with group
 * accounting, count the group's runnable tasks while this one is runnable.
 */
void BPF_STRUCT_OPS(vrq_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;
	s64 one = 1, *n;
	u32 group;

	if (!(tctx = task_ctx_of(p)))
		return;
#if VRQ_LAT_HIST
	/*
	 * Only if no wait is under way, and as a requeued wait for the running task: runnable also
	 * follows a change of a task's nice or affinity (dequeued and queued again), which continues the
	 * wait of a waiting task, and for the running task comes between a stopping() and a running()
	 * -- no wake-up. (Every run still follows one recorded wait.)
	 */
	if (!tctx->wait_since) {
		tctx->wait_since = scx_bpf_now();
		tctx->wait_requeue = scx_bpf_task_running(p);
	}
#endif
	if (group_mode == VRQ_GROUP_OFF)
		return;
	group = group_of(p);
	tctx->group = group;
	if (!group)
		return;
	n = bpf_map_lookup_elem(&group_runnable, &group);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	/* first runnable task of the group; if another CPU created the entry meanwhile, count on it */
	if (bpf_map_update_elem(&group_runnable, &group, &one, BPF_NOEXIST) &&
	    (n = bpf_map_lookup_elem(&group_runnable, &group)))
		__sync_fetch_and_add(n, 1);
}

void BPF_STRUCT_OPS(vrq_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx;
	s64 *n;

	if (group_mode == VRQ_GROUP_OFF || !(tctx = task_ctx_of(p)) || !tctx->group)
		return;
	n = bpf_map_lookup_elem(&group_runnable, &tctx->group);
	if (n && *n > 0)
		__sync_fetch_and_sub(n, 1);
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
	tctx->delay_cpu = -1;
	tctx->delay_cold = -1;
	tctx->sticky_cpu = -1;
	return 0;
}

/* Build a cpumask of the CPUs within @level of @cpu (VRQ_NR_DIST: all, above: none) into *@slot. */
static s32 build_level_mask(u32 cpu, u32 level, struct bpf_cpumask __kptr **slot)
{
	struct bpf_cpumask *mask, *old;
	u32 other;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	bpf_for(other, 0, nr_cpus) {
		if (other >= VRQ_MAX_CPUS || cpu >= VRQ_MAX_CPUS)
			break;
		if (level == VRQ_NR_DIST ||
		    (level < VRQ_NR_DIST && cpu_distance(cpu, other) <= level))
			bpf_cpumask_set_cpu(other, mask);
	}
	old = bpf_kptr_xchg(slot, mask);
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

/* Every CPU starts as non-scaled; each corrects its own bit when it next ticks or looks for work. */
static s32 init_perf_masks(void)
{
	struct perf_masks *pm;
	u32 zero = 0;
	s32 err;

	if (!freq_threshold_pct)
		return 0;
	if (!(pm = bpf_map_lookup_elem(&perf_masks, &zero)))
		return -ENOENT;
	if ((err = build_level_mask(0, VRQ_NR_DIST, &pm->fast)))
		return err;
	return build_level_mask(0, VRQ_NR_DIST + 1, &pm->scaled);	/* no level: empty */
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

s32 BPF_STRUCT_OPS_SLEEPABLE(vrq_init)
{
	u32 cpu, q;
	s32 err;

	if (nr_cpus > VRQ_MAX_CPUS || nr_cpus > scx_bpf_nr_cpu_ids()) {
		scx_bpf_error("nr_cpus %u out of range", nr_cpus);
		return -EINVAL;
	}

	/* Which queue each CPU uses; queue ids are dense from 0 (the loader numbers LLCs densely). */
	nr_queues = 0;
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= VRQ_MAX_CPUS)
			break;
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
		if (q + 1 > nr_queues)
			nr_queues = q + 1;
	}

	bpf_for(q, 0, nr_queues) {
		err = scx_bpf_create_dsq(q, -1);
		if (err) {
			scx_bpf_error("failed to create queue %u: %d", q, err);
			return err;
		}
	}

	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx = cpu_ctx_of(cpu);

		if (!cctx)
			return -ENOENT;
		if ((err = build_level_mask(cpu, VRQ_DIST_SMT, &cctx->smt)) ||
		    (err = build_level_mask(cpu, VRQ_DIST_LLC, &cctx->llc)) ||
		    (err = build_level_mask(cpu, VRQ_DIST_PKG, &cctx->pkg)) ||
		    (err = build_level_mask(cpu, VRQ_DIST_NODE, &cctx->node)) ||
		    (err = build_level_mask(cpu, VRQ_NR_DIST, &cctx->tmp)))
			return err;
	}
	if ((err = init_perf_masks()) || (err = init_slice_timers()))
		return err;
	return 0;
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
	       .init		= (void *)vrq_init,
	       .exit		= (void *)vrq_exit,
	       .timeout_ms	= VRQ_WATCHDOG_MS,
	       .name		= "vrq");
