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

/*
 * A group's count where runnable and quiescent find it without a hash lookup: a slot of group_slots
 * that the group claims (policy.h, vrq_group_word) and each of its tasks remembers (task_ctx.group_slot).
 */
struct group_slot {
	u64 word;		/* owner << 32 | runnable count (vrq_group_word) */
	struct vrq_load load;	/* the count's average (its nr unused: the count is word's) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_GROUP_SLOTS);
	__type(key, u32);
	__type(value, struct group_slot);
} group_slots SEC(".maps");

/*
 * The fallback, keyed by the group's id (tgid or session id): a group whose probed slots all count
 * other groups' tasks counts here (task_ctx.group_in VRQ_GROUP_IN_HASH), as every group once did.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct vrq_load);
} group_runnable SEC(".maps");

/*
 * How many times group_claim tries a slot's compare-and-swap while its group's other tasks change the
 * count on other CPUs: enough that a busy group's tasks do not spill into the fallback (runnable's own
 * try, on the task's slot, gives up sooner and claims).
 */
#define VRQ_GROUP_CAS_TRIES 16

/* Tasks counted in group_runnable: while there are none, a claim need not look there first. */
static s64 group_hash_tasks;

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

static __always_inline struct group_slot *group_slot_at(u32 idx)
{
	return bpf_map_lookup_elem(&group_slots, &idx);
}

/* The slot @group owns among its probed ones, or VRQ_GROUP_SLOTS (none). */
static __always_inline u32 group_slot_find(u32 group)
{
	struct group_slot *s;
	u32 i, idx;

	bpf_for(i, 0, VRQ_GROUP_PROBES) {
		idx = vrq_group_probe(group, i);
		if ((s = group_slot_at(idx)) && vrq_group_word_owner(READ_ONCE(s->word)) == group)
			return idx;
	}
	return VRQ_GROUP_SLOTS;
}

/*
 * group_multiplier_of beside another busy group: @group's average from its slot (@slot, where the task
 * last counted in it, unless the group lost it while idle: then the one it owns now, if any), else from
 * the fallback. A global function: walked once per program, not in each of the deadline's callers'
 * states.
 */
__noinline u64 group_multiplier_busy(u32 group, u32 slot)
{
	struct group_slot *s;
	struct vrq_load *g;
	u64 now = scx_bpf_now(), avg;

	if (!(s = group_slot_at(slot)) || vrq_group_word_owner(READ_ONCE(s->word)) != group)
		s = group_slot_at(group_slot_find(group));
	if (s) {
		avg = vrq_load_avg_of(&s->load, vrq_group_word_count(READ_ONCE(s->word)), now, rr_interval_ns);
	} else {
		if (!(g = bpf_map_lookup_elem(&group_runnable, &group)))
			return VRQ_GROUP_LOAD_ONE;
		avg = vrq_load_avg_at(g, now, rr_interval_ns);
	}
	return vrq_group_multiplier(avg, vrq_load_avg_at(&all_grouped_tasks, now, rr_interval_ns));
}

/*
 * The deadline multiplier of @group (fixed point, VRQ_GROUP_LOAD_ONE is 1): its runnable tasks averaged
 * over about one rr_interval, weighed in by the other groups' count (group_multiplier_busy). @slot is
 * task_ctx.group_slot.
 */
__hidden u64 group_multiplier_of(u32 group, u32 slot)
{
	/* a group alone (a pipe's two tasks in one session): no lookup, no division */
	if (!group || busy_groups <= 1)
		return VRQ_GROUP_LOAD_ONE;
	return group_multiplier_busy(group, slot);
}

/* All grouped tasks count @delta more at @now, and busy_groups with them when a group's count went
 * between 0 and 1 (@turned); the average first counts the time the count held. */
static __always_inline void group_all_add(s64 delta, u64 now, bool turned)
{
	vrq_load_note_change(&all_grouped_tasks, now, rr_interval_ns);
	__sync_fetch_and_add(&all_grouped_tasks.nr, delta);
	if (turned)
		__sync_fetch_and_add(&busy_groups, delta);
}

/*
 * Group accounting, the fallback (group_runnable): @g's count changes by @delta at @now, and so does the
 * count of all grouped tasks (and of busy groups, when @g becomes busy or idle); each average first
 * counts the time the count held.
 */
static __always_inline void group_load_add(struct vrq_load *g, s64 delta, u64 now)
{
	s64 before;

	if (delta < 0 && g->nr <= 0)
		return;
	vrq_load_note_change(g, now, rr_interval_ns);
	before = __sync_fetch_and_add(&g->nr, delta);
	group_all_add(delta, now, (before == 0 && delta > 0) || (before > 0 && before + delta == 0));
}

/* The fallback: one more runnable task in @group at @now (creating its entry for the first one). */
static __always_inline bool group_runnable_inc(u32 group, u64 now)
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
	if (!g)
		return false;
	group_load_add(g, 1, now);
	return true;
}

