/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq: definitions shared by the BPF scheduler (the .bpf.c files), the pure policy (policy.h), the host
 * tests and the Rust loader (through bindgen). No logic here: constants, enums and layouts only.
 */
#ifndef __VRQ_INTF_H
#define __VRQ_INTF_H

#ifndef __VMLINUX_H__
#ifdef __KERNEL__
#error "intf.h: include vmlinux.h first"
#endif
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef signed short s16;
typedef signed int s32;
typedef signed long long s64;
#endif

enum vrq_consts {
	/*
	 * CPU ids the scheduler handles (a machine with a higher id is refused at load). A power of two
	 * (CPU_IDX). Every loop over CPUs or queues is bounded by the machine's own count (bpf_for), so the
	 * verifier's walk does not grow with it; what grows is the per-CPU arrays' memory.
	 */
	VRQ_MAX_CPUS		= 1024,
	VRQ_MAX_QUEUES		= VRQ_MAX_CPUS,	/* one queue per CPU at most (--queue cpu) */
	VRQ_NSEC_PER_USEC	= 1000,
	VRQ_NSEC_PER_MSEC	= 1000000,
	/*
	 * sched_ext's watchdog for this scheduler (ops.timeout_ms): a runnable task that waits longer
	 * ejects the scheduler, so every wait bound stays below it. The one definition (the loader reads
	 * it through bindgen).
	 */
	VRQ_WATCHDOG_MS		= 10000,
};

/* --queue: which CPUs share one run queue (a vtime-ordered DSQ). */
enum vrq_queue_mode {
	VRQ_QUEUE_GLOBAL	= 0,	/* one queue for every CPU: BFS's grq */
	VRQ_QUEUE_LLC		= 1,	/* one queue per last-level cache: VRQ/PDS-like */
	VRQ_QUEUE_CPU		= 2,	/* one queue per CPU: MuQSS/PDS-like */
};

/* --group-accounting: which tasks share one entity's CPU (BFS's group-accounting experiment). */
enum vrq_group_mode {
	VRQ_GROUP_OFF		= 0,	/* plain BFS: every task is its own entity */
	VRQ_GROUP_THREAD	= 1,	/* the threads of one process (thread group) */
	VRQ_GROUP_SESSION	= 2,	/* the processes of one session: a terminal's job, a service */
	VRQ_GROUP_CGROUP	= 3,	/* cgroup v2's cpu.weight, along the tree (cgroup.bpf.c) */
};

/*
 * Topological distance between two CPUs, also the CPU-selection order (VRQ's best_mask_cpu):
 * the previous CPU, its SMT sibling, a CPU sharing its LLC, the same package, the same node, any.
 */
enum vrq_distance {
	VRQ_DIST_SAME	= 0,
	VRQ_DIST_SMT	= 1,
	VRQ_DIST_LLC	= 2,
	VRQ_DIST_PKG	= 3,
	VRQ_DIST_NODE	= 4,
	VRQ_DIST_ANY	= 5,
	VRQ_NR_DIST	= 6,
};

/*
 * Counters, one per-CPU array slot each, summed by the loader. Every scheduling path counts itself so
 * that the stats explain what the scheduler did (the method of VRQ's schedstat investigation).
 */
