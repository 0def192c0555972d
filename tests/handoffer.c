/* SPDX-License-Identifier: GPL-2.0 */
/*
 * handoffer: a CPU-bound task that hands off. It spins RUN_US microseconds of its own CPU time, then
 * writes a byte to a pipe that a partner process sleeps on, and spins on without sleeping; the partner
 * wakes, reads and sleeps again. The woken partner preempts the spinner: the hand-off of a long runner
 * to the task it woke (--handoff-slice). Runs until killed; prints the two processes' pids (spinner
 * first). The in-guest test of hand-off service (tests/guest/scheduler_tests.py) sets it beside
 * plain CPU hogs on one CPU and compares their CPU time.
 *
 *   handoffer RUN_US
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long run_ns, next;
	int fds[2];
	pid_t partner;
	char c = 0;

	if (argc != 2 || (run_ns = atoll(argv[1]) * 1000LL) <= 0) {
		fprintf(stderr, "usage: handoffer RUN_US (microseconds of CPU time between hand-offs, > 0)\n");
		return 2;
	}
	if (pipe(fds)) {
		perror("handoffer: pipe");
		return 1;
	}
	partner = fork();
	if (partner < 0) {
		perror("handoffer: fork");
		return 1;
	}
	if (partner == 0) {
		close(fds[1]);
		while (read(fds[0], &c, 1) == 1)
			;
		return 0;
	}
	close(fds[0]);
	printf("%d %d\n", (int)getpid(), (int)partner);
	fflush(stdout);
	next = thread_cpu_ns() + run_ns;
	for (;;) {
		if (thread_cpu_ns() < next)
			continue;
		if (write(fds[1], &c, 1) != 1) {
			perror("handoffer: write");
			return 1;
		}
		next += run_ns;
	}
}
