/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq's frequency-aware selection (--freq-threshold): each CPU looks at its own performance level on
 * its tick and when it looks for work, and keeps its bit in the fast / scaled masks, which CPU
 * selection (select.bpf.c) searches fast before scaled at each distance.
 */
#include "vrq.bpf.h"

/*
 * TEST INTERFACE: per-CPU performance levels (1..VRQ_PERF_ONE) that replace scx_bpf_cpuperf_cur()'s
 * reading where non-zero. A VM has no frequency scaling; the in-VM tests write this map to give CPUs
 * scaled or full-speed levels and check that selection follows. Nothing else writes it: all zero, it
 * changes nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VRQ_MAX_CPUS);
	__type(key, u32);
	__type(value, u32);
} test_cpuperf SEC(".maps");

/* A CPU's performance level: the test interface's value if one is set, else sched_ext's reading. */
static __always_inline u32 cpu_perf(s32 cpu)
{
	u32 key = CPU_IDX(cpu), *injected = bpf_map_lookup_elem(&test_cpuperf, &key);

	if (injected && *injected)
		return *injected;
	return scx_bpf_cpuperf_cur(cpu);
}

/* Look at @cpu's frequency again and move it between the fast and scaled masks if it changed. */
__hidden int update_cpu_perf(s32 cpu)
{
	struct bpf_cpumask *fast_cpus, *scaled_cpus;
	struct cpu_ctx *cctx;
	struct perf_masks *pm;
	u8 scaled;

	if (!freq_threshold || !(cctx = cpu_ctx_of(cpu)) || !(pm = perf_masks_get()))
		return 0;
	scaled = vrq_cpu_scaled(cpu_perf(cpu), freq_threshold);
	if (scaled == cctx->scaled)
		return 0;
	cctx->scaled = scaled;
	fast_cpus = pm->fast;
	scaled_cpus = pm->scaled;
	if (!fast_cpus || !scaled_cpus)
		return 0;
	if (scaled) {
		bpf_cpumask_clear_cpu(cpu, fast_cpus);
		bpf_cpumask_set_cpu(cpu, scaled_cpus);
	} else {
		bpf_cpumask_clear_cpu(cpu, scaled_cpus);
		bpf_cpumask_set_cpu(cpu, fast_cpus);
	}
	return 0;
}

