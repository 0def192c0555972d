/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's per-CPU and per-task state (included by vrq.bpf.h). Each optional mechanism keeps its
 * per-task state in its own sub-struct of task_ctx, written and read only by its own file (and
 * init_task, which starts it): delayed migration (delay), sticky tasks (sticky), the fork-depth penalty
 * (fork), cgroup weights (cg), the target latency's count (target).
 */
#ifndef __VRQ_CTX_BPF_H
#define __VRQ_CTX_BPF_H

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
	/* short slices: which turn of this CPU the slice timer was armed for (see slice_timer_fired) */
	u64 turn_seq;				/* start_turn bumps it for every turn */
	u64 timer_seq;				/* the turn_seq start_turn armed the timer for */
	u64 turn_started;			/* when the current turn began (start_turn); with a target
						 * latency, a woken task that waits ends the longest turn
						 * (end_longest_turn) */
	u64 idle_since;				/* when dispatch last found nothing here and the CPU went
						 * idle; 0 once it runs a task (stats.bpf.c: work
						 * conservation) */
	u64 sync_handoff_at;			/* when a sync hand-off last put a wakee on this CPU's
						 * local queue behind its waker (select.bpf.c); 0 once a
						 * turn starts here (start_turn) or the tick ends the
						 * waker's slice for it (end_sync_handoff_wait) */
	u8 scaled;				/* frequency-scaled at the last look (--freq-threshold) */
	u8 little;				/* of little capacity at the last look (--capacity-aware:
						 * update_cpu_cap, at load, on line, on the tick) */
	u64 cap_read_at;			/* when the tick last read this CPU's capacity */
	u8 waker_preempted;			/* a task woken by the one running here preempts it
						 * (preempt_for_wakeup): a short runner's run ends there;
						 * --handoff-slice reads it. start_turn clears it */
	u8 kthread_preempted;			/* a kernel thread bound to this CPU preempts the task
						 * running here (preempt.bpf.c: note_preemptor);
						 * --stay-behind-kthread reads it. start_turn clears it */
	u8 released;				/* a higher class (real-time, deadline) holds this CPU:
						 * cpu_release sets it, cpu_acquire clears it
						 * (cpu_release.bpf.c) */
	struct bpf_cpumask __kptr *smt;		/* CPUs within VRQ_DIST_SMT of this one */
	struct bpf_cpumask __kptr *llc;		/* ... within VRQ_DIST_LLC */
	struct bpf_cpumask __kptr *pkg;		/* ... within VRQ_DIST_PKG */
	struct bpf_cpumask __kptr *node;	/* ... within VRQ_DIST_NODE */
	struct bpf_cpumask __kptr *tmp;		/* scratch, used only by this CPU */
};

/*
 * The CPUs that are fast / scaled (frequency-scaled: below --freq-threshold), as last seen (each CPU
 * updates its own bit on its tick and when it looks for work). Two masks because cpumask kfuncs have
 * no and-not.
 */
struct perf_masks {
	struct bpf_cpumask __kptr *fast;
	struct bpf_cpumask __kptr *scaled;
};

/* The CPUs of big and of little capacity (--capacity-aware; capacity.bpf.c keeps them). */
struct cap_masks {
	struct bpf_cpumask __kptr *big;
	struct bpf_cpumask __kptr *little;
};

/*
 * State a task carries from one callback to another, one struct or field per hand-off, each saying who
 * writes it and who reads and clears it.
 */

/* Delayed migration: select_cpu -> enqueue -> running. */
struct delay_placement {
	s32 scaled_cpu;		/* select_cpu: placed on the waker instead of this scaled idle
				 * CPU (-1: not placed); enqueue takes it (hold_for_delay) */
	s32 waker;		/* enqueue (start_delay): the waker CPU it was queued on, counted
				 * in that CPU's delay.pending (-1: none); running reads and
				 * clears it (delayed_task_runs) */
	u64 gen;		/* with waker: that CPU's delay.gen when it was placed; running compares */
};

/* Sticky tasks, stopping -> dispatch; yield -> stopping. */
struct sticky_mark {
	s32 sticky_cpu;		/* the CPU it was descheduled from while runnable (-1: none).
				 * stopping (mark_sticky) writes it; dispatch reads it
				 * (sticky_elsewhere); running (sticky_ends) and keep_on_cpu
				 * clear it */
	u8 yielded;		/* it called sched_yield(), so leaving is voluntary (not sticky).
				 * yield writes it; stopping (mark_sticky) reads and clears it */
};

/* The fork-depth penalty (--fork-depth-penalty). */
struct fork_depth {
	u32 fork_depth;		/* forks from init (init's children: 1); init_task writes it */
};

/* cgroup weights (--group-accounting cgroup, cgroup.bpf.c). */
struct cgroup_mark {
	u64 id;			/* the cgroup it is in: init_task and cgroup_move write it */
	u64 counted_id;		/* the cgroup it is counted runnable in (0: none). runnable
				 * (cgroup_runnable) writes it; quiescent and cgroup_move read and
				 * clear it, so a move never uncounts from the wrong cgroup */
	u64 share;		/* its cgroup's share at its last renewal (VRQ_CGROUP_SHARE_ONE: all);
				 * cgroup_charge reads it to advance the cgroup's virtual time */
	u64 charged_at;		/* when its run time was last charged to its cgroup (running, tick,
				 * stopping) */
	u64 lag;		/* how much earlier its last renewal's deadline came for its cgroup's
				 * lag; cgroup_stretch writes it, renew_deadline reads it */
	u8 idle;		/* its cgroup or an ancestor has cpu.idle = 1 at its last renewal:
				 * it competes as a SCHED_IDLE task (task_prio) */
};

