/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's BPF side, shared by its .bpf.c files (one per concern, linked into one object by build.rs):
 * the knobs (defined in main.bpf.c), the state every concern reads (ctx.bpf.h: task_ctx, cpu_ctx), the
 * globals each file owns (extern here), the maps more than one file reaches (defined here, weak; the
 * owner named beside each), the small helpers every file uses (helpers.bpf.h, static __always_inline:
 * inlined where they are called, as before the split) and the functions one file offers another.
 *
 * Those are __hidden: callable from another file, and verified as static subprograms -- walked in each
 * caller's state, with its argument values known (bpf_helpers.h: "treated as static by the verifier"),
 * as the static and inline functions of the one main.bpf.c were. A function that is global to the
 * verifier (default visibility) is walked once per program with unknown arguments instead, which can
 * cost less (place_under_share, pick_idle_cpu: kept global on purpose) but loses what the caller knew:
 * a knob's value behind a bool argument, a constant `woken`. The task is passed as __arg_trusted, the
 * task_ctx as __arg_nonnull (what a global function would need); no cpu_ctx pointer (a map value with
 * kptrs may not be passed to a global function): they take the CPU and look it up.
 */
#ifndef __VRQ_BPF_H
#define __VRQ_BPF_H

#include <scx/common.bpf.h>
#include "intf.h"
#include "policy.h"

/* Knobs, set by the loader before load (src/cli.rs: their flags); defined in main.bpf.c. */
extern const volatile u32 queue;
extern const volatile u64 rr_interval_ns;
extern const volatile u64 min_slice_ns;
extern const volatile u64 max_round_ns;
extern const volatile u64 target_latency_ns;
extern const volatile u64 round_target_ns;
extern const volatile u64 target_floor_ns;
extern const volatile bool hold_floor;
extern const volatile u64 short_run_ns;
extern const volatile bool short_run_renew;
extern const volatile bool under_share_first;
extern const volatile bool handoff_slice;
extern const volatile bool stay_behind_kthread;
extern const volatile u32 wake_credit;
extern const volatile bool sync_handoff;
extern const volatile bool vfork_handoff;
extern const volatile bool preempt_local;
extern const volatile u64 idle_bound_ns;
extern const volatile u32 yield_type;
extern const volatile u32 group_accounting;
extern const volatile bool fork_depth_penalty;
extern const volatile u32 freq_threshold;
extern const volatile bool capacity_aware;
extern const volatile u64 migration_delay_ns;
extern const volatile bool sticky;
extern const volatile u32 nr_cpus;
extern const volatile struct vrq_cpu_topo cpu_topo[VRQ_MAX_CPUS];
extern const volatile u8 cpu_in_topology[VRQ_MAX_CPUS];

/* Derived at init from the knobs and the topology (init.bpf.c), kept by CPU hotplug (hotplug.bpf.c). */
extern u32 cpu_queue[VRQ_MAX_CPUS];
extern u32 queue_rep_cpu[VRQ_MAX_QUEUES];
extern u32 nr_queues;
extern s32 queue_nr_cpus[VRQ_MAX_QUEUES];
extern s32 nr_online_cpus;
extern u8 cpu_is_online[VRQ_MAX_CPUS];

/* How many CPUs of the topology are of each capacity (capacity.bpf.c; both 0 without --capacity-aware). */
extern s32 nr_big_cpus;
extern s32 nr_little_cpus;

/* The queues' state (deadline.bpf.c), also read by the loader. */
extern struct vrq_queue queues[VRQ_MAX_QUEUES];

/* The clock the queues' niffies follow, and the latency waiters that set its rate (latency.bpf.c). */
extern u64 clock_mark;
extern u64 clock_ahead;
extern u64 clock_rate;
extern s64 latency_waiters;
extern u64 waiters_gen;

#define VRQ_NO_QUEUE ((u32)-1)

#include "ctx.bpf.h"

/*
 * Array indexes are masked as well as range-checked: the verifier tracks a mask through the compiler's
 * transformations where it can lose a plain comparison. VRQ_MAX_CPUS is a power of two.
 */
