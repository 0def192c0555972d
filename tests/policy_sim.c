/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy-sim: print the CPU share the deadline model predicts for hogs sharing one CPU.
 *   policy-sim [--target-ms T --cpus N] RR_MS TICK_MS SECONDS IDLE_BOUND_MS TASK...   TASK = nice[:idle]
 * --target-ms / --cpus: the scheduler's --target-latency-ms and the machine's CPU count. Only latency
 * waiters speed the queues' clock up (vrq_clock_waiters), and hogs never wake: at any target
 * they share a CPU as they do without one (the model the scheduler tests compare with).
 * Prints one line per task: "<nice>[:idle] <share 0..1>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

static void usage(void)
{
	fprintf(stderr, "usage: policy-sim [--target-ms T --cpus N] RR_MS TICK_MS SECONDS IDLE_BOUND_MS nice[:idle]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sim_task t[SIM_MAX_TASKS];
	u64 total = 0, target_ms = 0, nr_cpus = 1, rr_ns, tick_ns, rate;
	int n = 0, i, a = 1;

	while (a + 1 < argc && !strncmp(argv[a], "--", 2)) {
		if (!strcmp(argv[a], "--target-ms"))
			target_ms = strtoull(argv[a + 1], NULL, 10);
		else if (!strcmp(argv[a], "--cpus"))
			nr_cpus = strtoull(argv[a + 1], NULL, 10);
		else
			usage();
		a += 2;
	}
	if (argc - a < 5)
		usage();
	for (i = a + 4; i < argc && n < SIM_MAX_TASKS; i++, n++) {
		memset(&t[n], 0, sizeof(t[n]));
		t[n].nice = atoi(argv[i]);
		t[n].policy = strstr(argv[i], ":idle") ? VRQ_SCHED_IDLE : VRQ_SCHED_NORMAL;
	}
	rr_ns = strtoull(argv[a], NULL, 10) * VRQ_NSEC_PER_MSEC;
	tick_ns = strtoull(argv[a + 1], NULL, 10) * VRQ_NSEC_PER_MSEC;
	/* one task runs, the others wait; they are hogs, requeued after each turn, never woken: none of
	 * them counts toward the target latency's clock rate (vrq_clock_waiters) */
	rate = vrq_clock_rate(rr_ns, target_ms * VRQ_NSEC_PER_MSEC, 1000 * VRQ_NSEC_PER_USEC, vrq_clock_waiters(0, n > 1 ? n - 1 : 0), nr_cpus);
	if (rate > VRQ_RATE_ONE)
		tick_ns = 10 * VRQ_NSEC_PER_USEC;
	sim_run_at_rate(t, n, rr_ns, tick_ns, strtoull(argv[a + 2], NULL, 10) * 1000ULL * VRQ_NSEC_PER_MSEC,
			strtoull(argv[a + 3], NULL, 10) * VRQ_NSEC_PER_MSEC, rate);
	for (i = 0; i < n; i++)
		total += t[i].runtime;
	for (i = 0; i < n; i++)
		printf("%s %.4f\n", argv[a + 4 + i], total ? (double)t[i].runtime / (double)total : 0.0);
	return 0;
}
