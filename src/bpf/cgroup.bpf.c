/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's cgroup weights (--group-accounting cgroup): cgroup v2's cpu.weight honoured along the tree,
 * and cpu.idle. The rule is policy.h's (vrq_cgroup_*): a task's deadline offset grows by its cgroup's
 * stretch (its runnable tasks over its hierarchical share) and shrinks by its cgroup's lag (how far its
 * virtual time is behind the furthest cgroup's). This file keeps what the rule reads: one node per
 * cgroup (weight, cpu.idle, runnable counts, the weights of its active children, virtual time), fed by
 * the kernel's cgroup callbacks, which are here (vrq_cgroup_init / exit / move / set_weight / set_idle;
 * main.bpf.c's ops table names them), and by the tasks' runnable / quiescent / run time (groups.bpf.c's
 * face calls those steps in cgroup mode). The kernel calls the cgroup callbacks only with
 * CONFIG_EXT_GROUP_SCHED (Debian's kernels have it), and whatever the mode: they do nothing in the
 * other modes, which keep no cgroup state. set_idle from 6.19 on (the loader drops it on older kernels,
 * where cpu.idle is not passed to sched_ext).
 *
 * A task's cgroup comes from init_task's and cgroup_move's arguments, kept in task_ctx.cg: no cgroup
 * lookup on the wake-up path. Each renewal walks from the task's cgroup to the root (a hash lookup a
 * level: a systemd session's scope is three levels down) to get its share; a task becoming runnable or
 * not walks the same path to keep the counts.
 */
#include "vrq.bpf.h"

/*
 * One cgroup. Counts change atomically (any CPU's tasks may wake in it). active_weight is the sum of
 * the children's counted_weight: a child adds its weight when its subtree gets a runnable task and
 * takes back what it added when the last one stops; a weight written meanwhile is swapped in by
 * difference (cgroup_set_weight). Every change of a counted_weight is an exchange whose difference goes
 * to the parent, so the sum always equals what the children say they added.
 */
struct cgroup_node {
	u64 parent;		/* the parent's id (0: this is the root) */
	s64 nr_runnable;	/* runnable tasks in this cgroup itself */
	s64 subtree_runnable;	/* nr_runnable plus its children that have any in their subtrees (count_runnable) */
	s64 active_weight;	/* the weights its children with runnable tasks added */
	u64 counted_weight;	/* the weight this cgroup added to its parent's active_weight (0: none) */
	u64 vtime;		/* its virtual time: CPU used over its share (policy.h: vrq_cgroup_vtime_delta) */
	u32 weight;		/* cpu.weight, 1-10000 */
	u8 idle;		/* cpu.idle */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u64);
	__type(value, struct cgroup_node);
} cgroup_nodes SEC(".maps");

/* The furthest virtual time of any cgroup (only ever grows; the lag is measured from it). */
static u64 vtime_max;
/* cgroups with a node now, for the statistics (`cgroups`, read by the loader) */
s64 nr_cgroups;

/* The kernel's tick (CONFIG_HZ, read by libbpf from the kernel's config at load: the loader's preflight
 * checks that config is there; 250 if it lacks the option). */
extern int CONFIG_HZ __kconfig __weak;

static __always_inline u64 tick_ns(void)
{
	return 1000ULL * VRQ_NSEC_PER_MSEC / (CONFIG_HZ > 0 ? (u64)CONFIG_HZ : 250);
}

static __always_inline u64 cgroup_id_of(struct cgroup *cgrp)
{
	return cgrp ? BPF_CORE_READ(cgrp, kn, id) : 0;
}

/*
 * ops.cgroup_init: a cgroup is created, or found at load (parents before children). Never fails: a
 * failure would fail the cgroup's creation.
 */
