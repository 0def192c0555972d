/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's slice timer: a slice shrunk below the tick by a long queue (--max-round-ms) or shortened by
 * the target latency ends on time (one BPF timer per CPU, armed only for slices shorter than
 * rr_interval), and every turn's start (start_turn) is recorded for it and for the target latency's
 * longest turn.
 */
#include "vrq.bpf.h"

/*
 * One timer per CPU to end slices shorter than the scheduler tick. sched_ext ends a slice only on a
 * tick (4 ms at HZ=250); when a long queue shrinks the slice below rr_interval (--max-round-ms), a
 * round would otherwise still cost a tick per task -- 10,000 tasks on 2 CPUs, 20 s, past the
 * watchdog. Armed only for slices shorter than rr_interval, so the normal case costs nothing.
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

/* The slice of the turn it was armed for is over: make that CPU reschedule, if it is still that turn. */
static int slice_timer_fired(void *map, int *key, struct slice_timer *t)
{
	struct cpu_ctx *cctx = cpu_ctx_of(*key);

	if (cctx && cctx->timer_seq == cctx->turn_seq && may_kick()) {
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
		stat_inc(VRQ_STAT_SLICE_TIMER);
	}
	return 0;
}

/*
 * Start this CPU's (@cpu's) next turn (its cpu_ctx's turn_seq). While the queue is long, a slice is
 * shrunk (--max-round-ms), or shortened by the target latency, and must be ended by the slice timer:
 * sched_ext would end it only on the next tick. A slice given while the queue was still short (a crowd
 * woken at once) is cut to what the queue allows now, or the first round would last as long as a fixed
 * slice makes it. While the queue is short, ordinary slices and
 * their remainders end on the tick, as the deadlines assume.
 */
__hidden int start_turn(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);
	struct slice_timer *st;
	u32 key = CPU_IDX(cpu);
	u64 slice;

	if (!cctx)
		return 0;
	cctx->turn_seq++;
	cctx->waker_preempted = 0;
	cctx->kthread_preempted = 0;
	cctx->sync_handoff_at = 0;
	cctx->turn_started = tctx->last_charged;
	slice = task_slice(p, q, scx_bpf_dsq_nr_queued(q), turn_rate(), NULL);
	if (slice >= rr_interval_ns)
		return 0;
	if (p->scx.slice > slice) {
		p->scx.slice = slice;
		tctx->time_slice = slice;
		stat_inc(VRQ_STAT_TURN_START_CUT);
	}
	cctx->timer_seq = cctx->turn_seq;
	if ((st = bpf_map_lookup_elem(&slice_timers, &key)))
		bpf_timer_start(&st->timer, p->scx.slice, BPF_F_TIMER_CPU_PIN);
	return 0;
}

/* One timer per CPU, its callback slice_timer_fired. */
__hidden s32 init_slice_timers(void)
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
