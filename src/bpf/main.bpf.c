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
 * The rules themselves (deadline, priodl, slice, distances) live in policy.h. This file holds the knobs,
 * the sched_ext callbacks -- each a short list of steps, carried out by the file of the concern it
 * belongs to (vrq.bpf.h lists them); the cgroup callbacks are cgroup.bpf.c's own -- and the ops table;
 * every path counts itself in the `stats` map (stats.bpf.c).
 */
#include "vrq.bpf.h"

char _license[] SEC("license") = "GPL";
UEI_DEFINE(uei);

/*
 * Knobs, set by the loader before load (src/cli.rs: their flags; the defaults here are the same). Each is
 * named as its flag in snake_case, a time in ns where the flag gives ms or us (a Rust test checks it).
 */
const volatile u32 queue = VRQ_QUEUE_LLC;
const volatile u64 rr_interval_ns = 6ULL * VRQ_NSEC_PER_MSEC;
const volatile u64 min_slice_ns = 250ULL * VRQ_NSEC_PER_USEC;
const volatile u64 max_round_ns = 1000ULL * VRQ_NSEC_PER_MSEC;
const volatile u64 target_latency_ns = 2ULL * VRQ_NSEC_PER_MSEC;	/* 0: off (BFS: rr_interval however many wait) */
const volatile u64 round_target_ns = 12ULL * VRQ_NSEC_PER_MSEC;	/* 0: off (rounds as long as the queue makes them) */
const volatile u64 target_floor_ns = 1000ULL * VRQ_NSEC_PER_USEC;	/* the target's shortest turn */
const volatile bool hold_floor = false;	/* latency waiters' turns hold at the floor to the round target's reach */
const volatile u64 short_run_ns = 6ULL * VRQ_NSEC_PER_MSEC;	/* short runners count as latency waiters (0: off) */
const volatile bool short_run_renew = true;	/* a short runner's slice left below its average run is renewed */
const volatile bool under_share_first = true;	/* a task waking under its CPU share goes first */
const volatile bool handoff_slice = true;	/* a long runner preempted by its wakee keeps its place, next run a whole slice */
const volatile u32 wake_credit = 0;		/* % of the offset; 0: off (BFS: a passed deadline renews from now) */
const volatile bool sync_handoff = true;	/* run a sync wake-up's wakee on the waker's CPU */
const volatile bool vfork_handoff = true;	/* run a vfork child on its parent's CPU */
const volatile bool preempt_local = true;	/* preempt the CPU handling the wake-up when it may */
const volatile u64 idle_bound_ns = 2000ULL * VRQ_NSEC_PER_MSEC;
const volatile u32 yield_type = VRQ_YIELD_BETTER;
const volatile u32 group_accounting = VRQ_GROUP_SESSION;
const volatile bool fork_depth_penalty = false;
const volatile u32 freq_threshold = 0;		/* % of the maximum performance; 0: frequency-blind CPU selection */
const volatile bool capacity_aware = true;	/* order idle CPUs of one distance by capacity, when capacities differ */
const volatile u64 migration_delay_ns = 0;		/* 0: no delayed migration */
const volatile bool sticky = false;
const volatile bool stay_behind_kthread = true;	/* a task a bound kernel thread preempts resumes behind it */
const volatile u32 nr_cpus = 1;
const volatile struct vrq_cpu_topo cpu_topo[VRQ_MAX_CPUS];
/* 1 for each CPU on line when the loader read the topology: only those have a cpu_topo entry */
const volatile u8 cpu_in_topology[VRQ_MAX_CPUS];

/*
 * ops.select_cpu: a task wakes (or is forked, or execs); runs on the waker's CPU and returns the CPU the
 * task goes to. Steps: start the hand-offs to enqueue (wake_sync, delay.scaled_cpu); sync hand-off;
 * else look for an idle CPU (pick_idle_cpu): a scaled one passed over for delayed migration sends the
 * task to the waker (enqueue follows there), a claimed one gets the task straight into its local DSQ
 * (enqueue is not called); none: the previous CPU, and enqueue follows. Writes the task's deadline and
 * time_slice when it inserts the task.
 */