s32 BPF_STRUCT_OPS_SLEEPABLE(vrq_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	struct cgroup_node node = {};
	u64 id;
	s32 level;

	if (group_accounting != VRQ_GROUP_CGROUP)
		return 0;
	id = cgroup_id_of(cgrp);
	level = BPF_CORE_READ(cgrp, level);	/* the root is level 0 */
	if (level > 0)
		node.parent = cgroup_id_of(BPF_CORE_READ(cgrp, self.parent, cgroup));
	node.weight = args->weight;
	if (bpf_core_field_exists(args->sched_idle))	/* cpu.idle reaches sched_ext from 6.19 on */
		node.idle = BPF_CORE_READ(args, sched_idle);
	node.vtime = vtime_max;
	/* a full table must not fail the cgroup's creation: its tasks then count as the root's */
	if (bpf_map_update_elem(&cgroup_nodes, &id, &node, BPF_ANY))
		stat_inc(VRQ_STAT_CGROUP_UNTRACKED);
	else {
		__sync_fetch_and_add(&nr_cgroups, 1);
		stat_inc(VRQ_STAT_CGROUP_INIT);
	}
	return 0;
}

/* ops.cgroup_exit: a cgroup is removed (it has no tasks left), or the scheduler unloads. */
void BPF_STRUCT_OPS(vrq_cgroup_exit, struct cgroup *cgrp)
{
	u64 id;

	if (group_accounting != VRQ_GROUP_CGROUP)
		return;
	id = cgroup_id_of(cgrp);
	if (!bpf_map_delete_elem(&cgroup_nodes, &id)) {
		__sync_fetch_and_add(&nr_cgroups, -1);
		stat_inc(VRQ_STAT_CGROUP_EXIT);
	}
}

/* Give @node's parent @node's weight in its active_weight, or take back what it had (@active false). */
static __always_inline void count_weight(struct cgroup_node *node, bool active)
{
	struct cgroup_node *parent;
	u64 before;

	if (!node->parent || !(parent = bpf_map_lookup_elem(&cgroup_nodes, &node->parent)))
		return;
	before = __sync_lock_test_and_set(&node->counted_weight, active ? (u64)node->weight : 0);
	__sync_fetch_and_add(&parent->active_weight, (s64)(active ? node->weight : 0) - (s64)before);
}

/* The node of @cgrp in cgroup mode; NULL in the other modes (no cgroup state) or for an untracked one. */
static __always_inline struct cgroup_node *tracked_node(struct cgroup *cgrp)
{
	u64 id;

	if (group_accounting != VRQ_GROUP_CGROUP)
		return NULL;
	id = cgroup_id_of(cgrp);
	return bpf_map_lookup_elem(&cgroup_nodes, &id);
}

/*
 * ops.cgroup_set_weight: cpu.weight written. Takes effect at each task's next renewal. The cgroup's
 * virtual time restarts at the furthest: what it was owed or owed others was counted at the old
 * weight, and paying it back at the new one would overshoot the new share for up to a lag's worth.
 */
void BPF_STRUCT_OPS(vrq_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	struct cgroup_node *node = tracked_node(cgrp);

	if (!node)
		return;
	node->weight = weight;
	node->vtime = vtime_max;
	if (node->subtree_runnable > 0)
		count_weight(node, true);
}

/* ops.cgroup_set_idle: cpu.idle written. Takes effect at each task's next renewal. */
void BPF_STRUCT_OPS(vrq_cgroup_set_idle, struct cgroup *cgrp, bool idle)
{
	struct cgroup_node *node = tracked_node(cgrp);

	if (node)
		node->idle = idle;
}

/*
 * @delta (+1 or -1) runnable tasks in cgroup @id: its own count, and its subtree count -- its own
 * runnable tasks plus its children whose subtrees have any; a subtree that gains its first adds its
 * weight to its parent's active_weight and counts itself in the parent's subtree count, one that loses
 * its last takes both back. Only those transitions go up a level: a wake-up or sleep in a cgroup that
 * keeps runnable tasks (a pipe's two ends in one session scope) touches its own node alone, not every
 * ancestor's (the walk to the root cost a pipe's round trip dearly). Each transition is seen
 * by exactly one CPU (the atomic add's old value), so the parent gets one +1 and one -1 per pair
 * whatever the order they arrive in.
 */
