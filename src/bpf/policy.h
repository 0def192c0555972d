/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq policy: every scheduling rule as a small pure function, compiled both into the BPF scheduler
 * and into the host tests (tests/policy_test.c), so the code that is tested is the code that runs.
 *
 * Where to find what:
 *   - the deadline formula ............ vrq_prio_ratio(), vrq_deadline(); when: vrq_should_renew()
 *   - priodl .......................... vrq_priodl()
 *   - task priority classes ........... vrq_task_prio() (kernel threads' wake-ups first)
 *   - keeping the CPU, preemption ..... vrq_keeps_cpu(), vrq_may_preempt(), vrq_should_preempt(),
 *                                        vrq_preempt_local()
 *   - select_cpu -> enqueue hand-off .. vrq_take_once()
 *   - slice under long queues ......... vrq_effective_slice() (the floor that gives way), vrq_task_slice()
 *   - CPU-selection / locality order .. vrq_select_step() (VRQ's best_mask_cpu, frequency-aware),
 *                                        vrq_cpu_distance(), enum vrq_distance in intf.h
 *   - what counts as frequency-scaled . vrq_cpu_scaled() (--freq-threshold)
 *   - delayed migration ............... vrq_delay_placement(), vrq_delay_expired() (has the delay run
 *                                        out? delay.bpf.c's end_delay() acts on it)
 *   - sticky tasks (BFS) .............. vrq_becomes_sticky(), vrq_sticky_offset(), vrq_sticky_queue_offset(),
 *                                        vrq_sticky_priodl(), vrq_sticky_holds()
 *   - run-queue sharing ............... vrq_queue_of()
 *   - niffies carry-over .............. vrq_rebase_deadline()
 *   - sched_yield (BFS yield_type) .... vrq_yield_gives_up_cpu(), vrq_yield_expires_slice()
 *   - group accounting (BFS) .......... vrq_group_deadline(), vrq_group_multiplier()
 *   - cgroup weights .................. vrq_cgroup_child_share(), vrq_cgroup_stretch(), vrq_cgroup_turn(),
 *                                        vrq_cgroup_vtime_delta(), vrq_cgroup_lag(), vrq_cgroup_vtime_floor()
 *   - fork-depth penalty (BFS) ........ vrq_fork_depth_multiplier()
 *   - latency histograms .............. vrq_hist_bucket(), vrq_lat_class()
 */
#ifndef __VRQ_POLICY_H
#define __VRQ_POLICY_H

#include "intf.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * Priorities, BFS numbering (lower runs first). sched_ext only sees SCHED_NORMAL/BATCH/IDLE tasks
 * (real-time tasks belong to a higher kernel class), so only these are used, plus one of our own for
 * kernel threads just woken (vrq_task_prio).
 */
enum vrq_prio {
	VRQ_PRIO_KERNEL	= 100,	/* a kernel thread just woken, until it sleeps or uses up its slice */
	VRQ_PRIO_NORMAL	= 101,	/* SCHED_NORMAL and SCHED_BATCH */
	VRQ_PRIO_SCHED_IDLE = 102,	/* SCHED_IDLE: after every normal task */
};

enum vrq_policy {		/* the kernel's values of task_struct::policy */
	VRQ_SCHED_NORMAL	= 0,
	VRQ_SCHED_BATCH		= 3,
	VRQ_SCHED_IDLE		= 5,
};

enum vrq_policy_consts {
	VRQ_NICE_MIN		= -20,
	VRQ_NICE_MAX		= 19,
	VRQ_PRIO_RATIO_BASE	= 128,	/* prio_ratio(nice -20); one rr_interval of deadline offset */
	VRQ_PRIODL_PRIO_SHIFT	= 56,
	VRQ_PRIODL_DL_SHIFT	= 8,
};

/*
 * BFS prio_ratios: 128 at nice -20, each next nice level 10% more (integer arithmetic as BFS does),
 * 836 at nice 0, 5089 at nice 19. Out-of-range nice values are clamped.
 */
static __always_inline u64 vrq_prio_ratio(s32 nice)
{
	u64 ratio = VRQ_PRIO_RATIO_BASE;
	s32 level, i;

	if (nice < VRQ_NICE_MIN)
		nice = VRQ_NICE_MIN;
	if (nice > VRQ_NICE_MAX)
		nice = VRQ_NICE_MAX;
	level = nice - VRQ_NICE_MIN;
	for (i = 0; i < VRQ_NICE_MAX - VRQ_NICE_MIN; i++) {
		if (i >= level)
			break;
		ratio = ratio * 11 / 10;
	}
	return ratio;
}

/*
 * The virtual deadline (BFS): deadline = niffies + prio_ratio(nice) * slice / 128. Nice changes only
 * this offset; every task gets the same slice. @slice_ns is rr_interval, or the shortened slice used
 * while a queue is very long (vrq_effective_slice), so that nice keeps the same relative effect.
 */
static __always_inline u64 vrq_deadline(u64 niffies, s32 nice, u64 slice_ns)
{
	return niffies + vrq_prio_ratio(nice) * slice_ns / VRQ_PRIO_RATIO_BASE;
}

/*
 * Group accounting (BFS's group-accounting experiment): the tasks of one group share one entity's
 * CPU: each task's deadline offset is multiplied by its group's multiplier (fixed point,
 * VRQ_GROUP_LOAD_ONE is 1), about the number of runnable tasks in its group, so a group of N runnable
 * tasks gets about what one task would. Nice still applies within and across groups. The multiplier is
 * capped so that a huge group cannot overflow the deadline (it is already last in line by then).
 */
#define VRQ_GROUP_MAX_MULTIPLIER 4096
#define VRQ_GROUP_LOAD_ONE 1024ULL
/*
 * The longest a multiplier may stretch an offset to (a quarter of the watchdog). A task waits for at
 * most about its own offset while tasks renewing with shorter ones go ahead of it; tasks renewing at
 * different multipliers (a session's count weighed in by other sessions that come and go; the fork-depth
 * penalty on top) then leave the stretched ones waiting their whole offset. Uncapped, ~100 runnable
 * tasks of one session, their count times their fork depth, had offsets of ~14 s; one waited 10.1 s: the
 * watchdog ejected the scheduler (tools/test, topology suite, every switch on under the CI stress). At
 * 39 ms a task at nice 0, the cap holds from 64 runnable tasks of one session beside another on.
 * An offset longer without any multiplier (nice 19 at a long --rr-interval-ms) stays as BFS has it.
 */
#define VRQ_STRETCH_MAX_NS ((u64)VRQ_WATCHDOG_MS * VRQ_NSEC_PER_MSEC / 4)

static __always_inline u64 vrq_group_deadline(u64 niffies, s32 nice, u64 slice_ns, u64 multiplier)
{
	u64 offset = vrq_prio_ratio(nice) * slice_ns / VRQ_PRIO_RATIO_BASE, stretched;

	if (multiplier > VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE)
		multiplier = VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE;
	/* offset < 2^36 (prio_ratio / 128 < 40 at nice 19, a slice <= 1 s < 2^30 ns), multiplier <= 2^22 */
	stretched = offset * multiplier / VRQ_GROUP_LOAD_ONE;
	if (multiplier > VRQ_GROUP_LOAD_ONE && stretched > VRQ_STRETCH_MAX_NS)
		stretched = offset > VRQ_STRETCH_MAX_NS ? offset : VRQ_STRETCH_MAX_NS;
	return niffies + stretched;
}

/*
 * The group's runnable count is averaged over the last @tau_ns or so, not taken at the moment of
 * renewal: a request/worker process whose 5 threads are runnable 2 to 5 at a time gave one thread an
 * offset of 2 x rr_interval and the next one 5 x, ordering the group's own threads by when they
 * happened to renew, and its request latency's tail grew (docs/experiments.md). Averaged, every thread of a steady
 * group gets about the same multiplier, so the threads keep BFS's order among themselves and the
 * group as a whole competes as one task.
 *
 * vrq_group_level is a count in the averages' fixed point (VRQ_GROUP_LOAD_ONE per task), capped;
 * vrq_group_avg_toward moves an average toward a level over a time, so that a group idle for tau
 * starts again from its count alone. The same average serves the count of all grouped tasks.
 */
static __always_inline u64 vrq_group_level(s64 nr)
{
	return nr > 0 ? (nr > VRQ_GROUP_MAX_MULTIPLIER ? VRQ_GROUP_MAX_MULTIPLIER : (u64)nr) * VRQ_GROUP_LOAD_ONE
		      : 0;
}

/* @avg moved toward @level (both fixed point) by @dt_ns of @tau_ns: all the way after tau or more. */
static __always_inline u64 vrq_group_avg_toward(u64 avg, u64 level, u64 dt_ns, u64 tau_ns)
{
	if (avg > VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE)
		avg = VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE;
	if (!tau_ns || dt_ns >= tau_ns)
		return level;
	if (level >= avg)
		return avg + (level - avg) * dt_ns / tau_ns;
	return avg - (avg - level) * dt_ns / tau_ns;
}

/*
 * A count and its average, kept cheaply: each change adds what the count held since the last one to
 * @acc (one multiply), and the average takes in @acc's mean at most once per VRQ_GROUP_SAMPLES-th of
 * tau (a division or two). A pipe's two tasks wake and sleep every ten microseconds or so: group
 * accounting that advanced three averages at each of those (and read the session with probe-read
 * helpers) slowed a pipe's round trip measurably (docs/experiments.md). Every change still counts, so a count that
 * swings in step with the samples is not mistaken for one of its values.
 *
 * @nr is the count (the caller changes it, atomically where it must); vrq_load_note_change() runs
 * just before each change. Two CPUs noting a change at once can lose one's time: the average is a
 * little off, never the count.
 */
#define VRQ_GROUP_SAMPLES 16

struct vrq_load {
	s64 nr;		/* the count now */
	u64 avg;	/* its average up to @stamp (fixed point, VRQ_GROUP_LOAD_ONE per unit) */
	u64 stamp;	/* when @avg last took in @acc */
	u64 last;	/* when @nr last changed */
	u64 acc;	/* units x ns counted from @stamp to @last */
};

/*
 * What @l's average is at @now, with all it counted since @stamp and the count @count held since @last
 * (vrq_load_avg_at: @l's own nr; a group's slot keeps its count elsewhere, vrq_group_word).
 */
static __always_inline u64 vrq_load_avg_of(const struct vrq_load *l, s64 count, u64 now, u64 tau_ns)
{
	u64 held = (s64)(now - l->last) > 0 ? now - l->last : 0;
	u64 period = (s64)(now - l->stamp) > 0 ? now - l->stamp : 0;
	u64 nr = vrq_group_level(count) / VRQ_GROUP_LOAD_ONE, acc;

	if (!period)
		return l->avg;
	if (held >= tau_ns || period < held)
		return vrq_group_level(count);	/* the count held all of tau (or the stamps raced) */
	/* @period < tau + tau / VRQ_GROUP_SAMPLES (a change past the sample folds @acc in), so
	 * @acc < 2^12 x 2^31 ns: the product with the fixed point's 2^10 fits */
	acc = l->acc + nr * held;
	return vrq_group_avg_toward(l->avg, acc * VRQ_GROUP_LOAD_ONE / period, period, tau_ns);
}

static __always_inline u64 vrq_load_avg_at(const struct vrq_load *l, u64 now, u64 tau_ns)
{
	return vrq_load_avg_of(l, l->nr, now, tau_ns);
}

/* @l's count, @count until now, is about to change at @now: count the time it held, and take that into
 * the average when a sample is due (vrq_load_note_change: @l's own nr). */
static __always_inline void vrq_load_note_of(struct vrq_load *l, s64 count, u64 now, u64 tau_ns)
{
	u64 held = (s64)(now - l->last) > 0 ? now - l->last : 0;

	if (held >= tau_ns || (s64)(now - l->stamp) < 0 || l->last < l->stamp) {
		l->avg = vrq_group_level(count);
		l->acc = 0;
		l->stamp = l->last = now;
		return;
	}
	if (now - l->stamp >= tau_ns / VRQ_GROUP_SAMPLES) {
		l->avg = vrq_load_avg_of(l, count, now, tau_ns);
		l->acc = 0;
		l->stamp = l->last = now;
		return;
	}
	l->acc += vrq_group_level(count) / VRQ_GROUP_LOAD_ONE * held;
	l->last = now;
}

static __always_inline void vrq_load_note_change(struct vrq_load *l, u64 now, u64 tau_ns)
{
	vrq_load_note_of(l, l->nr, now, tau_ns);
}

/*
 * A group's slot (groups.bpf.c, group_slots): the group that owns it and its runnable count in one
 * 64-bit word, owner << 32 | count, so that one compare-and-swap both checks the owner and changes the
 * count: a slot whose count is 0 may be taken by another group, and a task counting in a slot can
 * never race such a takeover. Each task remembers the slot it counted in and finds it there at its
 * next wake-up (one array load, where a hash lookup hashes and walks a bucket); a group claims a slot
 * among VRQ_GROUP_PROBES from its home (vrq_group_probe), the first it owns, else the first idle one.
 */
#define VRQ_GROUP_SLOTS_SHIFT 14
#define VRQ_GROUP_SLOTS (1U << VRQ_GROUP_SLOTS_SHIFT)
#define VRQ_GROUP_PROBES 8

static __always_inline u64 vrq_group_word(u32 owner, u32 count)
{
	return (u64)owner << 32 | count;
}

static __always_inline u32 vrq_group_word_owner(u64 word)
{
	return word >> 32;
}

static __always_inline u32 vrq_group_word_count(u64 word)
{
	return (u32)word;
}

/* The @i-th slot @group may claim: linear from a multiplicative hash of the id (session ids and tgids
 * are pids, close together: the hash spreads them). */
static __always_inline u32 vrq_group_probe(u32 group, u32 i)
{
	return (((group * 2654435761U) >> (32 - VRQ_GROUP_SLOTS_SHIFT)) + i) & (VRQ_GROUP_SLOTS - 1);
}

/*
 * A slot's word @word with one more runnable task of @group: its count + 1 when @group owns it, or
 * (@claim) @group's first when no task counts in it (an idle group's slot is taken over); 0 when @group
 * cannot count there (another group's tasks do).
 */
static __always_inline u64 vrq_group_word_inc(u64 word, u32 group, int claim)
{
	if (vrq_group_word_owner(word) == group)
		return word + 1;
	if (claim && !vrq_group_word_count(word))
		return vrq_group_word(group, 1);
	return 0;
}

/* A slot's word @before became @after (vrq_group_word_inc): @group took it over from another group, whose
 * averages it must not inherit. */
static __always_inline int vrq_group_word_taken_over(u64 before, u32 group)
{
	return vrq_group_word_owner(before) != group;
}

/*
 * The multiplier of a group whose runnable count averages @group_avg, with @tasks_avg runnable in all
 * groups together: the group's count (at least 1), weighed in as the other groups' count grows to one
 * task -- 1 + (count - 1) x min(others, 1). Beside another busy group, N runnable tasks share one
 * task's turn. Alone, or beside a stray wake-up of another session, the group keeps BFS's order:
 * hackbench's single group, runnable from a handful to 160 within a few rr_intervals, ran slower
 * with its count as the multiplier than without accounting, because the count swings faster than
 * any average and mixes the group's own threads' offsets (docs/experiments.md).
 *
 * Not relative to the mean group: a task's turn comes once per slice plus offset, and a small group
 * cannot get a turn shorter than its slice, so only a larger multiplier for the larger group moves the
 * shares: a hog beside 32 tasks of one session got 0.22 of a CPU with multipliers 2.4 and 0.07.
 */
static __always_inline u64 vrq_group_multiplier(u64 group_avg, u64 tasks_avg)
{
	u64 others = tasks_avg > group_avg ? tasks_avg - group_avg : 0;

	if (group_avg < VRQ_GROUP_LOAD_ONE)
		group_avg = VRQ_GROUP_LOAD_ONE;
	if (group_avg > VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE)
		group_avg = VRQ_GROUP_MAX_MULTIPLIER * VRQ_GROUP_LOAD_ONE;
	if (others > VRQ_GROUP_LOAD_ONE)
		others = VRQ_GROUP_LOAD_ONE;
	/* (group_avg - ONE) < 2^22, others <= 2^10: the product fits */
	return VRQ_GROUP_LOAD_ONE + (group_avg - VRQ_GROUP_LOAD_ONE) * others / VRQ_GROUP_LOAD_ONE;
}

/* A multiplier counts as stretching the offset (stats: group_stretched) from 1.5 up: smaller ones are
 * a group nearly alone, about BFS's order. */
#define VRQ_GROUP_STRETCHED_MIN (VRQ_GROUP_LOAD_ONE * 3 / 2)

/*
 * cgroup CPU weights (--group-accounting cgroup): cgroup v2's cpu.weight, along the tree. A cgroup's
 * share of the machine is the product, over it and its ancestors, of its weight over the weights of
 * its siblings that have runnable tasks (the kernel's hierarchical weight; the root's share is
 * VRQ_CGROUP_SHARE_ONE). A task's deadline offset is BFS's own (nice, fork depth) plus two terms:
 * - the stretch: one turn (the slice, rr_interval) for each runnable task of its cgroup, over the
 *   CPUs the cgroup's share is worth (n x turn / (CPUs x share)): the time the cgroup's tasks take to
 *   get one turn each at its share. With deadlines renewed once a turn, a cgroup whose tasks are due
 *   that much later gets about its share of the turns, however many tasks it has (a nice-0 offset,
 *   BFS's ~6.7 rr_intervals, in place of the turn gave 1:10 for 1:3 in the guest);
 * - the lag: each cgroup keeps a virtual time, its CPU use over its share (vrq_cgroup_vtime_delta); a
 *   cgroup behind the furthest one has its deadlines brought earlier by as much, up to
 *   VRQ_CGROUP_LAG_MAX_NS, which corrects what the stretch leaves (turns cut short by wake-ups,
 *   cgroups coming and going). A cgroup that comes back from idle starts at most one rr_interval
 *   behind: sleeping earns no credit. The bound (250 ms) is twice the simulator's: in the guest the
 *   stretch of 6 ms turns alone fell well short of the weights' ratios, and half this lag still short
 *   (docs/measured.md).
 * Designed on the host (tests/cgroup_sim.c, "hyb6-120", where a weighted version of the group
 * multiplier missed the weights' ratio by far); docs/design.md, "cgroup weights".
 */
#define VRQ_CGROUP_SHARE_ONE (1ULL << 20)
#define VRQ_CGROUP_WEIGHT_DFL 100
#define VRQ_CGROUP_WEIGHT_MAX 10000
#define VRQ_CGROUP_LAG_MAX_NS (250ULL * VRQ_NSEC_PER_MSEC)
#define VRQ_CGROUP_DEPTH_MAX 16		/* levels walked from a task's cgroup up to the root */

/*
 * The share of a cgroup of weight @weight whose parent has share @parent_share and whose active
 * siblings' weights (its own included, when it is active) sum to @active_weight. Never 0; a sum below
 * its own weight (the cgroup was not counted yet) counts as its own weight.
 */
static __always_inline u64 vrq_cgroup_child_share(u64 parent_share, u64 weight, u64 active_weight)
{
	u64 share;

	if (weight < 1)
		weight = 1;
	if (weight > VRQ_CGROUP_WEIGHT_MAX)
		weight = VRQ_CGROUP_WEIGHT_MAX;
	if (active_weight < weight)
		active_weight = weight;
	if (parent_share > VRQ_CGROUP_SHARE_ONE)
		parent_share = VRQ_CGROUP_SHARE_ONE;
	/* parent_share <= 2^20, weight <= 10^4 < 2^14: the product fits */
	share = parent_share * weight / active_weight;
	return share ? share : 1;
}

/*
 * The stretch of a task whose cgroup has @nr_runnable runnable tasks and share @share, on @nr_cpus
 * CPUs, for a turn of @offset_ns: @nr_runnable x @offset_ns / (@nr_cpus x share), capped at
 * VRQ_STRETCH_MAX_NS like every stretched deadline (a cgroup that far behind is last in line anyway,
 * and the lag term still brings it forward).
 */
static __always_inline u64 vrq_cgroup_stretch(u64 offset_ns, u64 nr_runnable, u32 nr_cpus, u64 share)
{
	u64 per_cpu;

	if (nr_runnable < 1)
		nr_runnable = 1;
	if (nr_runnable > VRQ_GROUP_MAX_MULTIPLIER)
		nr_runnable = VRQ_GROUP_MAX_MULTIPLIER;
	if (nr_cpus < 1)
		nr_cpus = 1;
	if (share < 1)
		share = 1;
	if (share > VRQ_CGROUP_SHARE_ONE)
		share = VRQ_CGROUP_SHARE_ONE;
	if (offset_ns > VRQ_STRETCH_MAX_NS)
		offset_ns = VRQ_STRETCH_MAX_NS;
	/* offset <= 2.5e9 < 2^32, nr <= 2^12: per_cpu < 2^44; times 2^20 would not fit, so divide first
	 * by the share where the share is small */
	per_cpu = offset_ns * nr_runnable / nr_cpus;
	if (per_cpu / share > VRQ_STRETCH_MAX_NS / VRQ_CGROUP_SHARE_ONE)
		return VRQ_STRETCH_MAX_NS;
	return per_cpu * VRQ_CGROUP_SHARE_ONE / share;
}

/*
 * The turn a task gets for a slice of @slice_ns, in the queues' clock time (@clock_slice_ns, the slice
 * at the clock's rate: vrq_clock_slice): sched_ext sees a slice end only at the tick (@tick_ns), so a
 * slice of a tick or more lasts until the tick after it ends -- rr_interval 6 ms on a 4 ms tick is an
 * 8 ms turn (shorter slices are ended by the slice timer). The cgroup stretch counts turns.
 */
static __always_inline u64 vrq_cgroup_turn(u64 clock_slice_ns, u64 slice_ns, u64 tick_ns)
{
	u64 ticks;

	if (!tick_ns || !slice_ns || slice_ns < tick_ns)
		return clock_slice_ns;
	ticks = (slice_ns + tick_ns - 1) / tick_ns;
	/* clock slice <= 2^32 ns, ticks x tick < 2^33: the product fits */
	return clock_slice_ns * (ticks * tick_ns) / slice_ns;
}

/* How far a cgroup's virtual time moves for @ran_ns of CPU at share @share on @nr_cpus CPUs. */
static __always_inline u64 vrq_cgroup_vtime_delta(u64 ran_ns, u32 nr_cpus, u64 share)
{
	if (nr_cpus < 1)
		nr_cpus = 1;
	if (share < 1)
		share = 1;
	if (ran_ns > VRQ_STRETCH_MAX_NS)
		ran_ns = VRQ_STRETCH_MAX_NS;	/* one charge covers at most a tick or a turn */
	/* ran < 2^32, 2^20: fits */
	return ran_ns * VRQ_CGROUP_SHARE_ONE / ((u64)nr_cpus * share);
}

/*
 * How much earlier a cgroup at virtual time @vtime has its deadlines, with the furthest cgroup at
 * @vtime_max: the gap, at most @lag_max_ns.
 */
static __always_inline u64 vrq_cgroup_lag(u64 vtime, u64 vtime_max, u64 lag_max_ns)
{
	u64 gap = vtime_max > vtime ? vtime_max - vtime : 0;

	return gap > lag_max_ns ? lag_max_ns : gap;
}

/*
 * The virtual time a cgroup resumes from: never more than @behind_ns behind the furthest (an idle
 * cgroup comes back rr_interval behind; a competing one at most VRQ_CGROUP_LAG_MAX_NS).
 */
static __always_inline u64 vrq_cgroup_vtime_floor(u64 vtime, u64 vtime_max, u64 behind_ns)
{
	if (vtime_max > behind_ns && vtime < vtime_max - behind_ns)
		return vtime_max - behind_ns;
	return vtime;
}

/*
 * Fork-depth penalty (BFS's group-accounting experiment, "hierarchical tree-based penalty"): the deeper
 * a task was forked from init, the later its deadline -- the offset is multiplied by its depth (init's
 * children are depth 1). A build's compilers (make -> sh -> cc, several levels below the shell) then
 * yield to the shell's direct children. Capped like the group multiplier; combined with it by
 * multiplication.
 */
#define VRQ_FORK_DEPTH_MAX 64

static __always_inline u64 vrq_fork_depth_multiplier(u32 depth)
{
	if (depth < 1)
		return 1;
	return depth > VRQ_FORK_DEPTH_MAX ? VRQ_FORK_DEPTH_MAX : depth;
}

/*
 * priodl (VRQ): 8-bit priority over the top 56 bits of the deadline in one u64, so one unsigned
 * compare orders (priority, deadline). It is also the DSQ vtime key: all keys of live tasks lie within
 * 2^58 of each other, far inside the 2^63 window in which the kernel's vtime comparison is exact.
 */
static __always_inline u64 vrq_priodl(u32 prio, u64 deadline)
{
	return ((u64)(prio & 0xff) << VRQ_PRIODL_PRIO_SHIFT) | (deadline >> VRQ_PRIODL_DL_SHIFT);
}

static __always_inline u32 vrq_priodl_prio(u64 priodl)
{
	return (u32)(priodl >> VRQ_PRIODL_PRIO_SHIFT);
}

/*
 * SCHED_IDLE runs after every normal task, except while it holds resources others may wait on (it is
 * exiting): then it runs as normal, as BFS's idleprio does.
 *
 * A kernel thread just woken runs before user tasks until it sleeps again or has used up its slice
 * (not BFS: BFS has no watchdog). The kernel's own work -- softirqs, RCU, writeback, and sched_ext's
 * watchdog work item, which must run within half the watchdog timeout or the scheduler is ejected --
 * must not wait a whole round of a long queue (100,000 runnable threads: 5 s). That includes a kernel
 * thread preempted, or descheduled at a cond_resched(), part-way through its slice: the watchdog item
 * walks every runnable task and reschedules between CPUs. A kernel thread that keeps running competes
 * as a normal task from its next slice on, so the kernel cannot crowd out user tasks through this.
 */
static __always_inline u32 vrq_task_prio(u32 policy, int exiting, int kernel_wakeup)
{
	if (kernel_wakeup)
		return VRQ_PRIO_KERNEL;
	if (policy == VRQ_SCHED_IDLE && !exiting)
		return VRQ_PRIO_SCHED_IDLE;
	return VRQ_PRIO_NORMAL;
}

/*
 * A one-shot fact select_cpu() hands to the enqueue() of the same wake-up (a sync wake-up). Reading it
 * clears it: select_cpu() is skipped for a task allowed on one CPU only, and for such a wake-up
 * enqueue() must read "not sync", not what an earlier wake-up left behind.
 */
static __always_inline int vrq_take_once(u8 *flag)
{
	int v = *flag;

	*flag = 0;
	return v;
}

/*
 * A wake-up that preempts nobody (enqueue's sync_wakeup, vrq_may_preempt): a sync one -- the waker is about
 * to sleep and its CPU will be free -- and, with --vfork-handoff, a vfork parent woken at its child's exec
 * (@parent_woken_by_exec: the waker, in execve, wakes its parent from its own context -- the exec's
 * release of the parent's memory ends the vfork): the child was handed the parent's CPU and has just
 * begun its work there (a compile), while the parent only goes on to wait for it. Preempting the child
 * there would send it to the other CPU at its first step; the parent takes the next CPU free instead (an
 * idle one if any, select_cpu's choice).
 */
static __always_inline int vrq_wakeup_spares_waker(int sync_wakeup, int vfork_handoff,
						   int parent_woken_by_exec)
{
	return sync_wakeup || (vfork_handoff && parent_woken_by_exec);
}

/* BFS: SCHED_BATCH never preempts on wake-up; neither does a sync wake-up (the waker is about to sleep). */
static __always_inline int vrq_may_preempt(u32 policy, int sync_wakeup)
{
	return policy != VRQ_SCHED_BATCH && !sync_wakeup;
}

/*
 * BFS try_preempt: preempt the CPU running the largest priodl, only if the waking task's is smaller.
 * @running_priodl is 0 for an idle CPU (handled by the idle path, never preempted).
 */
static __always_inline int vrq_should_preempt(u64 waking_priodl, u64 running_priodl)
{
	return running_priodl && waking_priodl < running_priodl;
}

/*
 * Does the task that just ran keep its CPU (dispatch)? It is in no queue while it runs, so it competes
 * with the best head this CPU could take (@any_head) by its own priodl, refreshed as dispatch does: it
 * keeps the CPU when no head is earlier. A tie keeps it: taking the head would buy nothing but a switch.
 */
static __always_inline int vrq_keeps_cpu(u64 priodl, int any_head, u64 best_head_priodl)
{
	return !any_head || priodl <= best_head_priodl;
}

/*
 * Which CPU a waking task preempts. BFS: the one running the largest priodl. With @prefer_local, the CPU
 * this wake-up is handled on, when the waking task may run there and beats what runs there too: a later
 * task gives way all the same, the CPU reschedules at once instead of after an IPI, and the wakee starts
 * where its waker (or its timer) just ran.
 */
static __always_inline int vrq_preempt_local(int prefer_local, int local_allowed, u64 waking_priodl,
					     u64 local_running_priodl)
{
	return prefer_local && local_allowed && vrq_should_preempt(waking_priodl, local_running_priodl);
}

/*
 * The slice, by how many tasks a queue holds (@nr_queued waiting, beside the @nr_cpus_serving running).
 *
 * Short queues keep rr_interval exactly (BFS). Three rules shorten it as the queue grows:
 *
 * 1. Target latency, as a faster queue clock (@rate, VRQ_RATE_ONE = off; vrq_clock_rate()): while latency
 *    waiters wait (vrq_clock_waiters(): tasks queued again after their turn ran out do not count, short
 *    runners aside -- a build's compilers are already as far along as any rule can take them, and
 *    shortening their turns only adds switches) and they would take longer than the target to each get
 *    rr_interval, the queues' clock runs @rate / VRQ_RATE_ONE times faster than real time and a turn is
 *    rr_interval of that clock: rr_interval * VRQ_RATE_ONE / @rate of real time. Deadline offsets stay
 *    BFS's in clock time (vrq_clock_slice()), so every task's offset is the same however long the queue
 *    was when it got it, and nice keeps its share: under BFS's rule a nice-10 task beside a nice-0 one
 *    gets about slice / (offset difference + slice), a ratio the faster clock leaves alone. (Shorter
 *    turns with offsets kept in real time widened nice's ratio several times over, since it follows the
 *    offset difference relative to the slice; offsets shortened with each turn mixed long offsets given
 *    at quiet moments with short ones given while busy: docs/experiments.md.)
 * 2. Long queues: a fixed rr_interval makes one round of the queue last nr_queued_per_cpu * slice:
 *    10,000 runnable tasks on 2 CPUs at 6 ms is 30 s, past the sched_ext watchdog. While a round would
 *    exceed @max_round_ns the slice shrinks to max_round / nr_queued_per_cpu, never below
 *    @min_slice_ns (a floor for throughput: shorter turns are mostly switching).
 * 3. The floor gives way when it would hold the round past VRQ_SAFE_ROUND_NS (half the watchdog:
 *    100,000 runnable tasks on 2 CPUs at 250 us are a 12.5 s round): the slice becomes
 *    safe_round / per_cpu, down to VRQ_SLICE_TIMER_MIN_NS, the shortest slice the slice timer still
 *    ends as asked. Past that no slice can hold the round: it stays at that minimum and the round grows
 *    with the queue (VRQ_SLICE_ROUND_OVER; the watchdog's other half is the margin left).
 *
 * @why, if not NULL, gets which of these rules gave the slice (enum vrq_slice_rule).
 */
enum vrq_slice_rule {
	VRQ_SLICE_FULL		= 0,	/* rr_interval */
	VRQ_SLICE_TARGET	= 1,	/* shortened by the target latency's faster clock (rule 1) */
	VRQ_SLICE_FIT_ROUND	= 2,	/* shrunk to fit --max-round-ms, or held at --min-slice-us (rule 2) */
	VRQ_SLICE_FLOOR_GAVE_WAY = 3,	/* below --min-slice-us, to keep the round within the safe round */
	VRQ_SLICE_ROUND_OVER	= 4,	/* at VRQ_SLICE_TIMER_MIN_NS and the round still past the safe round */
};

/* Fixed point of the queue clock's rate: VRQ_RATE_ONE is real time. */
#define VRQ_RATE_ONE 1024ULL
/* Runnable tasks per CPU beyond which the turn has long grown back to rr_interval (keeps the products in
 * range). */
#define VRQ_RATE_RUNNABLE_MAX (1ULL << 20)

/*
 * Rule 1's clock rate, from @nr_waiters latency waiters for @nr_cpus CPUs, with r = runnable per CPU:
 *   - r * rr_interval / target while that exceeds 1: the r tasks would take longer than the target to
 *     each get rr_interval, so turns of target / r;
 *   - never turns shorter than @floor_ns (CFS's min_granularity beside its sched_latency): the fastest
 *     rate is rr_interval / floor, reached at r = target / floor, the most latency waiters per CPU the
 *     floor can still serve within the target;
 *   - beyond that the turn grows back by the floor's share for each one more: floor * r / (target /
 *     floor), up to rr_interval again. So many latency waiters are no longer tasks held up behind
 *     a few CPU hogs but the load itself (hackbench's hundreds of senders and receivers), and cutting
 *     their turns only adds switches: with turns held at the floor hackbench ran slower than with
 *     BFS's turns (docs/measured.md, the target latency).
 * VRQ_RATE_ONE when @target_ns is 0 (off), nothing waits, or the floor is rr_interval or longer.
 *
 * vrq_clock_rate_reach() is that rule with the floor's reach set apart from the target: turns hold at
 * @floor_ns while r * floor is within @reach_ns, and grow back only past that, by the floor's share for
 * each one more (floor * r / (reach / floor)). With @reach_ns = @target_ns it is vrq_clock_rate(): past
 * the rate's cap r * floor already exceeds the target, so the turn grows back at once. --hold-floor
 * passes the round target as the latency waiters' reach (vrq_latency_reach).
 */
static __always_inline u64 vrq_clock_rate_reach(u64 rr_ns, u64 target_ns, u64 reach_ns, u64 floor_ns,
						 u64 nr_waiters, u64 nr_cpus)
{
	u64 runnable, rate, cap;

	if (!target_ns || !nr_waiters || !rr_ns || floor_ns >= rr_ns)
		return VRQ_RATE_ONE;
	if (!nr_cpus)
		nr_cpus = 1;
	if (!floor_ns)
		floor_ns = 1;
	if (reach_ns < target_ns)
		reach_ns = target_ns;
	runnable = (nr_waiters + nr_cpus - 1) / nr_cpus + 1;
	if (runnable > VRQ_RATE_RUNNABLE_MAX)
		runnable = VRQ_RATE_RUNNABLE_MAX;
	if (runnable * rr_ns <= target_ns)
		return VRQ_RATE_ONE;
	rate = runnable * (rr_ns * VRQ_RATE_ONE / target_ns);
	cap = rr_ns * VRQ_RATE_ONE / floor_ns;
	/* past the floor's reach: rr/floor * (reach/floor) / r, at most cap (here r * floor > reach) */
	if (rate > cap)
		rate = runnable * floor_ns <= reach_ns ? cap : cap * reach_ns / (floor_ns * runnable);
	return rate < VRQ_RATE_ONE ? VRQ_RATE_ONE : rate;
}

/* The rule as described above: the floor's reach is the target's. */
static __always_inline u64 vrq_clock_rate(u64 rr_ns, u64 target_ns, u64 floor_ns, u64 nr_waiters, u64 nr_cpus)
{
	return vrq_clock_rate_reach(rr_ns, target_ns, target_ns, floor_ns, nr_waiters, nr_cpus);
}

/*
 * --hold-floor: the latency waiters' reach (vrq_clock_rate_reach), the most of them per CPU whose turns
 * hold at the floor. Without it the target latency's own, target / floor per CPU: past that, turns grow
 * back, and a few latency waiters more per CPU -- request workers, handed their next request while
 * preempted by the message thread they woke -- already get turns as long as a whole request, so that a
 * worker handed one waits a round of the others' whole requests, as long as the round target allows.
 * With it the round target's reach, round target / floor per CPU: latency waiters' turns hold at the
 * floor until a round at the floor would pass the round target, and grow back past that as the round
 * target's own turns do, so that hundreds of waiters (hackbench) keep the turns they had. The target
 * latency's own when --round-target-ms is off or shorter.
 */
static __always_inline u64 vrq_latency_reach(u64 target_ns, u64 round_ns, int hold_floor)
{
	return hold_floor && round_ns > target_ns ? round_ns : target_ns;
}

/*
 * The queues' clock rate from both of its rules: the target latency's, for @nr_latency_waiters latency
 * waiters (vrq_clock_waiters) against @target_ns, and the round target's, for every one of the @nr_waiting
 * tasks queued against @round_ns (0: off). The faster wins.
 *
 * Why a round target beside the latency target: a task queued again after its turn waits one round of
 * its queue, runnable per CPU x rr_interval, before it runs again. A request that needs two or three turns
 * waits whole rounds between them, so the grain of the turn sets the request's tail, not its share. A
 * grain rule must shorten every task's turn at once -- one task's shorter turn with its deadline still
 * from now loses it its wait each turn, and its share -- and the faster clock does exactly that, with
 * every deadline offset the same in clock time, so nice and groups keep their shares. It acts only where
 * the round passes @round_ns: a build of 1.5 jobs per CPU (two runnable per CPU) keeps BFS's turns at a
 * round target of two rr_intervals, and each switch saved is one the build does not pay. Past the floor's
 * reach the turn grows back as for latency waiters (vrq_clock_rate): hundreds of runnable tasks are the
 * load, and the long-queue rule (vrq_effective_slice) bounds their round instead.
 */
static __always_inline u64 vrq_queues_clock_rate(u64 rr_ns, u64 target_ns, u64 round_ns, u64 floor_ns,
						 u64 nr_latency_waiters, u64 nr_waiting, u64 nr_cpus, int hold_floor)
{
	u64 latency = vrq_clock_rate_reach(rr_ns, target_ns, vrq_latency_reach(target_ns, round_ns, hold_floor),
					   floor_ns, nr_latency_waiters, nr_cpus);
	u64 round = vrq_clock_rate(rr_ns, round_ns, floor_ns, nr_waiting, nr_cpus);

	return latency > round ? latency : round;
}

/*
 * The waiting tasks that set the clock's rate: the @latency_waiters, tasks that woke (or short runners
 * queued again, below) and have waited for a CPU since (counted as they are queued and as they run, so
 * a racing update can leave the count a little off, or below 0), never more than the @queued tasks the
 * queues hold now.
 *
 * Why not every waiting task: the faster clock is for tasks that slept and must not wait behind turns
 * of a full rr_interval. Tasks requeued after their turn (CPU hogs: a build's compilers) gain nothing
 * from shorter turns; counting them made make -j(1.5 x CPUs) switch twice as often and run slower than
 * without the faster clock (docs/experiments.md).
 */
static __always_inline u64 vrq_clock_waiters(s64 latency_waiters, u64 queued)
{
	if (latency_waiters <= 0)
		return 0;
	return (u64)latency_waiters < queued ? (u64)latency_waiters : queued;
}

/*
 * Short runners (--short-run-us): which tasks queued again, not by a wake-up, count among the latency
 * waiters above. A task's run, here, is the CPU time it uses from one sleep to the next; a run
 * also ends when a task it woke preempts it (the hand-off of a request queue: the worker wakes its
 * dispatcher, which preempts it on its own CPU before it can sleep, and hands it the next request).
 * vrq_run_avg() keeps an average of those runs (each new one weighs a quarter); a task is a short
 * runner while that average and the run under way are both below @limit_ns (0: off). A request
 * queue's worker, preempted or at the end of its turn with its request half done, is then held up the
 * way a woken task is, and turns shorten for it; a CPU hog's run passes the limit within its first turn
 * and never counts (compilers run for hundreds of ms between sleeps), so builds keep BFS's turns.
 */
#define VRQ_RUN_AVG_WEIGHT 4

static __always_inline u64 vrq_run_avg(u64 avg_ns, u64 run_ns)
{
	return ((VRQ_RUN_AVG_WEIGHT - 1) * avg_ns + run_ns) / VRQ_RUN_AVG_WEIGHT;
}

static __always_inline int vrq_short_runner(u64 avg_ns, u64 run_ns, u64 limit_ns)
{
	return limit_ns && avg_ns < limit_ns && run_ns < limit_ns;
}

/*
 * A short runner's run ends (it sleeps, or the task it woke preempts it) with @slice_left_ns of its
 * slice: less than its average run (@avg_ns), its next run would be cut short by the slice's end, an
 * extra switch for a few microseconds of work. Its slice then counts as used up now, and the next run
 * starts a new slice with a new deadline -- the renewal it would get a moment later, taken early, so
 * it never gains CPU share by it. Tasks that are not short runners keep BFS's carried-over slice.
 */
static __always_inline int vrq_should_renew_short_run(s64 slice_left_ns, u64 avg_ns, u64 limit_ns)
{
	return vrq_short_runner(avg_ns, 0, limit_ns) && slice_left_ns > 0 && (u64)slice_left_ns < avg_ns;
}

/*
 * Latency waiters (--target-latency-ms): a task queued for a CPU counts toward the clock's rate -- its
 * wait bounded by the target -- when it was woken (@woken) or is a short runner queued again
 * (@short_runner, --short-run-us). A long runner preempted by the task it woke is not one: with
 * --handoff-slice (below) it keeps its place in the queue instead, which served it better than
 * counting it as a waiter, with shorter turns ahead of it, did (docs/experiments.md).
 */
static __always_inline int vrq_latency_waiter(int woken, int short_runner)
{
	return woken || short_runner;
}

/*
 * --handoff-slice: a task preempted on its CPU by the task it woke (@by_wakee) that is not a short runner
 * (@avg_ns and the run it ends, @run_ns, both under @limit_ns, --short-run-us) keeps its turn -- no
 * turn-over renewal for the latency waiters' sake: its wakee was the waiter, now served -- and its slice
 * is topped up to a whole one, on its deadline as it stands. A request worker's hand-off (it posts its
 * result, the message thread it woke preempts it and hands it the next request) then starts the next
 * request at once and on a whole turn: not a round later (its turn counted over, a new deadline behind
 * every worker queued since), nor on the remainder the last request left, which splits a request over
 * one turn more. The bound: what the task owes and has not yet repaid (@added_ns, this one's top-up
 * included; vrq_slice_payment repays it from the next slices) stays within VRQ_HANDOFF_MAX_SLICES
 * slices (@slice_ns each), so a task is never more than that far ahead of its share, whatever its runs
 * -- without it, a task handing off every millisecond (every task is a long runner with --short-run-us
 * 0) would never spend a slice, never be renewed, and keep its CPU. Four: a debt is paid only at
 * renewals, at most a slice each, while a worker that hands off at every request's end adds up to a
 * slice and a tick each time, and two hand-offs close together (a waiter on its results lock, then
 * its message thread) add two at once; held to two slices, a worker still paying for the last
 * requests met the bound at the next and waited a round for a request it had been handed.
 */
#define VRQ_HANDOFF_MAX_SLICES 4

static __always_inline int vrq_handoff_keeps_turn(int enabled, int by_wakee, u64 added_ns, u64 slice_ns, u64 avg_ns,
						  u64 run_ns, u64 limit_ns)
{
	return enabled && by_wakee && added_ns <= VRQ_HANDOFF_MAX_SLICES * slice_ns &&
	       !vrq_short_runner(avg_ns, run_ns, limit_ns);
}

/*
 * A slice is CPU time, and what a task runs beyond the slices it is given it owes (@owed_ns): the part
 * of a slice's end that runs on to the tick (sched_ext ends an ordinary slice on the tick after it runs
 * out, HZ=250: up to 4 ms), and what --handoff-slice's top-ups add (CPU time run on the task's old place
 * in its queue, ahead of the tasks renewed since). At each renewal it comes out of the new slice
 * (@slice_ns), which keeps at least @floor_ns; what one slice cannot pay is owed on to the next renewal.
 * So every task's CPU time is the slices its deadlines give it, exactly, over any run of turns: a
 * hand-off moves when a task's CPU time comes, never how much of it -- whatever the others' affinity,
 * the task's nice or group weight, or the queues' clock rate, which a repayment in deadline time would
 * have to estimate -- and it is never more than it owes ahead (at most VRQ_HANDOFF_MAX_SLICES slices
 * and a tick). Returns the part paid now.
 */
static __always_inline u64 vrq_slice_payment(u64 owed_ns, s64 slice_ns, u64 floor_ns)
{
	u64 room;

	if (slice_ns <= (s64)floor_ns)
		return 0;
	room = (u64)slice_ns - floor_ns;
	return owed_ns < room ? owed_ns : room;
}

/*
 * Work conservation: a runnable task should never wait while a CPU it may run on sits idle, beyond the
 * time it takes to wake that CPU (enqueue kicks an idle CPU for every task it queues; only a task put on
 * one CPU's own local queue -- a sync hand-off, behind a kernel thread, a delayed migration -- cannot be
 * taken by another). Of a wait that began at @wait_since and ends at @now, the part during which a CPU
 * that may run the task had been idle since @idle_since (0: that CPU is not idle), beyond
 * VRQ_IDLE_WAIT_GRACE_NS: 0 when within the bound.
 */
#define VRQ_IDLE_WAIT_GRACE_NS	(100ULL * 1000)

static __always_inline u64 vrq_idle_wait_ns(u64 now, u64 wait_since, u64 idle_since)
{
	u64 from;

	if (!wait_since || !idle_since)
		return 0;
	from = idle_since > wait_since ? idle_since : wait_since;
	if ((s64)(now - from) <= (s64)VRQ_IDLE_WAIT_GRACE_NS)
		return 0;
	return now - from;
}

/*
 * What topping a slice with @left_ns left up to @slice_ns adds: the CPU time the task then runs beyond
 * the slices given (vrq_slice_payment) -- with the slice overrun (@left_ns negative), the overrun too.
 */
static __always_inline u64 vrq_slice_top_up(s64 left_ns, u64 slice_ns)
{
	if (left_ns >= (s64)slice_ns)
		return 0;
	return slice_ns - left_ns;
}

/*
 * What the queues' clock gains on real time over @since ns at @rate. At most VRQ_CLOCK_GAIN_MAX_NS of
 * real time counts: the rate is set by the tick, so after a long stretch without one it is stale, and
 * a month at 16x would overflow the product.
 */
#define VRQ_CLOCK_GAIN_MAX_NS (1000ULL * VRQ_NSEC_PER_MSEC)

static __always_inline u64 vrq_clock_gain(u64 since, u64 rate)
{
	if (rate <= VRQ_RATE_ONE)
		return 0;
	if (since > VRQ_CLOCK_GAIN_MAX_NS)
		since = VRQ_CLOCK_GAIN_MAX_NS;
	return since * (rate - VRQ_RATE_ONE) / VRQ_RATE_ONE;
}

/*
 * The queues' clock at real time @now: real time, plus what it gained on real time up to @mark (real
 * time of the last update, @ahead ns gained by then), plus what it gained since at @rate.
 */
static __always_inline u64 vrq_clock_now(u64 now, u64 mark, u64 ahead, u64 rate)
{
	u64 since = (s64)(now - mark) > 0 ? now - mark : 0;

	return now + ahead + vrq_clock_gain(since, rate);
}

/* A turn at @rate: rr_interval of the queues' clock, in real time (rr_interval at real time). */
static __always_inline u64 vrq_turn_at_rate(u64 rr_ns, u64 rate)
{
	return rate > VRQ_RATE_ONE ? rr_ns * VRQ_RATE_ONE / rate : rr_ns;
}

/*
 * The slice that sets a task's deadline offset, in clock time: its turn at @rate, but never more than
 * rr_interval of clock time -- a task that keeps rr_interval of real time (a lone task, a kernel
 * thread) gets the same offset as those whose turns the faster clock shortened. At VRQ_RATE_ONE this is
 * the slice itself.
 */
static __always_inline u64 vrq_clock_slice(u64 slice_ns, u64 rr_ns, u64 rate)
{
	u64 turn = vrq_turn_at_rate(rr_ns, rate);

	if (slice_ns < turn)
		turn = slice_ns;
	return rate > VRQ_RATE_ONE ? turn * rate / VRQ_RATE_ONE : turn;
}

/*
 * Rule 1 for a turn already under way: a turn that has lasted @ran_ns is over at @rate once it has
 * lasted the turn at that rate -- had it started while the latency waiters waited, it would have been
 * given no more. Never at VRQ_RATE_ONE: without latency waiters, turns are rr_interval as BFS has them.
 */
static __always_inline int vrq_turn_over(u64 ran_ns, u64 rr_ns, u64 rate)
{
	return rate > VRQ_RATE_ONE && ran_ns >= vrq_turn_at_rate(rr_ns, rate);
}

/* Half the watchdog: a queue's round may take this long at most while any slice can hold it. */
#define VRQ_SAFE_ROUND_NS ((u64)VRQ_WATCHDOG_MS * VRQ_NSEC_PER_MSEC / 2)
/*
 * The shortest slice the floor gives way to. The slice timer is a pinned hrtimer: it fires within a few
 * microseconds natively, but every turn also costs a context switch and a dispatch, so below a few tens
 * of microseconds a turn is mostly overhead and a shorter slice no longer shortens the round in
 * proportion. Also --min-slice-us's own lower bound.
 */
#define VRQ_SLICE_TIMER_MIN_NS (50ULL * VRQ_NSEC_PER_USEC)

static __always_inline u64 vrq_effective_slice(u64 rr_ns, u64 min_slice_ns, u64 max_round_ns, u64 rate,
						u64 nr_queued, u64 nr_cpus_serving, u32 *why)
{
	u32 rule = VRQ_SLICE_FULL;
	u64 per_cpu, slice = rr_ns;

	if (!nr_cpus_serving)
		nr_cpus_serving = 1;
	per_cpu = nr_queued / nr_cpus_serving;
	if (rate > VRQ_RATE_ONE && nr_queued) {
		slice = vrq_turn_at_rate(rr_ns, rate);
		rule = VRQ_SLICE_TARGET;
	}
	if (per_cpu && per_cpu * slice > max_round_ns) {
		slice = max_round_ns / per_cpu;
		rule = VRQ_SLICE_FIT_ROUND;
		if (slice < min_slice_ns) {
			slice = min_slice_ns;
			if (per_cpu * slice > VRQ_SAFE_ROUND_NS) {
				slice = VRQ_SAFE_ROUND_NS / per_cpu;
				rule = VRQ_SLICE_FLOOR_GAVE_WAY;
				if (slice < VRQ_SLICE_TIMER_MIN_NS) {
					slice = VRQ_SLICE_TIMER_MIN_NS;
					rule = VRQ_SLICE_ROUND_OVER;
				}
			}
		}
	}
	if (slice >= rr_ns) {
		slice = rr_ns;
		rule = VRQ_SLICE_FULL;
	}
	if (why)
		*why = rule;
	return slice;
}

/*
 * The slice of a task on a queue of @nr_queued tasks: vrq_effective_slice(), except that kernel threads
 * keep rr_interval, so that a kernel work item (the sched_ext watchdog's walks every runnable task)
 * finishes in one turn rather than one shrunk slice per round.
 */
static __always_inline u64 vrq_task_slice(u64 rr_ns, u64 min_slice_ns, u64 max_round_ns, u64 rate,
					  u64 nr_queued, u64 nr_cpus_serving, int kthread, u32 *why)
{
	if (kthread) {
		if (why)
			*why = VRQ_SLICE_FULL;
		return rr_ns;
	}
	return vrq_effective_slice(rr_ns, min_slice_ns, max_round_ns, rate, nr_queued, nr_cpus_serving, why);
}

/*
 * A task's slice is used up when less than this is left (BFS's RESCHED_US): running it for a sliver
 * would cost more in switches than it gives. Against a short slice (long queues shrink it to 100 us and
 * below) the threshold is an eighth of the slice instead: a task preempted moments into a 100 us turn
 * (by a kernel thread's wake-up) has not used it up, and renewing its deadline would send it to the back
 * of a 100,000-task queue for a second round without having run.
 */
#define VRQ_RESCHED_NS (100 * VRQ_NSEC_PER_USEC)

static __always_inline int vrq_slice_expired(s64 time_slice_left, u64 slice_ns)
{
	u64 threshold = slice_ns / 8 < VRQ_RESCHED_NS ? slice_ns / 8 : VRQ_RESCHED_NS;

	return time_slice_left < (s64)threshold;
}

/* Is the deadline in the past of this queue's clock? (signed difference: wrap-safe) */
static __always_inline int vrq_deadline_expired(u64 deadline, u64 niffies)
{
	return (s64)(deadline - niffies) <= 0;
}

/*
 * Does a task get a new deadline (BFS: from now) before it is queued or competes? When its slice is
 * used up. When it wakes up with its deadline passed (a long sleep must not leave it a stale early
 * deadline). Not when it was descheduled still runnable with slice left (preempted by a wake-up): it
 * keeps its place, or a task preempted moments into its turn -- after waiting a whole round, so its
 * deadline has long passed -- would go to the back and wait another round.
 */
static __always_inline int vrq_should_renew(s64 time_slice_left, u64 slice_ns, u64 deadline, u64 niffies,
					    int woken)
{
	return vrq_slice_expired(time_slice_left, slice_ns) || (woken && vrq_deadline_expired(deadline, niffies));
}

/*
 * RQ niffies (VRQ): each queue has its own monotonic clock. A task moving between queues keeps
 * its deadline relative to the source clock: dst_deadline = deadline - src_niffies + dst_niffies.
 */
static __always_inline u64 vrq_rebase_deadline(u64 deadline, u64 src_niffies, u64 dst_niffies)
{
	return deadline - src_niffies + dst_niffies;
}

/* A queue's clock only moves forward. */
static __always_inline u64 vrq_niffies_advance(u64 niffies, u64 now)
{
	return (s64)(now - niffies) > 0 ? now : niffies;
}

/* Distance between two CPUs, in VRQ's CPU-selection order (enum vrq_distance). */
static __always_inline u32 vrq_cpu_distance(u32 a, const struct vrq_cpu_topo *ta,
					    u32 b, const struct vrq_cpu_topo *tb)
{
	if (a == b)
		return VRQ_DIST_SAME;
	if (ta->core == tb->core && ta->llc == tb->llc && ta->pkg == tb->pkg)
		return VRQ_DIST_SMT;
	if (ta->llc == tb->llc)
		return VRQ_DIST_LLC;
	if (ta->pkg == tb->pkg)
		return VRQ_DIST_PKG;
	if (ta->node == tb->node)
		return VRQ_DIST_NODE;
	return VRQ_DIST_ANY;
}

/*
 * Frequency scaling (VRQ's "scaled" CPUs). @perf is the CPU's current performance relative to its
 * maximum (VRQ_PERF_ONE = full speed), as scx_bpf_cpuperf_cur() reports it; --freq-threshold is a
 * percentage of that maximum below which the CPU counts as scaled; every other CPU is fast. 0 turns
 * the notion off: every CPU is then fast.
 */
static __always_inline int vrq_cpu_scaled(u32 perf, u32 threshold_pct)
{
	return threshold_pct && (u64)perf * 100 < (u64)threshold_pct * VRQ_PERF_ONE;
}

/* Which CPUs a selection step accepts, by frequency state. */
enum vrq_perf_class {
	VRQ_PERF_ANY	= 0,	/* scaled or not */
	VRQ_PERF_FAST	= 1,	/* fast (not scaled) only */
	VRQ_PERF_SCALED	= 2,	/* scaled only */
};

/*
 * VRQ's CPU-selection order (best_mask_cpu), one step at a time: step @i searches the idle
 * CPUs within distance *@dist of the task's previous CPU whose frequency state is *@perf. Returns 0
 * past the last step. With frequency awareness on:
 *    1 fast same CPU         2 fast SMT sibling         3 fast LLC
 *    4 scaled same CPU       5 scaled SMT sibling       6 scaled LLC
 *    7 fast package          8 fast node
 *    9 scaled package       10 scaled node             11 any allowed CPU
 * Off, the frequency split disappears: same CPU, SMT, LLC, package, node, any. Steps are inclusive
 * (every CPU within the distance), so a later step never misses what an earlier one would have found.
 */
#define VRQ_SELECT_MAX_STEPS 11

static __always_inline int vrq_select_step(u32 i, int freq_aware, u32 *dist, u32 *perf)
{
	if (!freq_aware) {
		if (i > VRQ_DIST_ANY)
			return 0;
		*dist = i;
		*perf = VRQ_PERF_ANY;
		return 1;
	}
	switch (i) {
	case 0: case 1: case 2:		/* fast same CPU, SMT, LLC */
		*dist = VRQ_DIST_SAME + i;
		*perf = VRQ_PERF_FAST;
		return 1;
	case 3: case 4: case 5:		/* scaled same CPU, SMT, LLC */
		*dist = VRQ_DIST_SAME + (i - 3);
		*perf = VRQ_PERF_SCALED;
		return 1;
	case 6: case 7:			/* fast package, node */
		*dist = VRQ_DIST_PKG + (i - 6);
		*perf = VRQ_PERF_FAST;
		return 1;
	case 8: case 9:			/* scaled package, node */
		*dist = VRQ_DIST_PKG + (i - 8);
		*perf = VRQ_PERF_SCALED;
		return 1;
	case 10:			/* everything allowed */
		*dist = VRQ_DIST_ANY;
		*perf = VRQ_PERF_ANY;
		return 1;
	default:
		return 0;
	}
}

/*
 * Delayed migration (the delayed-thread-migration RFC, against frequency inversion): when the idle CPU
 * the order above would take is a scaled one (the RFC's low-frequency core), a woken or forked task is
 * placed on the waker's CPU instead -- if that CPU is fast, may run the task and is not the scaled one
 * -- and an idle CPU is woken for it only if it has not started running within --migration-delay-us.
 * The common case it wins: the waker is about to sleep (fork then wait, a pipe round trip), and the
 * task runs at once on the fast core.
 */
static __always_inline int vrq_delay_placement(u64 delay_ns, int found_scaled_idle, int waker_scaled,
					       int waker_allowed, int waker_is_target)
{
	return delay_ns && found_scaled_idle && !waker_scaled && waker_allowed && !waker_is_target;
}

/* Has a task placed at @placed_at waited out the delay? */
static __always_inline int vrq_delay_expired(u64 placed_at, u64 now, u64 delay_ns)
{
	return (s64)(now - placed_at) >= (s64)delay_ns;
}

/*
 * Stay behind a kernel thread (--stay-behind-kthread). A task preempted on its CPU by a kernel thread
 * bound to that CPU (a kworker, RCU's thread, ksoftirqd: woken there by a timer or by the task itself,
 * it runs first and briefly) resumes there right after it, as EEVDF leaves a preempted task on its run
 * queue. Queued in the shared queue, an idle CPU (woken for it, or waking for its own timer) would take
 * it at once, and a compiler would change CPU in mid-run, its caches (on an emulator, the software TLB)
 * cold there (docs/results/2026-11-27-build50-trace). Only when nothing waits in its queue
 * (@queue_waiting): then nobody's deadline is passed over; with waiters it competes by its deadline as
 * ever. @requeued_running: @p is queued again, not woken, while it is still its CPU's current task (its
 * switch-out); @by_bound_kthread: what preempted it may run only there. Its wait is the kernel thread's
 * run: at most that thread's slice.
 */
static __always_inline int vrq_stays_behind_kthread(int enabled, int requeued_running, int by_bound_kthread,
						    u64 queue_waiting)
{
	return enabled && requeued_running && by_bound_kthread && !queue_waiting;
}

/* A kernel thread that may run on one CPU only: it preempts to run there or not at all. */
static __always_inline int vrq_bound_kthread(int kthread, u32 nr_cpus_allowed)
{
	return kthread && nr_cpus_allowed == 1;
}

/*
 * Does the waker sleep as its wakee starts, which the sync hand-off (vrq_sync_handoff) assumes? A sync
 * wake-up says so (with --sync-handoff); so does a vfork (with --vfork-handoff): the parent sleeps until
 * its child execs or exits, so the child (@vfork_child: woken by a fork with its vfork completion set) is
 * its parent's continuation, however the fork was flagged. make and gcc start every compile and assembly
 * that way: handed its parent's CPU, each cc1 and as runs where the last one ran, where a child sent to
 * the idle CPU had the parent pulled after it at its exit (a sync wake-up), and the next child sent to the
 * other CPU again -- the heavy work alternated CPUs at every step of the chain
 * (docs/results/2026-11-27-build50-trace).
 */
static __always_inline int vrq_waker_sleeps(int sync_handoff, int sync_wakeup, int vfork_handoff, int vfork_child)
{
	return (sync_handoff && sync_wakeup) || (vfork_handoff && vfork_child);
}

/*
 * Sync hand-off. A sync wake-up says the waker is about to sleep (a pipe write before the read that
 * blocks, a futex hand-off): the wakee can run on the waker's CPU the moment it does, with the data it
 * was handed still in that CPU's caches and no other CPU to wake (on an idle CPU a wake-up costs an IPI
 * and the exit from idle, every round trip). Only when the waker sleeps (vrq_waker_sleeps), nothing else
 * waits for that CPU -- neither in its local queue nor in its run queue -- so that no earlier deadline is
 * passed over, and only where the wakee may run.
 */
static __always_inline int vrq_sync_handoff(int waker_sleeps, int waker_allowed, int waker_scaled,
					    u64 waker_local_queued, u64 waker_queue_waiting)
{
	/* never onto a scaled CPU: placement there is --freq-threshold's to decide */
	return waker_sleeps && waker_allowed && !waker_scaled && !waker_local_queued && !waker_queue_waiting;
}

/*
 * Wake-up credit. BFS keeps a woken task's deadline while it has not passed, and gives it a new one from
 * now once it has. A task that sleeps often (an interactive one, a worker waiting for requests) sees
 * its deadline pass during a sleep every few wake-ups; from now, its new deadline is later than those
 * of the CPU hogs of the same nice, running and queued, which renewed theirs within the last round. It
 * may preempt a running hog, but the CPU it frees takes the earliest queued hog, not it: it waits for
 * slices to end, the tail of its wake-up latency. With credit its new deadline is from now less
 * @credit_pct of its deadline offset: at 100, now itself, ahead of every task that renewed its slice
 * since (in a queue shorter than the offset: all of them).
 *
 * Only when it wakes with slice left: a task that used up its slice gets BFS's renewal. And the credited
 * renewal keeps what is left of its slice (vrq_credited_slice) instead of a new one, so that the
 * credit lasts one slice of CPU: a task that runs 1 ms and sleeps a moment, again and again, is credited
 * at each wake-up only until its slice is used up, and then waits a deadline offset of wall time for
 * its new deadline to pass before the next credit. Per offset it gains at most one slice of position,
 * which is BFS's own bound for a sleeper keeping its deadline: CPU shares by nice do not change.
 */
static __always_inline u64 vrq_wakeup_credit(s64 time_slice_left, int woken, u64 slice_ns, u64 offset_ns,
					     u32 credit_pct)
{
	if (!woken || vrq_slice_expired(time_slice_left, slice_ns))
		return 0;
	return offset_ns * credit_pct / 100;
}

/*
 * Under-share wake-ups (--under-share-first): a task that wakes having used less CPU than its share
 * -- its average run (@avg_run_ns, CPU time between sleeps) against its average sleep (@avg_sleep_ns),
 * beside @others tasks per CPU it competes with (one running on each, the rest queued) -- is what
 * EEVDF calls a task with positive lag: it is owed CPU. Its share is 1 / (others + 1), so it is under
 * it while run * others < sleep. A task that has not run yet (average 0) is not: nothing is known of it.
 * A CPU hog never sleeps and is never under its share; a task that starts hogging leaves the rule
 * within a few runs (each new run weighs a quarter).
 */
static __always_inline int vrq_under_share(u64 avg_run_ns, u64 avg_sleep_ns, u64 others)
{
	if (!avg_run_ns)
		return 0;
	if (others > VRQ_RATE_RUNNABLE_MAX)
		others = VRQ_RATE_RUNNABLE_MAX;
	if (!others)
		return avg_sleep_ns > 0;
	/* run * others < sleep, without the product: a task back from a day-long run averages 2^44 ns
	 * and more, and times the cap (2^20) that would wrap */
	return avg_sleep_ns && avg_run_ns <= (avg_sleep_ns - 1) / others;
}

/*
 * Capacity-aware placement (--capacity-aware). A CPU's capacity is its top speed relative to the
 * machine's biggest CPU (VRQ_PERF_ONE), as scx_bpf_cpuperf_cap() reports it: on a hybrid CPU the
 * performance cores are big and the efficiency cores little. A CPU within an eighth of the biggest
 * counts as big, so small differences between cores of one kind split nothing; 0 (not read) is big.
 */
#define VRQ_CAP_BIG_MIN (VRQ_PERF_ONE * 7 / 8)

static __always_inline int vrq_cpu_little(u32 cap)
{
	return cap && cap < VRQ_CAP_BIG_MIN;
}

/* Both kinds present (counted among the CPUs in the topology); otherwise the rule has nothing to do. */
static __always_inline int vrq_cap_mixed(s64 nr_big, s64 nr_little)
{
	return nr_big > 0 && nr_little > 0;
}

/* Which kind of idle CPU a waking task prefers. */
enum vrq_cap_pref {
	VRQ_CAP_ANY	= 0,	/* no preference: the distance order alone */
	VRQ_CAP_BIG	= 1,
	VRQ_CAP_LITTLE	= 2,
};

/*
 * The preference, checked in this order:
 *   - background work (SCHED_IDLE, or nice above 0) prefers a little CPU: it asked to matter less, and
 *     a big CPU it takes is one a later heavy or latency-sensitive wake-up will not find idle;
 *   - a heavy task, whose average run between sleeps reaches @rr_ns, prefers a big one: it does the
 *     most work there;
 *   - a latency-sensitive one -- woken (@woken: not a fork) under its share beside one other task,
 *     vrq_under_share, so it sleeps more than it runs -- prefers a big one: its short run ends soonest;
 *   - anything else (a new task with no history, a busy short runner) has none.
 * The preference only orders idle CPUs at one distance (pick_idle_cpu); it never leaves one unused.
 */
static __always_inline u32 vrq_cap_pref(u32 policy, s32 nice, int woken, u64 avg_run_ns, u64 avg_sleep_ns,
					u64 rr_ns)
{
	if (policy == VRQ_SCHED_IDLE || nice > 0)
		return VRQ_CAP_LITTLE;
	if (avg_run_ns >= rr_ns && avg_run_ns)
		return VRQ_CAP_BIG;
	if (woken && vrq_under_share(avg_run_ns, avg_sleep_ns, 1))
		return VRQ_CAP_BIG;
	return VRQ_CAP_ANY;
}

/*
 * Does a task with preference @pref look past its previous CPU (of little capacity: @prev_little)? Only
 * when that CPU is of the other kind: it then first looks for an idle CPU of its kind sharing the
 * previous CPU's LLC, where a move costs only the private caches. Otherwise a heavy task that once
 * started on a little CPU would stay there for as long as that CPU was idle at each wake-up.
 */
static __always_inline int vrq_cap_leaves_prev(u32 pref, int prev_little)
{
	return (pref == VRQ_CAP_BIG && prev_little) || (pref == VRQ_CAP_LITTLE && !prev_little);
}

/* vrq_prio_ratio(0), the nice-0 ratio, as a constant for the wake-up path (a host test checks it) */
#define VRQ_PRIO_RATIO_NICE0 836ULL

/* The nice-0 deadline offset for @clock_slice_ns (vrq_clock_slice's clock-time slice), no multiplier. */
static __always_inline u64 vrq_nice0_offset(u64 clock_slice_ns)
{
	return VRQ_PRIO_RATIO_NICE0 * clock_slice_ns / VRQ_PRIO_RATIO_BASE;
}

/*
 * Where an under-share task goes when it wakes: its deadline from @niffies with its own offset
 * (@offset_ns: nice, group accounting, fork depth), less two nice-0 offsets (@base_offset_ns) -- for a
 * nice-0 task alone in its group, one offset before now -- unless its own deadline is earlier still.
 * Every nice-0 task still within its offset of its renewal, running or queued, has a later deadline, so
 * it goes first and preempts by BFS's own rule; a task that has waited past its deadline by a whole
 * offset goes before it, so nothing waits more than about two offsets for a stream of such wake-ups.
 * Nice and group accounting keep their order among such tasks: a nice-19 task (offset six times
 * nice 0's) or one of a large group lands well after now, not first.
 */
static __always_inline u64 vrq_under_share_deadline(u64 deadline, u64 niffies, u64 offset_ns, u64 base_offset_ns)
{
	u64 credit = 2 * base_offset_ns, front = niffies + offset_ns;

	front = front > credit ? front - credit : 0;
	return (s64)(deadline - front) < 0 ? deadline : front;
}

/* The slice a credited task goes on with: what it had left, at most the slice the queue allows now. */
static __always_inline s64 vrq_credited_slice(s64 time_slice_left, u64 slice_ns)
{
	return time_slice_left > (s64)slice_ns ? (s64)slice_ns : time_slice_left;
}

/*
 * Sticky tasks (BFS): a task descheduled while still runnable (preempted, or its slice ran out) is
 * sticky to the CPU it left, whose caches hold its working set. To any CPU outside that CPU's queue its
 * deadline counts as later by BFS's longest_deadline_diff -- the deadline offset of a nice 19 task, the
 * largest any normal task gets -- so another CPU takes it only when it has nothing better to do, or
 * when taking it evens out the two queues (vrq_sticky_holds).
 */
static __always_inline u64 vrq_sticky_offset(u64 rr_ns)
{
	return vrq_prio_ratio(VRQ_NICE_MAX) * rr_ns / VRQ_PRIO_RATIO_BASE;
}

/*
 * Does a sticky task's claim hold against a CPU of another queue? Not when taking it evens out the two
 * queues: the nice-19 offset is longer than any CPU hog ever waits, so without a limit a CPU with
 * three hogs beside one running a hog alone was never evened out. Moving
 * one task from the sticky queue (@src_queued waiting, served by @src_cpus) to this CPU's queue
 * (@dst_queued waiting, @dst_cpus) narrows the difference of their waiting tasks per CPU,
 * s/ns - d/nd, by 1/ns + 1/nd; it is evened out when that difference exceeds half of this:
 * 2*s*nd > 2*d*ns + nd + ns. One CPU each: three hogs against one (two waiting, none) lapses; the 2:1
 * split that an uneven count per CPU leaves (one waiting, none) holds, as moving would only swap it.
 * (A limit on the time waited instead, one and a half slices, lapsed almost always in the emulated
 * guest, where vCPUs stall: nearly as many migrations as without --sticky.)
 */
static __always_inline int vrq_sticky_holds(u64 src_queued, u64 src_cpus, u64 dst_queued, u64 dst_cpus)
{
	if (!src_cpus)
		src_cpus = 1;
	if (!dst_cpus)
		dst_cpus = 1;
	return 2 * src_queued * dst_cpus <= 2 * dst_queued * src_cpus + dst_cpus + src_cpus;
}

/*
 * Sticky tasks inside one queue: to the other CPUs of its own queue a sticky task's deadline counts as
 * later by one rr_interval, not the nice-19 offset. A queue is shared by CPUs that share a cache, so
 * what stickiness saves there is the task's place: a worker preempted in the middle of its work and
 * taken by the next CPU to free up runs its work on two CPUs, and whatever it holds for the CPU it
 * started on (a per-CPU lock, per-CPU data) is held across the move. One rr_interval needs no count of
 * who waits where: a sticky task outwaits the others of its CPU by one slice at most before any CPU of
 * the queue takes it, so three hogs sticky to one CPU beside one hog on the other even out by
 * themselves (each waits two slices there), and a CPU with nothing else takes it at once.
 */
static __always_inline u64 vrq_sticky_queue_offset(u64 rr_ns)
{
	return rr_ns;
}

/*
 * Which task leaving its CPU becomes sticky to it: one still runnable (@runnable: preempted, or its slice
 * ran out) that did not yield (@yielded) and is not a short runner (@short_runner, vrq_short_runner with
 * --short-run-us; none is with 0). A short runner is done within its next run wherever it runs, and the
 * latency waiters' rules already serve it: holding it for one CPU only delays it (1 ms request
 * workers waited longer when every task was sticky). What
 * stickiness keeps in place is a long run's work: its working set, and what it holds for its CPU.
 */
static __always_inline int vrq_becomes_sticky(int runnable, int yielded, int short_runner)
{
	return runnable && !yielded && !short_runner;
}

/* A priodl as seen from outside the sticky CPU's queue: the deadline later by @offset_ns, saturating
 * inside the deadline bits so the priority is never changed. */
static __always_inline u64 vrq_sticky_priodl(u64 priodl, u64 offset_ns)
{
	const u64 dl_mask = (1ULL << VRQ_PRIODL_PRIO_SHIFT) - 1;
	u64 dl = priodl & dl_mask, add = offset_ns >> VRQ_PRIODL_DL_SHIFT;

	dl = dl + add > dl_mask ? dl_mask : dl + add;
	return (priodl & ~dl_mask) | dl;
}

/*
 * Latency histograms (enum vrq_lat_class, struct vrq_lat_hists in intf.h): the log2 bucket of a
 * duration, in microseconds -- 0 below 1 us, b for [2^(b-1), 2^b) us, the last bucket for 2^24 us
 * (16.8 s) and more. A binary search for the highest set bit: no loop for the verifier to bound.
 */
static __always_inline u32 vrq_hist_bucket(u64 ns)
{
	u64 us = ns / VRQ_NSEC_PER_USEC;
	u32 b = 0;

	if (!us)
		return 0;
	if (us >> 32) { b += 32; us >>= 32; }
	if (us >> 16) { b += 16; us >>= 16; }
	if (us >> 8) { b += 8; us >>= 8; }
	if (us >> 4) { b += 4; us >>= 4; }
	if (us >> 2) { b += 2; us >>= 2; }
	if (us >> 1) { b += 1; }
	b += 1;		/* 1-based position of the highest set bit: us in [2^(b-1), 2^b) */
	return b < VRQ_HIST_BUCKETS - 1 ? b : VRQ_HIST_BUCKETS - 1;
}

/* Which latency class a task's waits and runs are counted in. */
static __always_inline u32 vrq_lat_class(u32 policy, int kthread)
{
	if (kthread)
		return VRQ_LAT_KTHREAD;
	if (policy == VRQ_SCHED_BATCH)
		return VRQ_LAT_BATCH;
	if (policy == VRQ_SCHED_IDLE)
		return VRQ_LAT_SCHED_IDLE;
	return VRQ_LAT_NORMAL;
}

/* Which run queue a CPU uses under each --queue mode. */
static __always_inline u32 vrq_queue_of(u32 mode, u32 cpu, const struct vrq_cpu_topo *t)
{
	switch (mode) {
	case VRQ_QUEUE_CPU:
		return cpu;
	case VRQ_QUEUE_LLC:
		return t->llc;
	default:
		return 0;
	}
}

/*
 * BFS yield_type, what sched_yield() does:
 *   0  nothing: the caller keeps the CPU and its slice;
 *   1  give up the CPU only to a task with a smaller priodl (the caller keeps its deadline, so it
 *      runs again at once if nothing better waits) -- BFS's default;
 *   2  expire the slice: a new deadline from now, behind the tasks already waiting.
 */
enum vrq_yield_type {
	VRQ_YIELD_NONE		= 0,
	VRQ_YIELD_BETTER	= 1,
	VRQ_YIELD_EXPIRE	= 2,
};

static __always_inline int vrq_yield_gives_up_cpu(u32 yield_type)
{
	return yield_type == VRQ_YIELD_BETTER || yield_type == VRQ_YIELD_EXPIRE;
}

static __always_inline int vrq_yield_expires_slice(u32 yield_type)
{
	return yield_type == VRQ_YIELD_EXPIRE;
}

#endif /* __VRQ_POLICY_H */