#define CPU_IDX(cpu) ((u32)(cpu) & (VRQ_MAX_CPUS - 1))
#define QUEUE_IDX(q) ((u32)(q) & (VRQ_MAX_QUEUES - 1))

/*
 * The maps more than one file reads, defined here once, weak, and merged into one by the linker; the
 * comment names the file that owns each (writes it, or creates its entries). Not `extern` in the others
 * with a strong definition in the owner: libbpf-cargo links each object once on its own before the
 * final link, and that first pass binds an unresolved extern map to a size-zero symbol in .maps, which
 * the final link then takes for a second definition ("conflicting non-weak symbol"); nor a strong
 * definition beside weak ones: libbpf's linker then moves the symbol but not its BTF, and the map is
 * not found at load ("map relo failed to find map"). All weak, the first object's definition stands.
 */
struct vrq_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct vrq_stats);
};
struct vrq_stats_map stats __weak SEC(".maps");	/* stats.bpf.c */

struct vrq_task_ctxs_map {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
};
struct vrq_task_ctxs_map task_ctxs __weak SEC(".maps");	/* main.bpf.c (init_task creates it) */

struct vrq_cpu_ctxs_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
};
struct vrq_cpu_ctxs_map cpu_ctxs __weak SEC(".maps");	/* init.bpf.c (init builds it) */

struct vrq_perf_masks_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct perf_masks);
};
struct vrq_perf_masks_map perf_masks __weak SEC(".maps");	/* freq.bpf.c */

struct vrq_cap_masks_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cap_masks);
};
struct vrq_cap_masks_map cap_masks __weak SEC(".maps");	/* capacity.bpf.c */

#include "helpers.bpf.h"

/*
 * What each file offers the others (global functions). Functions that would return a pointer or take
 * a cpu_ctx stay static in their file or inline in helpers.bpf.h.
 */
#define __task __arg_trusted		/* the task a callback was given, passed on */
#define __tctx __arg_nonnull		/* its task_ctx, looked up and checked by the caller */

/* deadline.bpf.c: the deadline and its slice */
u64 advance_niffies(u32 q, u64 now);
/* refresh_deadline's @queued_read when the caller has not read the queue's depth */
#define VRQ_QUEUED_UNREAD (-1LL)
u64 refresh_deadline(struct task_struct *p __task, struct task_ctx *tctx __tctx, u32 q, bool woken,
		     s64 queued_read);
u64 ready_to_queue(struct task_struct *p __task, struct task_ctx *tctx __tctx, u32 q, bool woken);
bool anything_waiting(void);
int renew_on_tick(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q);
int renew_before_sleep(struct task_struct *p __task, struct task_ctx *tctx __tctx, bool runnable);

/* latency.bpf.c: the target latency's clock, short runners, under-share wake-ups */
int clock_update(u64 now);
int count_latency_waiter(struct task_ctx *tctx __tctx, u64 enq_flags);
int uncount_latency_waiter(struct task_ctx *tctx __tctx);
int place_under_share(struct task_ctx *tctx, u32 q, u64 queued, u64 niffies, u64 slice);
int end_longest_turn(s32 longest_cpu, u64 longest_since);
u64 turn_rate(void);
bool end_turn_if_over(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u64 now);
int end_run(struct task_ctx *tctx __tctx, s32 cpu, bool runnable);

/* select.bpf.c: CPU selection */
bool parent_woken_by_exec(struct task_struct *p __task);
s32 select_cpu_for(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 prev_cpu, u64 wake_flags);

/* preempt.bpf.c: waking an idle CPU or preempting one for a queued task */
bool preempt_local_direct(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 priodl,
			  bool sync_wakeup, u64 enq_flags);
int kick_idle_or_preempt(struct task_struct *p __task, u64 priodl, bool wakeup, bool sync_wakeup);
bool stays_behind_kthread(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q, u64 enq_flags);