enum vrq_stat {
	/* dispatch: where the next task came from */
	VRQ_STAT_DISPATCH_LOCAL,	/* from this CPU's own queue */
	VRQ_STAT_DISPATCH_STEAL,	/* from another queue, found by a lockless peek */
	VRQ_STAT_STEAL_FAIL,		/* a peeked task was gone (or not movable) when we tried to take it */
	VRQ_STAT_PEEK,			/* lockless reads of another queue's head */
	VRQ_STAT_KEEP_LAST,		/* the task that just ran stays on its CPU: no queue head is earlier
					 * (dispatch, then enqueue with SCX_ENQ_LAST) */
	VRQ_STAT_RENEWED_ON_TICK,	/* ... renewed on the tick, nothing waiting: no trip through schedule() */
	VRQ_STAT_DIRECT_IDLE,		/* woken task handed straight to the idle CPU chosen for it */
	/* why a CPU found nothing to run (VRQ's sched_goidle breakdown) */
	VRQ_STAT_GOIDLE_IDLE,		/* it was idle and stays idle: a wasted wake-up */
	VRQ_STAT_GOIDLE_BLOCKED,	/* the previous task blocked */
	VRQ_STAT_GOIDLE_NEEDOTHER,	/* the previous task is runnable but may not stay on this CPU */
	/* wake-up CPU selection, by distance from the previous CPU */
	VRQ_STAT_SEL_PREV,
	VRQ_STAT_SEL_SMT,
	VRQ_STAT_SEL_LLC,
	VRQ_STAT_SEL_PKG,
	VRQ_STAT_SEL_NODE,
	VRQ_STAT_SEL_ANY,
	VRQ_STAT_SEL_BUSY,		/* no idle CPU allowed: queued, then kick_idle_or_preempt */
	/* enqueue and preemption */
	VRQ_STAT_ENQUEUE,
	VRQ_STAT_RENEWAL,		/* slice used up or deadline passed: a new slice, a new deadline from now */
	VRQ_STAT_PREEMPT_KICK,		/* a wake-up preemption by a kick (SCX_KICK_PREEMPT): of the CPU running
					 * the latest priodl, or of this one (--preempt-local); not the direct ones */
	VRQ_STAT_IDLE_KICK,		/* an idle CPU kicked because a task was queued for it */
	VRQ_STAT_NO_PREEMPT,		/* a wake-up that may not preempt: SCHED_BATCH, or a sync wake-up */
	VRQ_STAT_SCHED_IDLE_RESCUE,	/* a SCHED_IDLE task run because it waited past --idle-bound-ms */
	VRQ_STAT_RENEWAL_SHRUNK,	/* a renewal's slice shrunk because the queue is long (--max-round-ms) */
	VRQ_STAT_REMAINDER_CUT,		/* a kept deadline's slice left cut to what the queue allows now */
	VRQ_STAT_TURN_START_CUT,	/* a slice cut when its turn starts, to what the queue allows now */
	VRQ_STAT_SLICE_TIMER,		/* a slice shorter than rr_interval ended by the slice timer, before the
					 * next tick */
	VRQ_STAT_FLOOR_GAVE_WAY,	/* slice below --min-slice-us: the floor would hold the round past half the watchdog */
	VRQ_STAT_ROUND_OVER,		/* ... and even the shortest slice leaves the round past half the watchdog */
	VRQ_STAT_TARGET_SHORTENED,	/* a renewal's slice shortened by the target latency (--target-latency-ms) */
	VRQ_STAT_TURN_ENDED,		/* a woken task that waits ended a turn that had lasted the target's turn */
	VRQ_STAT_WAKE_CREDIT,		/* woken with its deadline passed: new deadline backdated (--wake-credit) */
	VRQ_STAT_SYNC_HANDOFF,		/* sync wake-up run on the waker's CPU (--sync-handoff) */
	VRQ_STAT_PREEMPT_LOCAL,		/* a wake-up preemption of the CPU handling the wake-up (--preempt-local),
					 * by a kick or directly */
	VRQ_STAT_KERNEL_WAKEUP,		/* a kernel thread woken: queued before user tasks until it sleeps or uses
					 * up its slice */
	VRQ_STAT_NIFFIES_REBASE,	/* deadline carried over between two queues' clocks */
	VRQ_STAT_YIELD,			/* sched_yield() calls (what they do: --yield-type) */
	VRQ_STAT_GROUP_STRETCHED,	/* offsets stretched 1.5x or more by their group (other groups competing) */
	VRQ_STAT_DEPTH_STRETCHED,	/* offsets stretched by the fork-depth penalty */
	/* frequency-aware selection (--freq-threshold, VRQ) */
	VRQ_STAT_SEL_SCALED,		/* wake-ups placed on an idle CPU that is scaled (below --freq-threshold) */
	/* delayed migration (--migration-delay-us, the delayed-thread-migration RFC) */
	VRQ_STAT_DELAY_PLACED,		/* woken/forked task kept on the waker's fast CPU, not a scaled idle one */
	VRQ_STAT_DELAY_RAN_BEFORE,	/* ... and it started running before the delay was up */
	VRQ_STAT_DELAY_MIGRATED,	/* ... the delay ran out with it still waiting: an idle CPU was woken */
	/* sticky tasks (--sticky, BFS) */
	VRQ_STAT_STICKY_SET,		/* task descheduled while runnable: sticky to its CPU */
	VRQ_STAT_STICKY_KEPT,		/* sticky task ran again on the CPU it was sticky to */
	VRQ_STAT_STICKY_PASSED,		/* a CPU passed over a head sticky elsewhere (it counted as later) */
	VRQ_STAT_STICKY_STOLEN,		/* sticky task ran on another CPU all the same */
	VRQ_STAT_CLOCK_MISCOUNT,	/* clock updates that found the latency-waiter count below 0 (a bookkeeping
					 * defect) */
	VRQ_STAT_SHORT_RUN_WAIT,	/* short runners queued again that counted as latency waiters (--short-run-us) */
	VRQ_STAT_SHORT_RUN_RENEW,	/* short runners' runs ended with less slice than their average run: renewed */
	VRQ_STAT_TURN_OVER_DISPATCH,	/* a turn over when its task competed again in dispatch: renewed there */
	VRQ_STAT_UNDER_SHARE,		/* woken under its CPU share: placed first (--under-share-first) */
	VRQ_STAT_PREEMPT_DIRECT,	/* a wake-up preemption without a kick: the woken task inserted on its own
					 * CPU with SCX_ENQ_PREEMPT (preempt_local_direct) */
	VRQ_STAT_CPU_ONLINE,		/* CPUs that came on line while loaded (no restart) */
	VRQ_STAT_CPU_OFFLINE,		/* CPUs that went off line while loaded (no restart) */
	/* cgroup weights (--group-accounting cgroup) */
	VRQ_STAT_CGROUP_STRETCHED,	/* deadlines given a cgroup stretch of more than one offset (a cgroup under a full share) */
	VRQ_STAT_CGROUP_LAGGED,		/* deadlines brought earlier because their cgroup was behind in virtual time */
	VRQ_STAT_CGROUP_MOVE,		/* tasks moved between cgroups */
	VRQ_STAT_CGROUP_INIT,		/* cgroups created (or found at load) */
	VRQ_STAT_CGROUP_EXIT,		/* cgroups removed */
	VRQ_STAT_CGROUP_UNTRACKED,	/* cgroups beyond the table's room: their tasks count as the root's */
	VRQ_STAT_CGROUP_IDLE_RUN,	/* renewals of tasks in a cpu.idle cgroup: they compete as SCHED_IDLE tasks */
	/* higher scheduling classes (real-time, deadline) taking CPUs */
	VRQ_STAT_CPU_RELEASED,		/* a CPU taken by a higher class: its local queue handed back (cpu_release) */
	VRQ_STAT_CPU_REACQUIRED,	/* ... and given back to scx_vrq (cpu_acquire) */
	VRQ_STAT_REENQUEUED,		/* tasks handed back from a taken CPU's local queue, queued again to run elsewhere */
	VRQ_STAT_KEEP_SERVED,		/* the task that just ran kept by its slice while a higher class waits on its
					 * CPU: the kernel's sched_ext deadline server runs it (keep_served) */
	VRQ_STAT_HANDOFF_SLICE,		/* long runners preempted by the task they woke, their turn kept and a
					 * whole slice given for the next run (--handoff-slice) */
	VRQ_STAT_SLICE_REPAID,		/* renewals whose new slice was cut by what the task ran beyond the
					 * slices given: an overrun to the tick, --handoff-slice's top-ups */
	VRQ_STAT_STAYED_BEHIND_KTHREAD,	/* tasks preempted by a kernel thread bound to their CPU, nothing else
					 * waiting: put back on that CPU behind it (--stay-behind-kthread) */
	VRQ_STAT_VFORK_HANDOFF,		/* vfork children run on their parent's CPU, which the parent leaves
					 * until the child execs or exits (--vfork-handoff) */
	/* work conservation (policy.h: vrq_idle_wait_ns) */
	VRQ_STAT_SYNC_HANDOFF_ENDED,	/* sync hand-offs whose waker still ran a tick later: its slice ended so that
					 * the wakee runs (end_sync_handoff_wait) */
	VRQ_STAT_IDLE_WAIT,		/* waits that ended past the bound while a CPU the task may run on was idle */
	VRQ_STAT_IDLE_WAIT_US,		/* ... the time they spent so, microseconds */
	/* capacity-aware placement (--capacity-aware) */
	VRQ_STAT_SEL_CAP_BIG,		/* heavy or latency-sensitive wake-ups placed on an idle big CPU by the rule */
	VRQ_STAT_SEL_CAP_LITTLE,	/* background wake-ups placed on an idle little CPU by the rule */
	VRQ_STAT_SEL_CAP_OTHER,		/* wake-ups with a preference whose kind had no idle CPU at the distance
					 * searched: placed on the idle CPU of the other kind there */
	VRQ_STAT_CAP_CHANGED,		/* CPUs seen to change kind (big or little) after load */
	VRQ_NR_STATS,
};

