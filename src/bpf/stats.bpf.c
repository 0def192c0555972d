/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's statistics: the counters (one per-CPU array slot each, enum vrq_stat in intf.h; every file
 * counts through stat_inc / stat_add in helpers.bpf.h) and the wait and turn-length histograms the
 * loader reads (struct vrq_lat_hists), with the callbacks' steps that record them.
 */
#include "vrq.bpf.h"

/*
 * Wait and turn-length histograms (struct vrq_lat_hists, intf.h), always on. VRQ_LAT_HIST=0 at build
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

#if VRQ_LAT_HIST
/*
 * Count the time from @since to @now in this CPU's histogram @kind (0 wake, 1 requeue, 2 turn) of @p's
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
		h->turn[cls][b]++;
}
#endif

/*
 * Work conservation: @p's wait from @wait_since ends at @now on this CPU, which is no longer idle. If a
 * CPU @p may run on is idle (one looked at: a lower bound), the part of the wait it sat idle beyond
 * the bound counts (vrq_idle_wait_ns). The idle mask is empty under load: one kfunc call then.
 */
static __always_inline void idle_wait_check(const struct task_struct *p, u64 wait_since, u64 now)
{
	struct cpu_ctx *cctx = cpu_ctx_of(bpf_get_smp_processor_id());
	const struct cpumask *idle;
	u64 waited = 0;
	u32 cpu;

	if (cctx)
		cctx->idle_since = 0;
	if (!wait_since || now - wait_since <= VRQ_IDLE_WAIT_GRACE_NS)
		return;
	idle = scx_bpf_get_idle_cpumask();
	cpu = bpf_cpumask_any_and_distribute(idle, p->cpus_ptr);
	scx_bpf_put_idle_cpumask(idle);
	if (cpu < nr_cpus && (cctx = cpu_ctx_of(cpu)))
		waited = vrq_idle_wait_ns(now, wait_since, cctx->idle_since);
	if (!waited)
		return;
	stat_inc(VRQ_STAT_IDLE_WAIT);
	stat_add(VRQ_STAT_IDLE_WAIT_US, waited / 1000);
}

/* dispatch found nothing for @cpu: it goes idle now, unless already idle (work conservation). */
__hidden int cpu_goes_idle(s32 cpu, u64 now)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (cctx && !cctx->idle_since)
		cctx->idle_since = now;
	return 0;
}

/* Latency histograms: @p's wait (after a wake-up or a deschedule) ends at @now: it runs. */
__hidden int lat_wait_ends(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now)
{
#if VRQ_LAT_HIST
	idle_wait_check(p, tctx->lat.wait_since, now);
	if (tctx->lat.wait_since)
		lat_record(p, tctx->lat.wait_requeue, tctx->lat.wait_since, now);
	tctx->lat.wait_since = 0;
	tctx->lat.turn_since = now;
#endif
	return 0;
}

/* Latency histograms: @p's turn ends at @now; still @runnable, it waits from now until it runs again. */
__hidden int lat_turn_ends(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now, bool runnable)
{
#if VRQ_LAT_HIST
	if (tctx->lat.turn_since)
		lat_record(p, 2, tctx->lat.turn_since, now);
	tctx->lat.turn_since = 0;
	tctx->lat.wait_since = runnable ? now : 0;
	tctx->lat.wait_requeue = 1;
#endif
	return 0;
}

/*
 * Latency histograms: @p's wake-up wait begins at @now -- only if no wait is under way, and as a requeued wait
 * for the running task: runnable also follows a change of a task's nice or affinity (dequeued and
 * queued again), which continues the wait of a waiting task, and for the running task comes between a
 * stopping() and a running() -- no wake-up. (Every turn still follows one recorded wait.)
 */
__hidden int lat_wait_begins(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now)
{
#if VRQ_LAT_HIST
	if (!tctx->lat.wait_since) {
		tctx->lat.wait_since = now;
		tctx->lat.wait_requeue = scx_bpf_task_running(p);
	}
#endif
	return 0;
}