s32 BPF_STRUCT_OPS(vrq_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx_of(p);

	if (!tctx)
		return prev_cpu;
	tctx->wake_sync = vrq_wakeup_spares_waker(!!(wake_flags & SCX_WAKE_SYNC), vfork_handoff,
						  parent_woken_by_exec(p));
	tctx->delay.scaled_cpu = -1;
	return select_cpu_for(p, tctx, prev_cpu, wake_flags);
}

/*
 * ops.enqueue: @p must be queued -- select_cpu found no idle CPU, or it was preempted or its slice ended
 * while others wait, or its properties changed while queued or running; SCX_ENQ_LAST: dispatch let it
 * keep its CPU. Steps: take the wake-up hand-off (wake_sync); ready it (ready_to_queue); SCX_ENQ_LAST:
 * keep it on its CPU (keep_on_cpu); preempted by a kernel thread bound to its CPU with nothing waiting:
 * behind it on that CPU (stays_behind_kthread); else insert it into its CPU's queue by priodl, counted as
 * a latency waiter if it is one (count_latency_waiter); delayed migration (hold_for_delay); a task still
 * running with slice left needs no CPU; else kick_idle_or_preempt. Reads delay.scaled_cpu (taken); writes
 * deadline, time_slice, kernel_wakeup, enq_at, sticky_cpu (SCX_ENQ_LAST), delay.waker / delay.gen and
 * the waker CPU's delay (delayed migration), running_priodl (SCX_ENQ_LAST).
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
	if (enq_flags & SCX_ENQ_REENQ)
		stat_inc(VRQ_STAT_REENQUEUED);	/* handed back by a CPU a higher class took */
	sync_wakeup = vrq_take_once(&tctx->wake_sync);
	priodl = ready_to_queue(p, tctx, q, enq_flags & SCX_ENQ_WAKEUP);
	if (enq_flags & SCX_ENQ_LAST) {
		keep_on_cpu(tctx, cpu_ctx_of(cpu), priodl);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->time_slice, enq_flags);
		stat_inc(VRQ_STAT_KEEP_LAST);
		return;
	}
	if (stays_behind_kthread(p, tctx, cpu, q, enq_flags)) {
		count_latency_waiter(tctx, enq_flags);
		return;
	}
	if ((enq_flags & SCX_ENQ_WAKEUP) && preempt_local_direct(p, tctx, priodl, sync_wakeup, enq_flags)) {
		count_latency_waiter(tctx, enq_flags);
		return;
	}
	mark_queue_used(q);
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
	kick_idle_or_preempt(p, priodl, enq_flags & SCX_ENQ_WAKEUP, sync_wakeup);
}

/*
 * ops.dispatch: CPU @cpu needs a task (its task blocked, its slice ran out, or it was kicked); @prev is
 * the task that just ran (NULL if the CPU was idle). Reads every queue's head and @prev's task_ctx;
 * writes @prev's time_slice / last_charged / deadline (it competes), this CPU's scaled bit, the chosen
 * queue's depth figures and sched_idle_scan_at of its own.
 */