static __always_inline void count_runnable(u64 id, s64 delta)
{
	struct cgroup_node *node = bpf_map_lookup_elem(&cgroup_nodes, &id);
	s64 before;
	u32 level;

	if (!node)
		return;
	before = __sync_fetch_and_add(&node->nr_runnable, delta);
	/* a cgroup back from idle resumes at most one rr_interval behind: sleep earns no credit */
	if (delta > 0 && before == 0)
		node->vtime = vrq_cgroup_vtime_floor(node->vtime, vtime_max, rr_interval_ns);
	bpf_for(level, 0, VRQ_CGROUP_DEPTH_MAX) {
		before = __sync_fetch_and_add(&node->subtree_runnable, delta);
		if (delta > 0 && before == 0)
			count_weight(node, true);
		else if (delta < 0 && before == 1)
			count_weight(node, false);
		else
			break;	/* still active, or still idle: nothing changes above */
		if (!node->parent || !(node = bpf_map_lookup_elem(&cgroup_nodes, &node->parent)))
			break;
	}
}

/* ops.runnable's step in cgroup mode (group_task_runnable): count @tctx's task in its cgroup. */
__hidden int cgroup_runnable(struct task_ctx *tctx __tctx)
{
	if (tctx->cg.counted_id || !tctx->cg.id)
		return 0;
	count_runnable(tctx->cg.id, 1);
	tctx->cg.counted_id = tctx->cg.id;
	return 0;
}

/* ops.quiescent's step in cgroup mode (group_task_quiescent): no longer runnable in the cgroup it was
 * counted in. */
__hidden int cgroup_quiescent(struct task_ctx *tctx __tctx)
{
	if (!tctx->cg.counted_id)
		return 0;
	count_runnable(tctx->cg.counted_id, -1);
	tctx->cg.counted_id = 0;
	return 0;
}

/*
 * ops.cgroup_move: @p is now in @to; a runnable one is counted there instead (the callbacks of one task
 * are serialized by its runqueue's lock, so no runnable / quiescent runs meanwhile).
 */
void BPF_STRUCT_OPS(vrq_cgroup_move, struct task_struct *p, struct cgroup *from, struct cgroup *to)
{
	struct task_ctx *tctx;
	bool counted;

	if (group_accounting != VRQ_GROUP_CGROUP || !(tctx = task_ctx_of(p)))
		return;
	counted = tctx->cg.counted_id;
	cgroup_quiescent(tctx);
	tctx->cg.id = cgroup_id_of(to);
	if (counted)
		cgroup_runnable(tctx);
	stat_inc(VRQ_STAT_CGROUP_MOVE);
}

/* ops.init_task's step in cgroup mode (group_task_init): the task's cgroup (NULL without the kernel's
 * cgroup support). */
__hidden int cgroup_task_init(struct task_ctx *tctx __tctx, struct scx_init_task_args *args)
{
	tctx->cg.id = args ? cgroup_id_of(args->cgroup) : 0;
	tctx->cg.share = VRQ_CGROUP_SHARE_ONE;
	return 0;
}

/*
 * Charge the run time since the last charge to the task's cgroup's virtual time, at the share it had
 * at its last renewal (running starts the count: @start); group_charge's step in cgroup mode. Global
 * (verified once), as cgroup_stretch.
 */
__noinline int cgroup_charge(struct task_ctx *tctx, u64 now, bool start)
{
	struct cgroup_node *node;
	u64 ran, vtime;

	if (!tctx)
		return 0;
	ran = now - tctx->cg.charged_at;
	/* never charged yet (a task already running when the scheduler loaded): start counting now */
	if (!tctx->cg.charged_at)
		start = true;
	tctx->cg.charged_at = now;
	if (start || !tctx->cg.counted_id || tctx->cg.idle || (s64)ran <= 0)
		return 0;
	/* the root's tasks compete each on its own (cgroup_stretch): its time leads nobody */
	if (!(node = bpf_map_lookup_elem(&cgroup_nodes, &tctx->cg.counted_id)) || !node->parent)
		return 0;
	vtime = __sync_add_and_fetch(&node->vtime, vrq_cgroup_vtime_delta(ran, nr_online_cpus, tctx->cg.share));
	if (vtime > vtime_max)
		vtime_max = vtime;	/* a race loses a little: the next charge catches up */
	return 0;
}

