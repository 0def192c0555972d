/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's group accounting (--group-accounting; BFS's group-accounting experiment): a group's runnable
 * tasks stretch its tasks' deadline offsets (policy.h: vrq_group_multiplier); and the fork-depth penalty
 * (--fork-depth-penalty), which stretches them by a task's forks from init (its state: task_ctx.fork).
 *
 * Also the one face group accounting shows the task callbacks (main.bpf.c): group_task_init,
 * group_task_runnable, group_task_quiescent and group_charge, each deciding by the mode -- session or
 * thread here, cgroup in cgroup.bpf.c (whose callbacks' steps decide for themselves), off nothing -- so
 * that a change to group accounting stays in these two files.
 */
#include "vrq.bpf.h"

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

/* The group a task belongs to under --group-accounting (0 when off). */
static __always_inline u32 group_of(struct task_struct *p)
{
	struct pid *sid;

	switch (group_accounting) {
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
__hidden u64 group_multiplier_of(u32 group)
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

/*
 * Group accounting: @g's count changes by @delta at @now, and so does the count of all grouped tasks (and
 * of busy groups, when @g becomes busy or idle); each average first counts the time the count held.
 */
static __always_inline void group_load_add(struct vrq_load *g, s64 delta, u64 now)
{
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

/* Group accounting: one more runnable task in @group at @now (creating its entry for the first one). */
static __always_inline void group_runnable_inc(u32 group, u64 now)
{
	struct vrq_load *g;

	g = bpf_map_lookup_elem(&group_runnable, &group);
	if (!g) {
		/* no tasks, no average: group_load_add starts it (zeroed here only, not on every call) */
		struct vrq_load first = {};

		/* first runnable task of the group; if another CPU created the entry meanwhile, count on it */
		bpf_map_update_elem(&group_runnable, &group, &first, BPF_NOEXIST);
		g = bpf_map_lookup_elem(&group_runnable, &group);
	}
	if (g)
		group_load_add(g, 1, now);
}

/* ops.init_task's step: the task's cgroup (--group-accounting cgroup); nothing in the other modes. */
__hidden int group_task_init(struct task_ctx *tctx __tctx, struct scx_init_task_args *args)
{
	if (group_accounting == VRQ_GROUP_CGROUP)
		cgroup_task_init(tctx, args);
	return 0;
}

/*
 * ops.runnable's step, at @now: @p counts in its group while it is runnable (group_task_quiescent
 * takes it off): session or thread, it records its group (group) and counts in group_runnable; cgroup,
 * in its cgroup (cgroup_runnable).
 */
__hidden int group_task_runnable(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now)
{
	u32 group;

	if (group_accounting == VRQ_GROUP_CGROUP)
		return cgroup_runnable(tctx);
	if (group_accounting == VRQ_GROUP_OFF)
		return 0;
	group = group_of(p);
	tctx->group = group;
	if (group)
		group_runnable_inc(group, now);
	return 0;
}

/* ops.quiescent's step: one fewer in its group, or its cgroup. */
__hidden int group_task_quiescent(struct task_ctx *tctx __tctx)
{
	struct vrq_load *g;
	u32 group = tctx->group;

	if (group_accounting == VRQ_GROUP_CGROUP)
		return cgroup_quiescent(tctx);
	if (group_accounting == VRQ_GROUP_OFF || !group)
		return 0;
	if ((g = bpf_map_lookup_elem(&group_runnable, &group)))
		group_load_add(g, -1, scx_bpf_now());
	return 0;
}

/*
 * ops.running's (@start), tick's and stopping's step: the run time since the last charge goes to the
 * task's group (cgroup: its virtual time, cgroup_charge); session and thread groups count tasks, not
 * time.
 */
__hidden int group_charge(struct task_ctx *tctx __tctx, u64 now, bool start)
{
	if (group_accounting == VRQ_GROUP_CGROUP)
		cgroup_charge(tctx, now, start);
	return 0;
}

/* Forks from init: walk up real_parent (bounded); pid 1 and kernel threads' parents end it. */
__hidden u32 fork_depth_of(struct task_struct *p __task)
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

