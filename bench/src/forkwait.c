// SPDX-License-Identifier: GPL-2.0
// forkwait: the fork -> exec -> wait chain of a build's job control (seed 002): for SECONDS, fork a
// child that execs PROGRAM (default /bin/true) and wait for it; print "rate=<children per second>".
//   forkwait SECONDS [PROGRAM]
#include <stdio.h>
#include <stdlib.h>
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
	start = now();
	do {
		pid_t pid = fork();

		if (pid == 0) {
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
		n++;
		t = now();
	} while (t - start < secs);
	printf("rate=%.2f\n", n / (t - start));
	return 0;
}