/* dispatch.bpf.c: a CPU looks for work */
bool rescue_starved_sched_idle(s32 cpu, u32 q, u64 now);
int find_best_head(s32 cpu, u32 own, struct best_head *best);
bool prev_keeps_cpu(s32 cpu, struct task_struct *prev __task, u32 own, const struct best_head *best, u64 now);
bool keep_served(s32 cpu, struct task_struct *prev __task);
bool take_best(u32 own, const struct best_head *best);
int count_goidle(s32 cpu, struct task_struct *prev);

/* groups.bpf.c: group accounting, by mode (the callbacks' face), and the fork-depth penalty */
int group_task_init(struct task_ctx *tctx __tctx, struct scx_init_task_args *args);
int group_task_runnable(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now);
int group_task_quiescent(struct task_ctx *tctx __tctx);
int group_charge(struct task_ctx *tctx __tctx, u64 now, bool start);
u64 group_multiplier_of(u32 group, u32 slot);
u32 fork_depth_of(struct task_struct *p __task);

/* freq.bpf.c: frequency-aware selection */
int update_cpu_perf(s32 cpu);

/* capacity.bpf.c: capacity-aware placement */
int update_cpu_cap(s32 cpu, bool at_load);
int cap_tick(s32 cpu, u64 now);
s32 init_cap_masks(void);

/* delay.bpf.c: delayed migration */
bool delay_may_apply(struct task_struct *p __task, s32 waker, u64 wake_flags);
bool hold_for_delay(struct task_ctx *tctx __tctx, s32 cpu);
int delayed_task_runs(struct task_ctx *tctx __tctx);
int delay_tick(s32 cpu, u64 now);
int end_delay(s32 cpu);

/* sticky.bpf.c: BFS sticky tasks */
bool sticky_elsewhere(struct task_ctx *hctx, u32 q, u32 own);
bool sticky_to_other_cpu(struct task_ctx *hctx, s32 cpu);
int sticky_ends(struct task_ctx *tctx __tctx, s32 cpu);
int mark_sticky(struct task_struct *p __task, struct task_ctx *tctx __tctx, bool runnable);

/* stats.bpf.c: latency histograms */
int lat_wait_begins(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now);
int lat_wait_ends(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now);
int cpu_goes_idle(s32 cpu, u64 now);
int end_sync_handoff_wait(struct task_struct *p __task, s32 cpu, u64 now);
int lat_turn_ends(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now, bool runnable);

/* slice_timer.bpf.c: slices shorter than the tick */
int start_turn(struct task_struct *p __task, struct task_ctx *tctx __tctx, s32 cpu, u32 q);
s32 init_slice_timers(void);

/* init.bpf.c: queues and topology at load; the loader's wake-up at exit */
s32 init_queues(void);
s32 init_cpu_masks(void);
s32 init_perf_masks(void);
int notify_loader_of_exit(void);

/* hotplug.bpf.c */
int cpu_goes(s32 cpu, bool online);

/*
 * cgroup.bpf.c: cgroup weights (--group-accounting cgroup). The cgroup callbacks themselves, named by the
 * ops table in main.bpf.c (BPF_PROG's form: the context's array), which do nothing in the other modes;
 * the tasks' steps in cgroup mode, called by groups.bpf.c's group_task_* and group_charge; the stretch.
 */
s32 vrq_cgroup_init(unsigned long long *ctx);
void vrq_cgroup_exit(unsigned long long *ctx);
void vrq_cgroup_move(unsigned long long *ctx);
void vrq_cgroup_set_weight(unsigned long long *ctx);
void vrq_cgroup_set_idle(unsigned long long *ctx);
int cgroup_runnable(struct task_ctx *tctx __tctx);
int cgroup_quiescent(struct task_ctx *tctx __tctx);
int cgroup_task_init(struct task_ctx *tctx __tctx, struct scx_init_task_args *args);
int cgroup_charge(struct task_ctx *tctx, u64 now, bool start);
u64 cgroup_stretch(struct task_ctx *tctx, u64 offset_slice_ns, u64 slice_ns, u64 rate);

/* cpu_release.bpf.c: higher classes taking CPUs */
int cpu_released(s32 cpu);
int cpu_reacquired(s32 cpu);

#endif /* __VRQ_BPF_H */
