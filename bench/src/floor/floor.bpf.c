/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The floor: the least a sched_ext scheduler can do, so that what sched_ext itself costs and what
 * scx_vrq adds are separate numbers (bench/vrqbench/cost.py). One FIFO queue shared by every CPU; a
 * waking task whose selected CPU is idle goes straight to that CPU's local queue from select_cpu
 * (the kernel's default idle selection); every other task joins the shared queue, and a CPU with
 * nothing to run takes the first one. No other callback: no running/stopping accounting, no
 * deadlines, no statistics. scx_simple's FIFO mode, without its counters.
 *
 * Only vmlinux.h and libbpf's headers: the scx headers' enums want a loader that fills them in from
 * the kernel's BTF, the constants used here are fixed in the kernel's ABI.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define SHARED_DSQ 0

s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *is_idle) __ksym;
/* scx_bpf_dsq_insert returns bool since 6.19, scx_bpf_dsq_move_to_local takes enq_flags since 7.1:
 * the newer form where the kernel has it (the ___ suffixes are libbpf's, stripped when it resolves) */
bool scx_bpf_dsq_insert___v2___compat(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_insert___v1(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move_to_local___v2___compat(u64 dsq_id, u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move_to_local___v1(u64 dsq_id) __ksym __weak;

static __always_inline void insert(struct task_struct *p, u64 dsq_id, u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert___v2___compat))
		scx_bpf_dsq_insert___v2___compat(p, dsq_id, SCX_SLICE_DFL, enq_flags);
	else
		scx_bpf_dsq_insert___v1(p, dsq_id, SCX_SLICE_DFL, enq_flags);
}

SEC("struct_ops/floor_select_cpu")
s32 BPF_PROG(floor_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);

	if (is_idle)
		insert(p, SCX_DSQ_LOCAL, 0);
	return cpu;
}

SEC("struct_ops/floor_enqueue")
void BPF_PROG(floor_enqueue, struct task_struct *p, u64 enq_flags)
{
	insert(p, SHARED_DSQ, enq_flags);
}

SEC("struct_ops/floor_dispatch")
void BPF_PROG(floor_dispatch, s32 cpu, struct task_struct *prev)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local___v2___compat))
		scx_bpf_dsq_move_to_local___v2___compat(SHARED_DSQ, 0);
	else
		scx_bpf_dsq_move_to_local___v1(SHARED_DSQ);
}

SEC("struct_ops.s/floor_init")
s32 BPF_PROG(floor_init)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops floor_ops = {
	.select_cpu = (void *)floor_select_cpu,
	.enqueue = (void *)floor_enqueue,
	.dispatch = (void *)floor_dispatch,
	.init = (void *)floor_init,
	.name = "floor",
};
