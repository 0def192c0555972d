// SPDX-License-Identifier: GPL-2.0
// hograte: one CPU hog that reports its progress: loop iterations per second over SECONDS
// (BFS group accounting's "frames encoded per minute" of a video encode beside make -jN).
//   hograte SECONDS    ->  "rate=<iterations per second>"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, start, t;
	volatile unsigned long x = 0;
	unsigned long iters = 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: hograte SECONDS\n");
		return 2;
	}
	start = now();
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		iters++;
		t = now();
	} while (t - start < secs);
	printf("rate=%.2f\n", iters / (t - start));
	return 0;
}