void BPF_STRUCT_OPS(vrq_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 own = queue_of_cpu(cpu);
	u64 now = scx_bpf_now();
	struct best_head best;

	if ((u32)cpu >= VRQ_MAX_CPUS)
		return;
	update_cpu_perf(cpu);
	if (rescue_starved_sched_idle(cpu, own, now))
		return;
	find_best_head(cpu, own, &best);
	if (prev && prev_keeps_cpu(cpu, prev, own, &best, now))
		return;
	if (best.q != VRQ_NO_QUEUE)
		count_sticky_passed(&best, best.priodl);
	if (take_best(own, &best))
		return;
	/* the head was gone by the take: beside a higher class prev stays by its slice, as above */
	if (prev && keep_served(cpu, prev))
		return;
	count_goidle(cpu, prev);
	cpu_goes_idle(cpu, now);
}
/*
 * ops.running: @p starts on its CPU. Steps: a task taken from another queue moves onto this CPU's clock
 * (refresh_deadline); start charging it and its group (last_charged, group_charge); its wait ends
 * (latency histograms); the hand-offs that end with a turn end (wake_sync, sticky_cpu, delay.waker /
 * the waker's delay.pending); start the turn (start_turn: turn_seq, a shrunk slice and its timer) and
 * publish its priodl (running_priodl).
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
		refresh_deadline(p, tctx, q, false, VRQ_QUEUED_UNREAD);
	tctx->last_charged = scx_bpf_now();
	group_charge(tctx, tctx->last_charged, true);
	lat_wait_ends(p, tctx, tctx->last_charged);
	tctx->wake_sync = 0;		/* that wake-up is over, enqueued or not */
	uncount_latency_waiter(tctx);
	sticky_ends(tctx, cpu);
	delayed_task_runs(tctx);
	if (cctx)
		start_turn(p, tctx, cpu, q);
	set_running_priodl(cctx, task_priodl(p, tctx));
}

/*
 * ops.tick: every scheduler tick of a CPU running @p (4 ms at HZ=250). Steps: with a faster clock,
 * update the queues' clock rate (clock_update); advance the CPU's queue clock; charge @p's time_slice
 * and its group (group_charge); look at the CPU's frequency (scaled) and capacity (cap_tick) again; with
 * delayed migration, check whether the tasks placed on this CPU waited out the delay (end_delay); the
 * kernel's slice ran out and nothing waits: renew it in place (renew_on_tick).
 */
void BPF_STRUCT_OPS(vrq_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	u64 now = scx_bpf_now();
	u32 q = queue_of_cpu(cpu);

	if (faster_clock())
		clock_update(now);
	advance_niffies(q, now);
	if (tctx) {
		charge_slice(tctx, now);
		group_charge(tctx, now, false);
	}
	update_cpu_perf(cpu);
	cap_tick(cpu, now);
	if (migration_delay_ns)
		delay_tick(cpu, now);
	if (sync_handoff)
		end_sync_handoff_wait(p, cpu, now);
	if (tctx && p->scx.slice == 0 && !anything_waiting())
		renew_on_tick(p, tctx, cpu, q);
}

/*
 * ops.stopping: @p leaves its CPU, still @runnable (preempted, slice over, yielded) or not (it sleeps).
 * Steps: charge its time_slice and its group (group_charge); with a target latency, a turn over uses up its slice
 * (end_turn_if_over) -- unless, with --handoff-slice, it is a hand-off that keeps the turn and gets a
 * whole slice (vrq_handoff_keeps_turn); its run for the short-runner rule ends if it sleeps or its
 * wakee preempted it (end_run); its turn ends for the latency histograms (lat); asleep with its slice
 * used up: renew (renew_before_sleep); sticky mark (sticky_cpu, taking yielded); the CPU runs nothing
 * (running_priodl 0).
 */
