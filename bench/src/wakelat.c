// SPDX-License-Identifier: GPL-2.0
// wakelat: a schbench-like wake-up latency probe. THREADS threads each sleep PERIOD_US with an absolute
// clock_nanosleep and record how late they woke (actual - requested, µs) for SECONDS; then prints
// "samples=N p50=X p99=Y p999=Z max=W" (µs). Debian has no schbench; this measures the same thing:
// how long a task that became runnable waits for a CPU while others load the machine.
//   wakelat SECONDS [THREADS [PERIOD_US]]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long seconds, period_us;
static long *samples;
static long nsamples, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static void *worker(void *arg)
{
	struct timespec next, now, end;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	end.tv_sec += seconds;
	while (1) {
		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		if (ns(&next) >= ns(&end))
			break;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		pthread_mutex_lock(&lock);
		if (nsamples < cap)
			samples[nsamples++] = (ns(&now) - ns(&next)) / 1000;
		pthread_mutex_unlock(&lock);
		/* a late wake-up skips the periods it missed rather than catching up in a burst */
		if (ns(&now) > ns(&next) + period_us * 1000L)
			next = now;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long threads, i;
	pthread_t *tids;

	if (argc < 2) {
		fprintf(stderr, "usage: wakelat SECONDS [THREADS [PERIOD_US]]\n");
		return 2;
	}
	seconds = atol(argv[1]);
	threads = argc > 2 ? atol(argv[2]) : 4;
	period_us = argc > 3 ? atol(argv[3]) : 10000;
	if (seconds <= 0 || threads <= 0 || period_us <= 0) {
		fprintf(stderr, "wakelat: arguments must be positive\n");
		return 2;
	}
	cap = threads * (seconds * 1000000L / period_us + 1);
	samples = calloc(cap, sizeof(*samples));
	tids = calloc(threads, sizeof(*tids));
	if (!samples || !tids)
		return 1;
	for (i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (!nsamples) {
		printf("samples=0\n");
		return 1;
	}
	qsort(samples, nsamples, sizeof(*samples), cmp);
	printf("samples=%ld p50=%ld p99=%ld p999=%ld max=%ld\n", nsamples, samples[nsamples * 50 / 100],
	       samples[nsamples * 99 / 100], samples[nsamples * 999 / 1000], samples[nsamples - 1]);
	return 0;
}
