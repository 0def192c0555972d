/* SPDX-License-Identifier: GPL-2.0 */
/* scx_vrq's CPU hotplug: what follows a CPU going off or coming on line (ops.cpu_online / cpu_offline). */
#include "vrq.bpf.h"

/*
 * CPU hotplug. Without ops.cpu_online / cpu_offline the kernel unloads a sched_ext scheduler at every
 * hotplug event (a restart the loader honours: a whole BPF load, and the kernel's scheduler meanwhile);
 * with them the scheduler stays. Between the two callbacks the kernel queues tasks only on CPUs on line,
 * and moves a leaving CPU's tasks to others through enqueue. What follows the CPU here: the count of
 * CPUs on line per queue and in all (a queue's slice and round divide its waiting tasks among them; the
 * target latency's clock divides the waiters among all); the running task's priodl, which wake-up
 * preemption and the turn-end kick read (their survey also skips a CPU off line: a kick would not
 * reach it); the slice timer's run (a timer the kernel moved off the CPU fires for nothing); and the
 * tasks a delayed migration held for it as the waker (their delay ends now; cpu_offline runs on the
 * leaving CPU itself, which may wake nobody -- may_kick -- so another CPU's next dispatch takes
 * them). A queue whose CPUs are all off line (--queue cpu) is emptied
 * by the others: every CPU's dispatch reads every queue's head.
 *
 * A CPU that was off line when the loader read the topology has no place in the queues: its coming on
 * line asks the loader for a restart, which reads the topology again (as a hotplug during the load
 * does: the kernel then exits the scheduler itself, its hotplug sequence number having changed).
 */
__hidden int cpu_goes(s32 cpu, bool online)
{
	struct cpu_ctx *cctx;
	u32 q;

	if (online && ((u32)cpu >= nr_cpus || (u32)cpu >= VRQ_MAX_CPUS || !cpu_in_topology[CPU_IDX(cpu)])) {
		scx_bpf_exit(SCX_ECODE_ACT_RESTART | SCX_ECODE_RSN_HOTPLUG,
			     "CPU %d came on line, off line when the topology was read: reloading to read it again",
			     cpu);
		return 0;
	}
	stat_inc(online ? VRQ_STAT_CPU_ONLINE : VRQ_STAT_CPU_OFFLINE);
	if ((u32)cpu >= VRQ_MAX_CPUS || cpu_is_online[CPU_IDX(cpu)] == online)
		return 0;
	cpu_is_online[CPU_IDX(cpu)] = online;
	q = queue_of_cpu(cpu);
	__sync_fetch_and_add(&queue_nr_cpus[QUEUE_IDX(q)], online ? 1 : -1);
	__sync_fetch_and_add(&nr_online_cpus, online ? 1 : -1);
	if (online && capacity_aware)
		update_cpu_cap(cpu, false);	/* the kernel may have rebuilt the capacities */
	if (online || !(cctx = cpu_ctx_of(cpu)))
		return 0;
	cctx->running_priodl = 0;
	cctx->turn_seq++;
	if (migration_delay_ns)
		end_delay(cpu);
	return 0;
}

