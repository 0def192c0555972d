// SPDX-License-Identifier: GPL-2.0
// spin: a fixed amount of pure CPU work in each of THREADS threads (no system calls, no memory
// traffic beyond registers and the stack), and the time from the start until the last one finished.
// With THREADS threads on at least THREADS free CPUs a machine that really runs them in parallel
// takes about as long as for one; a machine that takes turns takes THREADS times as long. The
// instrument's own tests use it (parallel speed-up, and that the instruction-counted clock repeats).
//   spin ITERATIONS THREADS   ->  "secs=<elapsed seconds> threads=<THREADS>"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long iterations;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < iterations; i++)
		x += i;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t tids[256];
	char *end;
	long threads;
	double start, secs;

	if (argc != 3) {
		fprintf(stderr, "usage: spin ITERATIONS THREADS\n");
		return 2;
	}
	iterations = strtoul(argv[1], &end, 10);
	if (*end || iterations == 0) {
		fprintf(stderr, "spin: ITERATIONS must be a positive integer, not '%s'\n", argv[1]);
		return 2;
	}
	threads = strtol(argv[2], &end, 10);
	if (*end || threads < 1 || threads > 256) {
		fprintf(stderr, "spin: THREADS must be 1 to 256, not '%s'\n", argv[2]);
		return 2;
	}
	start = now();
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, work, NULL)) {
			perror("spin: pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	secs = now() - start;
	printf("secs=%.6f threads=%ld\n", secs, threads);
	return 0;
}