/*
 * One more runnable task of @group in slot @s at @now, when @group owns it or (@claim) may take it
 * (vrq_group_word_inc): the word changes by compare-and-swap, tried up to @tries times while other
 * tasks of the group change the count meanwhile. A slot taken over starts with no average, as a group
 * new to group_runnable did.
 */
static __always_inline bool group_slot_inc(struct group_slot *s, u32 group, bool claim, u64 now, int tries)
{
	u64 before = READ_ONCE(s->word), after, seen;
	int i;

	for (i = 0; i < tries; i++) {
		if (!(after = vrq_group_word_inc(before, group, claim)))
			return false;
		seen = __sync_val_compare_and_swap(&s->word, before, after);
		if (seen == before)
			goto counted;
		before = seen;
	}
	return false;
counted:
	/* the task's count holds the slot now: no other group takes it over while these run */
	if (vrq_group_word_taken_over(before, group)) {
		s->load.avg = 0;
		s->load.acc = 0;
		s->load.stamp = 0;
		s->load.last = 0;
	}
	vrq_load_note_of(&s->load, vrq_group_word_count(before), now, rr_interval_ns);
	group_all_add(1, now, !vrq_group_word_count(before));
	return true;
}

/*
 * runnable, when @tctx's remembered slot is no longer its group's: count in the slot @group owns among its
 * probed ones, else in the first idle one; if every probed slot counts other groups' tasks, in
 * group_runnable (where a group whose tasks already count there stays, so that its count is not split).
 * Two tasks of a group claiming at the same moment, while a slot probed before the group's goes idle,
 * can take two slots: the group then counts in both (twice in busy_groups) until one is taken over.
 * A global function: its loops are walked once, not in runnable's states.
 */
__noinline int group_claim(struct task_ctx *tctx __tctx, u32 group, u64 now)
{
	struct group_slot *s;
	struct vrq_load *g;
	u32 i, idx;

	if (READ_ONCE(group_hash_tasks) > 0 && (g = bpf_map_lookup_elem(&group_runnable, &group)) &&
	    READ_ONCE(g->nr) > 0)
		goto hash;
	bpf_for(i, 0, 2 * VRQ_GROUP_PROBES) {
		idx = vrq_group_probe(group, i % VRQ_GROUP_PROBES);
		if (!(s = group_slot_at(idx)))
			continue;
		/* the first pass finds its own, the second an idle one */
		if (group_slot_inc(s, group, i >= VRQ_GROUP_PROBES, now, VRQ_GROUP_CAS_TRIES)) {
			tctx->group_slot = idx;
			tctx->group_in = VRQ_GROUP_IN_SLOT;
			return 0;
		}
	}
hash:
	if (group_runnable_inc(group, now)) {
		__sync_fetch_and_add(&group_hash_tasks, 1);
		tctx->group_in = VRQ_GROUP_IN_HASH;
	}
	return 0;
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
 * takes it off): session or thread, it records its group (group) and counts in the group's slot (the
 * one it counted in last time, while the group still owns it; else group_claim); cgroup, in its cgroup
 * (cgroup_runnable).
 */
__hidden int group_task_runnable(struct task_struct *p __task, struct task_ctx *tctx __tctx, u64 now)
{
	struct group_slot *s;
	u32 group;

	if (group_accounting == VRQ_GROUP_CGROUP)
		return cgroup_runnable(tctx);
	if (group_accounting == VRQ_GROUP_OFF)
		return 0;
	group = group_of(p);
	tctx->group = group;
	tctx->group_in = VRQ_GROUP_IN_NONE;
	if (!group)
		return 0;
	if ((s = group_slot_at(tctx->group_slot)) && group_slot_inc(s, group, false, now, 2)) {
		tctx->group_in = VRQ_GROUP_IN_SLOT;
		return 0;
	}
	return group_claim(tctx, group, now);
}

/* ops.quiescent's step: one fewer in its group (where runnable counted it), or its cgroup. */
__hidden int group_task_quiescent(struct task_ctx *tctx __tctx)
{
	struct group_slot *s;
	struct vrq_load *g;
	u32 group = tctx->group;
	u64 now, before;
	u8 in = tctx->group_in;

	if (group_accounting == VRQ_GROUP_CGROUP)
		return cgroup_quiescent(tctx);
	if (in == VRQ_GROUP_IN_NONE)
		return 0;
	tctx->group_in = VRQ_GROUP_IN_NONE;
	now = scx_bpf_now();
	if (in == VRQ_GROUP_IN_SLOT) {
		if (!(s = group_slot_at(tctx->group_slot)))
			return 0;
		/* the task's count holds the slot: its owner cannot change, a plain decrement will do */
		vrq_load_note_of(&s->load, vrq_group_word_count(READ_ONCE(s->word)), now, rr_interval_ns);
		before = __sync_fetch_and_add(&s->word, -1);
		group_all_add(-1, now, vrq_group_word_count(before) == 1);
		return 0;
	}
	if ((g = bpf_map_lookup_elem(&group_runnable, &group))) {
		group_load_add(g, -1, now);
		__sync_fetch_and_add(&group_hash_tasks, -1);
	}
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