/* Performance levels are relative to the CPU's maximum, as sched_ext reports them (SCX_CPUPERF_ONE). */
enum vrq_perf_consts {
	VRQ_PERF_ONE		= 1024,
};

/* Topology of one CPU as dense ids (the loader numbers cores, LLCs, packages and nodes from 0). */
struct vrq_cpu_topo {
	u32 core;
	u32 llc;
	u32 pkg;
	u32 node;
};

/* The per-CPU counter block (one slot of the `stats` per-CPU array). */
struct vrq_stats {
	u64 counters[VRQ_NR_STATS];
};

/*
 * Latency histograms, one slot of the `lat_hists` per-CPU array each (each CPU counts into its own, no
 * atomics; the loader sums them): how long tasks waited until they ran -- after a wake-up, or after
 * being descheduled still runnable (preempted, slice used up) -- and how long each turn lasted, per
 * class of task, in log2 buckets of microseconds (vrq_hist_bucket() in policy.h):
 * bucket 0 is < 1 us, bucket b (1..VRQ_HIST_BUCKETS-2) is [2^(b-1), 2^b) us, the last one is 2^24 us
 * (16.8 s) and more.
 */
enum vrq_lat_class {
	VRQ_LAT_NORMAL		= 0,	/* SCHED_NORMAL user tasks */
	VRQ_LAT_BATCH		= 1,	/* SCHED_BATCH user tasks */
	VRQ_LAT_SCHED_IDLE	= 2,	/* SCHED_IDLE user tasks */
	VRQ_LAT_KTHREAD		= 3,	/* kernel threads, whatever their policy */
	VRQ_NR_LAT_CLASSES	= 4,
};

enum vrq_lat_consts {
	VRQ_HIST_BUCKETS	= 26,
};

struct vrq_lat_hists {
	u64 wake[VRQ_NR_LAT_CLASSES][VRQ_HIST_BUCKETS];		/* woken (runnable) -> running */
	u64 requeue[VRQ_NR_LAT_CLASSES][VRQ_HIST_BUCKETS];	/* descheduled still runnable -> running */
	u64 turn[VRQ_NR_LAT_CLASSES][VRQ_HIST_BUCKETS];		/* running -> stopping: turns */
};

/* Per-queue state, read by the loader for queue-depth stats. */
struct vrq_queue {
	u64 niffies;		/* this queue's own monotonic clock (RQ niffies) */
	u64 sched_idle_scan_at;	/* last time this queue was searched for starved SCHED_IDLE tasks */
	u64 nr_queued;		/* depth seen at the last dispatch from it */
	u64 max_queued;		/* deepest it has been */
	u64 may_hold;		/* --queue cpu: set by enqueue before a task goes in, cleared only by
				 * the queue's own CPU when its dispatch finds it empty (queue_may_hold) */
};

#endif /* __VRQ_INTF_H */
