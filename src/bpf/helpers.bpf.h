/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small helpers every file of scx_vrq's BPF uses (included by vrq.bpf.h): counters, the task's and
 * a CPU's state, queues and topology, a task's priority and slice. static __always_inline, as they were
 * before the split: each caller gets its own copy, so the verifier sees them in the caller's context.
 */
#ifndef __VRQ_HELPERS_BPF_H
#define __VRQ_HELPERS_BPF_H

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

static __always_inline struct task_ctx *task_ctx_of(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

/*
 * A new task's task_ctx (init_task): a used-up slice, so that its first enqueue gives it a deadline from
 * now; on no queue's clock yet; no hand-off under way (delayed migration, sticky).
 */
static __always_inline void task_ctx_start(struct task_ctx *tctx)
{
	tctx->time_slice = 0;
	tctx->deadline = 0;
	tctx->queue = VRQ_NO_QUEUE;
	tctx->delay.waker = -1;
	tctx->delay.scaled_cpu = -1;
	tctx->sticky.sticky_cpu = -1;
}

static __always_inline struct cpu_ctx *cpu_ctx_of(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

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

/* Does the queues' clock ever run faster than real time (--target-latency-ms, --round-target-ms)? */
static __always_inline bool faster_clock(void)
{
	return target_latency_ns || round_target_ns;
}

/*
 * May queue @q hold a task? With --queue cpu, a queue whose flag is clear is empty: a task goes into
 * queue q only from enqueue under CPU q's run-queue lock, which sets the flag first (mark_queue_used),
 * and only CPU q clears it, under the same lock, when its dispatch finds the queue empty
 * (own_queue_found_empty). So the scans over every queue (dispatch's heads, the tick's depths) skip the
 * empty ones for a load instead of a kfunc call: on a machine of many CPUs most queues are empty most of
 * the time. The other modes have few queues, each shared by several CPUs (no single owner to clear the
 * flag): always true.
 */
static __always_inline bool queue_may_hold(u32 q)
{
	return queue != VRQ_QUEUE_CPU || READ_ONCE(queues[QUEUE_IDX(q)].may_hold);
}

static __always_inline void mark_queue_used(u32 q)
{
	if (queue == VRQ_QUEUE_CPU && !READ_ONCE(queues[QUEUE_IDX(q)].may_hold))
		WRITE_ONCE(queues[QUEUE_IDX(q)].may_hold, 1);
}

/* --queue cpu: CPU @q's dispatch found its own queue empty, under the queue's lock: clear the flag. */
static __always_inline void own_queue_found_empty(u32 q)
{
	if (queue == VRQ_QUEUE_CPU)
		WRITE_ONCE(queues[QUEUE_IDX(q)].may_hold, 0);
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
 * (seen on Debian's 7.3.4 under QEMU 10.0.2: seven of eight CPUs off and back under 16
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

static __always_inline s32 task_nice(const struct task_struct *p)
{
	return (s32)p->static_prio - 120;
}

/*
 * The task's priority class (policy.h: vrq_task_prio); @tctx may be NULL (no kernel-wakeup boost). A
 * task of a cpu.idle cgroup (--group-accounting cgroup) competes as SCHED_IDLE, as the kernel runs it.
 */
static __always_inline u32 task_prio(const struct task_struct *p, const struct task_ctx *tctx)
{
	u32 policy = tctx && tctx->cg.idle ? VRQ_SCHED_IDLE : p->policy;

	return vrq_task_prio(policy, !!(p->flags & PF_EXITING), tctx && tctx->kernel_wakeup);
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

/* The task wakes (runnable): the sleep stopping marked (slept_at) is averaged (under-share wake-ups). */
static __always_inline void sleep_ends(struct task_ctx *tctx, u64 now)
{
	if (tctx->slept_at) {
		tctx->avg_sleep_ns = vrq_run_avg(tctx->avg_sleep_ns, now - tctx->slept_at);
		tctx->slept_at = 0;
	}
}

/* The one writer of a CPU's running_priodl (0: nothing runs there), which kick_idle_or_preempt reads. */
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
	tctx->sticky.sticky_cpu = -1;
	set_running_priodl(cctx, priodl);
}

/* The CPUs within distance @dist of @cctx's CPU (its masks built at init); NULL for other distances. */
static inline const struct cpumask *distance_mask(struct cpu_ctx *cctx, u32 dist)
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

/* Frequency-aware selection: was @cpu frequency-scaled at its last look (update_cpu_perf)? */
static __always_inline bool cpu_scaled(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	return cctx && cctx->scaled;
}

/* A CPU of @mask that is idle right now, without claiming it; -1 if none. */
static inline s32 idle_cpu_in(const struct cpumask *mask)
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

/* Frequency-aware selection: the fast / scaled masks (the map is freq.bpf.c's). */
static __always_inline struct perf_masks *perf_masks_get(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&perf_masks, &zero);
}

/* A sticky head that would have beaten the task that runs (@winner) counted as later: say so. */
static __always_inline void count_sticky_passed(const struct best_head *best, u64 winner)
{
	if (best->sticky_passed < winner)
		stat_inc(VRQ_STAT_STICKY_PASSED);
}

/*
 * Does this callback run in the current task's own context -- did the task itself, in a system call
 * or as a kernel thread, call into the scheduler, rather than an interrupt that came while it ran? The
 * running task's hand-off rules (a waker its wakee preempts, a vfork's end) hold only for the former:
 * an interrupt runs in whatever task it interrupted, which woke nobody.
 *
 * Told apart by where the callback runs, not by the preempt count's interrupt bits (bpf_in_task()): as
 * BPF reads them they are not the interrupt's on every kernel -- a timer's wake-up in hard interrupt
 * context has read as task context there every time. The task's own context runs on its kernel stack,
 * below the register frame its entry saved at the stack's top (bpf_task_pt_regs). An interrupt that
 * came in kernel mode runs on the CPU's interrupt stack instead: outside that range. One that came in
 * user mode may run on the task's stack (x86-64 switches stacks only from kernel mode), but then the
 * saved frame is the interrupt's, which is no system call's (orig_ax -1). A kernel thread's frame is
 * zeroed: its own context. The two addresses are copied out as numbers with one read: the verifier
 * allows no arithmetic on the stack pointer.
 */
static __always_inline bool in_own_context(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	u64 base = (u64)cur->stack, addr[2] = {};
	void *ptrs[2] = { &addr, regs };

	if (!regs || bpf_probe_read_kernel(addr, sizeof(addr), ptrs))
		return false;
	if (addr[0] < base || addr[0] >= addr[1])
		return false;
#if defined(bpf_target_x86)
	return regs->orig_ax != -1;
#else
	return true;
#endif
}

#endif /* __VRQ_HELPERS_BPF_H */
