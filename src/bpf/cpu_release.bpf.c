/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_vrq beside the higher scheduling classes: a real-time (SCHED_FIFO / SCHED_RR), deadline or stop
 * task takes a CPU from sched_ext (ops.cpu_release) and later gives it back (ops.cpu_acquire).
 *
 * A task preempted by it goes back to the head of that CPU's local DSQ with its slice, and the local
 * DSQ runs only when the CPU returns: a SCHED_FIFO hog that never sleeps (with RT throttling off) would
 * hold those tasks until the sched_ext watchdog ejects the scheduler. So cpu_release hands the local
 * DSQ back (scx_bpf_reenqueue_local: each task comes through ops.enqueue again, SCX_ENQ_REENQ), to its
 * queue, where the other CPUs read it; and while the CPU is taken nothing is put on its local DSQ
 * directly (preempt_local_direct reads `released`). The CPU's running_priodl is 0 after the preempted
 * task's stopping, but that is not enough: from 7.0 the kernel's sched_ext deadline server runs our
 * tasks on a taken CPU now and then without a cpu_acquire, setting it again (a wake-up inserted there
 * then waited for the server's next turn: the cgroup suite's rt case).
 */
#include "vrq.bpf.h"

__hidden int cpu_released(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (cctx)
		cctx->released = 1;
	stat_inc(VRQ_STAT_CPU_RELEASED);
	scx_bpf_reenqueue_local();
	return 0;
}

__hidden int cpu_reacquired(s32 cpu)
{
	struct cpu_ctx *cctx = cpu_ctx_of(cpu);

	if (cctx)
		cctx->released = 0;
	stat_inc(VRQ_STAT_CPU_REACQUIRED);
	return 0;
}
