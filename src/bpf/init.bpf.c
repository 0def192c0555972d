/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq at load (ops.init's steps): which queue each CPU uses and the queues' DSQs, every CPU's masks
 * of the CPUs within each distance, and the frequency-aware selection's fast / scaled masks. Owns the per-CPU state
 * (cpu_ctxs) and the CPU-to-queue tables, which CPU hotplug (hotplug.bpf.c) keeps up to date. At exit
 * (ops.exit's step): the loader's wake-up (exit_notify).
 */
#include "vrq.bpf.h"

/* Derived at init from the knobs and the topology. */
u32 cpu_queue[VRQ_MAX_CPUS];
u32 queue_rep_cpu[VRQ_MAX_QUEUES];	/* a CPU of each queue, for its distance to others */
u32 nr_queues;
/*
 * The CPUs on line now (CPU hotplug: vrq_cpu_online / vrq_cpu_offline keep them): each queue's
 * (a queue's round divides its waiting tasks among them) and all of them (the target latency's clock
 * rate). Read through online_cpus_of_queue / online_cpus, which never return 0.
 */
s32 queue_nr_cpus[VRQ_MAX_QUEUES];
s32 nr_online_cpus;
u8 cpu_is_online[VRQ_MAX_CPUS];

/* Build a cpumask of the CPUs within distance @dist of @cpu (VRQ_NR_DIST: all, above: none) into *@slot. */
static s32 build_distance_mask(u32 cpu, u32 dist, struct bpf_cpumask __kptr **slot)
{
	struct bpf_cpumask *mask, *old;
	u32 other;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	bpf_for(other, 0, nr_cpus) {
		if (other >= VRQ_MAX_CPUS || cpu >= VRQ_MAX_CPUS)
			break;
		if (!cpu_in_topology[CPU_IDX(other)])
			continue;
		if (dist == VRQ_NR_DIST ||
		    (dist < VRQ_NR_DIST && cpu_distance(cpu, other) <= dist))
			bpf_cpumask_set_cpu(other, mask);
	}
	old = bpf_kptr_xchg(slot, mask);
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

/* Every CPU starts as fast; each corrects its own bit when it next ticks or looks for work. */
__hidden s32 init_perf_masks(void)
{
	struct perf_masks *pm;
	s32 err;

	if (!freq_threshold)
		return 0;
	if (!(pm = perf_masks_get()))
		return -ENOENT;
	if ((err = build_distance_mask(0, VRQ_NR_DIST, &pm->fast)))
		return err;
	return build_distance_mask(0, VRQ_NR_DIST + 1, &pm->scaled);	/* no distance: empty */
}
/*
 * The big / little masks (--capacity-aware): every CPU of the topology starts big, then each reads its
 * capacity (update_cpu_cap), which moves the little ones over. The counts make CPU selection skip the
 * rule while all are of one kind.
 */
__hidden s32 init_cap_masks(void)
{
	struct cap_masks *cm;
	u32 zero = 0, cpu;
	s32 err, nr = 0;

	if (!capacity_aware)
		return 0;
	if (!(cm = bpf_map_lookup_elem(&cap_masks, &zero)))
		return -ENOENT;
	if ((err = build_distance_mask(0, VRQ_NR_DIST, &cm->big)) ||
	    (err = build_distance_mask(0, VRQ_NR_DIST + 1, &cm->little)))
		return err;
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= VRQ_MAX_CPUS)
			break;
		if (cpu_in_topology[CPU_IDX(cpu)])
			nr++;
	}
	nr_big_cpus = nr;
	nr_little_cpus = 0;
	/* the masks are read as RCU-protected kptrs, which a sleepable program may do only under the lock */
	bpf_rcu_read_lock();
	bpf_for(cpu, 0, nr_cpus)
		update_cpu_cap(cpu, true);
	bpf_rcu_read_unlock();
	return 0;
}

/* Which queue each CPU uses; queue ids are dense from 0 (the loader numbers LLCs densely). */
static s32 map_cpus_to_queues(void)
{
	u32 cpu, q;

	nr_queues = 0;
	nr_online_cpus = 0;
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= VRQ_MAX_CPUS)
			break;
		if (!cpu_in_topology[CPU_IDX(cpu)])
			continue;	/* off line at load: no topology; its coming on line reloads */
		struct vrq_cpu_topo t = topo_of(cpu);

		q = vrq_queue_of(queue, cpu, &t);
		if (q >= VRQ_MAX_QUEUES) {
			scx_bpf_error("CPU %u maps to queue %u, out of range", cpu, q);
			return -EINVAL;
		}
		cpu_queue[CPU_IDX(cpu)] = q;
		if (!queue_nr_cpus[QUEUE_IDX(q)])
			queue_rep_cpu[QUEUE_IDX(q)] = cpu;
		queue_nr_cpus[QUEUE_IDX(q)]++;
		cpu_is_online[CPU_IDX(cpu)] = 1;
		nr_online_cpus++;
		if (q + 1 > nr_queues)
			nr_queues = q + 1;
	}
	return 0;
}

/* The queues: which queue each CPU uses (map_cpus_to_queues), and one DSQ per queue. */
__hidden s32 init_queues(void)
{
	u32 q;
	s32 err;

	if (nr_cpus > VRQ_MAX_CPUS || nr_cpus > scx_bpf_nr_cpu_ids()) {
		scx_bpf_error("nr_cpus %u out of range", nr_cpus);
		return -EINVAL;
	}
	if ((err = map_cpus_to_queues()))
		return err;
	bpf_for(q, 0, nr_queues) {
		err = scx_bpf_create_dsq(q, -1);
		if (err) {
			scx_bpf_error("failed to create queue %u: %d", q, err);
			return err;
		}
	}
	return 0;
}

/* Each CPU's masks of the CPUs within each distance, and its scratch mask. */
__hidden s32 init_cpu_masks(void)
{
	u32 cpu;
	s32 err;

	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx = cpu_ctx_of(cpu);

		if (!cctx)
			return -ENOENT;
		if ((err = build_distance_mask(cpu, VRQ_DIST_SMT, &cctx->smt)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_LLC, &cctx->llc)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_PKG, &cctx->pkg)) ||
		    (err = build_distance_mask(cpu, VRQ_DIST_NODE, &cctx->node)) ||
		    (err = build_distance_mask(cpu, VRQ_NR_DIST, &cctx->tmp)))
			return err;
	}
	return 0;
}

/*
 * The loader's wake-up when the scheduler ends: sched_ext records why in the exit info (uei, BPF memory)
 * and tells user space nothing, so ops.exit also puts one record here, and the ring buffer's fd, which
 * the loader polls, turns readable (src/main.rs: Watcher). The loader never consumes it: the fd stays
 * readable, and the record is all it says.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} exit_notify SEC(".maps");

__hidden int notify_loader_of_exit(void)
{
	u64 *note = bpf_ringbuf_reserve(&exit_notify, sizeof(*note), 0);

	if (note) {
		*note = 1;
		bpf_ringbuf_submit(note, BPF_RB_FORCE_WAKEUP);
	}
	return 0;
}