void BPF_STRUCT_OPS(vrq_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx_of(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (tctx) {
		u64 now = scx_bpf_now();

		charge_slice(tctx, now);
		group_charge(tctx, now, false);
		/* the top-up is worked out only where the rule may apply: not on every stop with it off */
		u64 added = handoff_slice && runnable ? vrq_slice_top_up(tctx->time_slice, rr_interval_ns) : 0;
		bool handoff = handoff_slice && runnable && cctx &&
			       vrq_handoff_keeps_turn(handoff_slice, cctx->waker_preempted,
						      tctx->owed_ns + added, rr_interval_ns,
						      tctx->avg_run_ns, tctx->run_ns, short_run_ns);

		if (runnable && !handoff)
			end_turn_if_over(p, tctx, cpu, now);
		end_run(tctx, cpu, runnable);
		if (handoff) {
			tctx->time_slice = rr_interval_ns;
			tctx->owed_ns += added;
			stat_inc(VRQ_STAT_HANDOFF_SLICE);
		}
		lat_turn_ends(p, tctx, now, runnable);
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
		tctx->sticky.yielded = vrq_yield_gives_up_cpu(yield_type);
	if (vrq_yield_expires_slice(yield_type) && tctx)
		tctx->time_slice = 0;
	if (vrq_yield_gives_up_cpu(yield_type))
		from->scx.slice = 0;
	return false;
}

/*
 * ops.runnable: @p becomes runnable (woken, or new, or its properties change). Its wake-up wait begins
 * (lat.wait_since, lat.wait_requeue); its sleep is averaged (avg_sleep_ns); it counts in its group while
 * it is runnable (group_task_runnable; quiescent takes it off).
 */
void BPF_STRUCT_OPS(vrq_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;
	u64 now;

	if (!(tctx = task_ctx_of(p)))
		return;
	/* one clock read for the three steps: each read is a kfunc call, and this runs at every wake-up */
	now = scx_bpf_now();
	lat_wait_begins(p, tctx, now);
	sleep_ends(tctx, now);
	group_task_runnable(p, tctx, now);
}

/* ops.quiescent: @p is no longer runnable (it sleeps, or leaves): no longer a latency waiter, one fewer
 * in its group (group_task_quiescent). */
void BPF_STRUCT_OPS(vrq_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx;

	if (!(tctx = task_ctx_of(p)))
		return;
	uncount_latency_waiter(tctx);
	group_task_quiescent(tctx);
}
/*
 * ops.init_task: @p enters the scheduler (forked, or already there when it loads). Creates its task_ctx:
 * a used-up slice, so that its first enqueue gives it a deadline from now; on no queue's clock yet;
 * no hand-off under way (task_ctx_start); its fork depth (--fork-depth-penalty); its group's part
 * (group_task_init).
 */
s32 BPF_STRUCT_OPS(vrq_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	task_ctx_start(tctx);
	tctx->fork.fork_depth = fork_depth_of(p);
	group_task_init(tctx, args);
	return 0;
}
/*
 * ops.init: the scheduler loads. The queues (init_queues: cpu_queue, queue_rep_cpu, queue_nr_cpus,
 * nr_queues, a DSQ each), every CPU's masks, the fast / scaled and big / little masks, the slice timers.
 */
s32 BPF_STRUCT_OPS_SLEEPABLE(vrq_init)
{
	return init_queues() ?: init_cpu_masks() ?: init_perf_masks() ?: init_cap_masks() ?: init_slice_timers();
}

/* CPU hotplug (hotplug.bpf.c says what follows the CPU). */
void BPF_STRUCT_OPS(vrq_cpu_online, s32 cpu)
{
	cpu_goes(cpu, true);
}

void BPF_STRUCT_OPS(vrq_cpu_offline, s32 cpu)
{
	cpu_goes(cpu, false);
}

/* A higher class (real-time, deadline) takes a CPU, and gives it back (cpu_release.bpf.c). */
void BPF_STRUCT_OPS(vrq_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	cpu_released(cpu);
}

void BPF_STRUCT_OPS(vrq_cpu_acquire, s32 cpu, struct scx_cpu_acquire_args *args)
{
	cpu_reacquired(cpu);
}

/* The scheduler ends: sched_ext records why (uei), then the loader is woken (init.bpf.c). */
void BPF_STRUCT_OPS(vrq_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
	notify_loader_of_exit();	/* after the record, so that the loader woken by it finds it */
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
	       .cpu_release	= (void *)vrq_cpu_release,
	       .cpu_acquire	= (void *)vrq_cpu_acquire,
	       .cgroup_init	= (void *)vrq_cgroup_init,
	       .cgroup_exit	= (void *)vrq_cgroup_exit,
	       .cgroup_move	= (void *)vrq_cgroup_move,
	       .cgroup_set_weight = (void *)vrq_cgroup_set_weight,
	       .cgroup_set_idle	= (void *)vrq_cgroup_set_idle,
	       .init		= (void *)vrq_init,
	       .exit		= (void *)vrq_exit,
	       .timeout_ms	= VRQ_WATCHDOG_MS,
	       .name		= "vrq");