/*
 * At a renewal (renew_deadline): the task's cgroup's stretch for a slice of @slice_ns, which is
 * @clock_slice_ns in the queues' clock time (the turn: vrq_cgroup_turn); records the share (for
 * cgroup_charge), how much earlier its deadline comes for its cgroup's lag (cg.lag) and whether it
 * competes as SCHED_IDLE (cpu.idle on the path). Offsets are in the queues' clock time, which runs
 * @rate times faster than real time while latency waiters wait (--target-latency-ms): the lag,
 * measured in CPU time, is turned into clock time the same way, or a faster clock would shrink it
 * against the stretch. A global function, verified once: walked in each caller's state, its loop and
 * the turn's rounding to the tick would be walked again at every renewal site (select_cpu, enqueue,
 * dispatch, tick, stopping), which multiplied the whole walk (docs/measured.md, the verifier's walk).
 * @tctx NULL: 0.
 */
__noinline u64 cgroup_stretch(struct task_ctx *tctx, u64 clock_slice_ns, u64 slice_ns, u64 rate)
{
	u64 share = VRQ_CGROUP_SHARE_ONE, id, stretch, turn;
	struct cgroup_node *leaf, *node, *parent;
	s64 nr;
	u32 level;
	u8 idle = 0;

	if (!tctx)
		return 0;
	id = tctx->cg.counted_id ?: tctx->cg.id;
	tctx->cg.lag = 0;
	/* no cgroup known; or the root's tasks (kernel threads, mostly): each competes on its own, as in BFS */
	if (!id || !(leaf = bpf_map_lookup_elem(&cgroup_nodes, &id)) || !leaf->parent) {
		tctx->cg.share = share;
		tctx->cg.idle = 0;
		return 0;
	}
	node = leaf;
	bpf_for(level, 0, VRQ_CGROUP_DEPTH_MAX) {
		idle |= node->idle;
		if (!node->parent || !(parent = bpf_map_lookup_elem(&cgroup_nodes, &node->parent)))
			break;
		share = vrq_cgroup_child_share(share, node->weight, parent->active_weight);
		node = parent;
	}
	tctx->cg.share = share;
	tctx->cg.idle = idle;
	if (idle) {
		stat_inc(VRQ_STAT_CGROUP_IDLE_RUN);
		return 0;
	}
	/* a competing cgroup is never further behind than the lag bound */
	leaf->vtime = vrq_cgroup_vtime_floor(leaf->vtime, vtime_max, VRQ_CGROUP_LAG_MAX_NS);
	tctx->cg.lag = vrq_cgroup_lag(leaf->vtime, vtime_max, VRQ_CGROUP_LAG_MAX_NS);
	if (rate > VRQ_RATE_ONE)
		tctx->cg.lag = tctx->cg.lag * rate / VRQ_RATE_ONE;
	if (tctx->cg.lag)
		stat_inc(VRQ_STAT_CGROUP_LAGGED);
	/*
	 * A cgroup whose share is the whole machine (no sibling on its path has runnable tasks) competes
	 * with nothing the stretch weighs it against: its tasks keep BFS's order, as a session group alone
	 * keeps it (vrq_group_multiplier). Stretched by its count of runnable tasks, which swings from a
	 * handful to hundreds within a few turns (hackbench), the deadlines of its own tasks differed by
	 * when each renewed: hackbench ran markedly slower than under session groups.
	 * Its lag still counts, at every renewal alike: a cgroup's tasks renewed at share 1 without it and
	 * at less with it would be ordered among themselves by up to the lag bound.
	 */
	if (share >= VRQ_CGROUP_SHARE_ONE)
		return 0;
	nr = leaf->nr_runnable;
	turn = vrq_cgroup_turn(clock_slice_ns, slice_ns, tick_ns());
	stretch = vrq_cgroup_stretch(turn, nr > 0 ? nr : 1, nr_online_cpus, share);
	if (stretch > turn)
		stat_inc(VRQ_STAT_CGROUP_STRETCHED);
	return stretch;
}
