/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's capacity-aware placement (--capacity-aware): each CPU's capacity (scx_bpf_cpuperf_cap: its
 * top speed beside the biggest CPU's) sorts it as big or little, in the big / little masks that CPU
 * selection (select.bpf.c) reads to order the idle CPUs of one distance by the waking task's preference
 * (policy.h: vrq_cap_pref). Read at load, when a CPU comes on line, and on the tick at a low rate: a
 * capacity changes only when the kernel rebuilds them (CPU hotplug, a changed CPU frequency policy's
 * maximum). While every CPU is of one kind -- any machine that is not hybrid -- the rule does nothing.
 */
#include "vrq.bpf.h"

/*
 * How often the tick reads its CPU's capacity again: changes are rare, and nothing is lost by seeing
 * one late (the rule only orders idle CPUs), so the tick looks only now and then.
 */
#define VRQ_CAP_REREAD_NS (100ULL * VRQ_NSEC_PER_MSEC)

/* How many CPUs of the topology are big and little; init_cap_masks counts them all big at load. */
s32 nr_big_cpus;
s32 nr_little_cpus;

/*
 * TEST INTERFACE: per-CPU capacities (1..VRQ_PERF_ONE) that replace scx_bpf_cpuperf_cap()'s reading
 * where non-zero. A VM's CPUs are all of one capacity; the in-VM tests write this map to make some of
 * them little and check that placement follows. Nothing else writes it: all zero, it changes nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, u32);
} test_cpucap SEC(".maps");

static __always_inline u32 cpu_cap(s32 cpu)
{
	u32 key = CPU_IDX(cpu), *injected = bpf_map_lookup_elem(&test_cpucap, &key);

	if (injected && *injected)
		return *injected;
	return scx_bpf_cpuperf_cap(cpu);
}

/*
 * Read @cpu's capacity again and move it between the big and little masks (and counts) if its kind
 * changed; counted as a change unless @at_load.
 */
__hidden int update_cpu_cap(s32 cpu, bool at_load)
{
	struct bpf_cpumask *big, *little;
	struct cpu_ctx *cctx;
	struct cap_masks *cm;
	u32 zero = 0;
	u8 is_little;

	if (!capacity_aware || (u32)cpu >= VRQ_MAX_CPUS || !cpu_in_topology[CPU_IDX(cpu)])
		return 0;
	if (!(cctx = cpu_ctx_of(cpu)) || !(cm = bpf_map_lookup_elem(&cap_masks, &zero)))
		return 0;
	is_little = vrq_cpu_little(cpu_cap(cpu));
	if (is_little == cctx->little)
		return 0;
	big = cm->big;
	little = cm->little;
	if (!big || !little)
		return 0;
	cctx->little = is_little;
	if (is_little) {
		bpf_cpumask_clear_cpu(cpu, big);
		bpf_cpumask_set_cpu(cpu, little);
	} else {
		bpf_cpumask_clear_cpu(cpu, little);
		bpf_cpumask_set_cpu(cpu, big);
	}
	__sync_fetch_and_add(&nr_little_cpus, is_little ? 1 : -1);
	__sync_fetch_and_add(&nr_big_cpus, is_little ? -1 : 1);
	if (!at_load)
		stat_inc(VRQ_STAT_CAP_CHANGED);
	return 0;
}

/*
 * ops.tick on @cpu: with --capacity-aware, read its capacity again if the last reading is older than
 * VRQ_CAP_REREAD_NS.
 */
__hidden int cap_tick(s32 cpu, u64 now)
{
	struct cpu_ctx *cctx;

	if (!capacity_aware || !(cctx = cpu_ctx_of(cpu)) || now - cctx->cap_read_at < VRQ_CAP_REREAD_NS)
		return 0;
	cctx->cap_read_at = now;
	return update_cpu_cap(cpu, false);
}
