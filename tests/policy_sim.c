/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy-sim: print the CPU share the deadline model predicts for hogs sharing one CPU.
 *   policy-sim RR_MS TICK_MS SECONDS IDLE_BOUND_MS TASK...    TASK = nice[:idle]
 * Prints one line per task: "<nice>[:idle] <share 0..1>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

int main(int argc, char **argv)
{
	struct sim_task t[SIM_MAX_TASKS];
	u64 total = 0;
	int n = 0, i;

	if (argc < 6) {
		fprintf(stderr, "usage: policy-sim RR_MS TICK_MS SECONDS IDLE_BOUND_MS nice[:idle]...\n");
		return 2;
	}
	for (i = 5; i < argc && n < SIM_MAX_TASKS; i++, n++) {
		memset(&t[n], 0, sizeof(t[n]));
		t[n].nice = atoi(argv[i]);
		t[n].policy = strstr(argv[i], ":idle") ? VRQ_SCHED_IDLE : VRQ_SCHED_NORMAL;
	}
	sim_run(t, n, strtoull(argv[1], NULL, 10) * VRQ_NSEC_PER_MSEC,
		strtoull(argv[2], NULL, 10) * VRQ_NSEC_PER_MSEC,
		strtoull(argv[3], NULL, 10) * 1000ULL * VRQ_NSEC_PER_MSEC,
		strtoull(argv[4], NULL, 10) * VRQ_NSEC_PER_MSEC);
	for (i = 0; i < n; i++)
		total += t[i].runtime;
	for (i = 0; i < n; i++)
		printf("%s %.4f\n", argv[5 + i], total ? (double)t[i].runtime / (double)total : 0.0);
	return 0;
}
