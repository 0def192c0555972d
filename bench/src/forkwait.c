// SPDX-License-Identifier: GPL-2.0
// forkwait: the fork -> exec -> wait chain of a build's job control (delayed migration's case): for
// SECONDS, fork a child that execs PROGRAM (default /bin/true) and wait for it; print "rate=<children
// per second> warm=<children that started on the parent's CPU>/<children>" (delayed migration keeps
// them there).
//   forkwait SECONDS [PROGRAM]
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, start, t;
	const char *prog = argc > 2 ? argv[2] : "/bin/true";
	unsigned long n = 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: forkwait SECONDS [PROGRAM]\n");
		return 2;
	}
	/* one flag the child sets, shared across fork: did it start on the CPU its parent forked it on? */
	volatile int *same = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long warm = 0;

	if (same == MAP_FAILED) {
		perror("forkwait: mmap");
		return 1;
	}
	start = now();
	do {
		int parent_cpu = sched_getcpu();
		pid_t pid;

		*same = 0;
		pid = fork();
		if (pid == 0) {
			*same = sched_getcpu() == parent_cpu;
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
		n++;
		warm += *same;
		t = now();
	} while (t - start < secs);
	printf("rate=%.2f warm=%lu/%lu\n", n / (t - start), warm, n);
	return 0;
}