/* Target latency, enqueue -> running / quiescent. */
struct latency_waiter_mark {
	u8 latency_waiter;	/* queued by its wake-up or as a short runner, and counted in
				 * latency_waiters. enqueue (count_latency_waiter) sets it; running
				 * and quiescent (uncount_latency_waiter) clear it */
	u64 waiters_gen;	/* ... in this waiters_gen (count_latency_waiter writes it) */
};

/* Latency histograms: runnable / stopping -> running -> stopping. */
struct lat_marks {
	u64 wait_since;		/* runnable (a wake-up) or stopping (still runnable) writes when
				 * its wait began; running records the wait and clears it (0: not
				 * waiting) */
	u64 turn_since;		/* running writes when its turn began; stopping records the turn
				 * and clears it */
	u8 wait_requeue;	/* with wait_since: the wait was begun by a deschedule, not a wake-up */
};

/* Where a task counts in its group while runnable (task_ctx.group_in; groups.bpf.c). */
enum vrq_group_in {
	VRQ_GROUP_IN_NONE,	/* nowhere: not runnable, no group, or no room even in the fallback */
	VRQ_GROUP_IN_SLOT,	/* the group's slot, task_ctx.group_slot */
	VRQ_GROUP_IN_HASH,	/* the fallback, group_runnable */
};

struct task_ctx {
	/* the deadline and the slice (refresh_deadline, charge_slice) */
	u64 deadline;		/* virtual deadline, on the clock of queue `queue` */
	u64 offset;		/* the deadline offset it was given at its last renewal (clock time) */
	s64 time_slice;		/* what is left of the current slice (ns) */
	u64 last_charged;	/* when run time was last charged to time_slice */
	u32 queue;		/* the queue whose clock `deadline` is on (VRQ_NO_QUEUE: none yet) */
	u32 group;		/* group id (--group-accounting session or thread) at its last runnable (0: none) */
	struct fork_depth fork;		/* the fork-depth penalty (groups.bpf.c) */
	struct cgroup_mark cg;		/* cgroup weights (cgroup.bpf.c) */
	u8 kernel_wakeup;	/* a kernel thread woken: VRQ_PRIO_KERNEL (task_prio) until it uses up its
				 * slice. enqueue writes it on a wake-up; renew_deadline clears it */
	u64 enq_at;		/* enqueue: when it was last queued; rescue_starved_sched_idle reads it */
	/* hand-offs between callbacks */
	u8 wake_sync;		/* select_cpu -> the enqueue of the same wake-up: SCX_WAKE_SYNC (the
				 * waker is about to sleep) or a vfork parent woken by its child's exec
				 * (vrq_wakeup_spares_waker), so the wakee preempts nobody. select_cpu
				 * writes it; enqueue takes it (reads and clears, vrq_take_once:
				 * select_cpu is skipped for a task allowed on one CPU); running clears
				 * it (a task select_cpu inserted itself is never enqueued) */
	struct delay_placement delay;	/* delayed migration (delay.bpf.c): select_cpu -> enqueue -> running */
	struct sticky_mark sticky;	/* sticky tasks (sticky.bpf.c) */
	struct latency_waiter_mark target;	/* target latency (latency.bpf.c) */
	/* dispatch -> enqueue: the task that just ran lost its CPU in that CPU's dispatch, which refreshed
	 * its deadline; enqueue (ready_to_queue) takes it as is while that CPU has begun no other turn.
	 * prev_keeps_cpu writes both; ready_to_queue clears refreshed_cpu */
	s32 refreshed_cpu;	/* that CPU + 1 (0: none) */
	u64 refreshed_turn_seq;	/* its turn_seq then */
	/* short runners (policy.h: vrq_short_runner): CPU time since its last sleep, and the average of
	 * such runs. charge_slice adds to run_ns; stopping (end_run) averages it and starts a new one.
	 * Under-share wake-ups read the average too */
	u64 run_ns;
	u64 avg_run_ns;
	/* CPU time run beyond the slices given and not yet repaid (policy.h: vrq_slice_payment): a slice's
	 * overrun to the tick, and the top-ups of --handoff-slice (stopping adds them; vrq_handoff_keeps_turn
	 * bounds them). repay_overrun takes it out of the slice of each renewal */
	u64 owed_ns;
	/* under-share wake-ups (policy.h: vrq_under_share): when it last fell asleep (0: awake), and the
	 * average of its sleeps. stopping writes slept_at; runnable averages the sleep and clears it */
	u64 slept_at;
	u64 avg_sleep_ns;
	struct lat_marks lat;		/* latency histograms (stats.bpf.c) */
	/* session and thread groups (groups.bpf.c): the group's slot it last counted in (group_slots),
	 * where runnable looks first and the multiplier reads the group's average; and where it counts
	 * while runnable (enum vrq_group_in). runnable writes both, quiescent takes group_in */
	u32 group_slot;
	u8 group_in;
};

/* What dispatch found at the heads of the queues (find_best_head). */
struct best_head {
	u32 q;			/* the queue whose head has the smallest key (VRQ_NO_QUEUE: none) */
	u32 dist;		/* its distance from this CPU, which breaks ties */
	u64 priodl;		/* its key: the head's priodl, later by the sticky offset if it is
				 * sticky elsewhere */
	u64 sticky_passed;	/* the smallest priodl among the heads made later as sticky
				 * ((u64)-1: none) */
	s32 pick_pid;		/* in this CPU's own queue, the task behind a head sticky to
				 * another CPU that has the smaller key (0: the head;
				 * sticky_pick_in_queue) */
};

#endif /* __VRQ_CTX_BPF_H */
