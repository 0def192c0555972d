/* SPDX-License-Identifier: GPL-2.0 */
/*
 * manythreads N SECS: N runnable threads in one process, released together, each spinning and bumping
 * its own counter. After SECS seconds it prints how many threads ran at all, the longest any thread
 * waited for its first run after the release, and the longest gap any thread saw between two of its
 * own progress checks (time spent off the CPU), then exits. Exit status 0 only if every thread ran.
 * Also: how long waking them all took the releasing thread (release_ms; part of every first wait).
 *
 * The in-guest reliability test of --max-round-ms: with a fixed 6 ms slice, 10,000 threads on 2 CPUs
 * would be a 30 s round, three times the sched_ext watchdog.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One cache line per thread so that the counters do not bounce between CPUs. */
struct worker {
	_Atomic uint64_t iterations;
	_Atomic uint64_t first_run_ns; /* 0 until the thread first runs after the release */
	_Atomic uint64_t max_gap_ns;   /* longest time between two consecutive progress checks */
	char pad[40];
};

static struct worker *workers;
static _Atomic int gate; /* 0: threads wait (blocked, not runnable); 1: released */
static _Atomic int stop;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of the n sorted values, in ms. */
static double quantile_ms(const uint64_t *sorted, long n, double q)
{
	return n ? sorted[(long)(q * (n - 1))] / 1e6 : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *spin(void *arg)
{
	struct worker *w = arg;
	uint64_t last, now, gap, max_gap = 0, n = 0;

	/* Block on the futex until every thread exists: creating 10,000 threads while the first ones
	 * already compete for the CPU would take the creator minutes of its 1/N share. */
	while (!atomic_load(&gate))
		syscall(SYS_futex, &gate, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	last = now_ns();
	atomic_store_explicit(&w->first_run_ns, last, memory_order_relaxed);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		atomic_store_explicit(&w->iterations, ++n, memory_order_relaxed);
		if (n % 256)
			continue;
		/* A gap between checks this thread could only have spent waiting for a CPU. */
		now = now_ns();
		gap = now - last;
		last = now;
		if (gap > max_gap) {
			max_gap = gap;
			atomic_store_explicit(&w->max_gap_ns, max_gap, memory_order_relaxed);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	double secs = argc > 2 ? atof(argv[2]) : 20;
	uint64_t release, woken, first_max = 0, total = 0;
	long i, ran = 0, created;
	pthread_attr_t attr;
	pthread_t t;

	if (n < 1 || secs <= 0) {
		fprintf(stderr, "usage: manythreads N SECS\n");
		return 2;
	}
	workers = aligned_alloc(64, sizeof(*workers) * n);
	if (!workers) {
		perror("manythreads: alloc");
		return 1;
	}
	for (i = 0; i < n; i++)
		workers[i] = (struct worker){0};
	/* Small stacks: 10,000 default 8 MiB stacks would be 80 GiB of address space. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536);
	for (created = 0; created < n; created++) {
		if (pthread_create(&t, &attr, spin, &workers[created])) {
			perror("manythreads: pthread_create");
			return 1;
		}
	}
	/* The measuring thread runs SCHED_FIFO where allowed (root): it then sleeps, wakes and reads the
	 * counters on time whatever the N threads do, and the process ends even if the scheduler under test
	 * has been ejected and the kernel's own is wading through N spinners. */
	sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 });
	release = now_ns();
	atomic_store(&gate, 1);
	syscall(SYS_futex, &gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	woken = now_ns();

	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);

	uint64_t *gaps = calloc(n, sizeof(*gaps));

	if (!gaps) {
		perror("manythreads: alloc");
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t first = atomic_load(&workers[i].first_run_ns);
		uint64_t gap = atomic_load(&workers[i].max_gap_ns);

		total += atomic_load(&workers[i].iterations);
		if (!first)
			continue;
		gaps[ran++] = gap;
		if (first - release > first_max)
			first_max = first - release;
	}
	/* how the threads' longest gaps spread: all alike (long rounds) or a few far out (passed over) */
	qsort(gaps, ran, sizeof(*gaps), cmp_u64);
	/* how many threads saw more than 1.1 rounds (the median longest gap) at least once */
	long over = 0;

	for (i = 0; i < ran; i++)
		over += gaps[i] * 10 > gaps[ran / 2] * 11;
	printf("threads %ld ran %ld first_run_max_ms %.1f gap_max_ms %.1f iterations %llu secs %.1f "
	       "gap_p50_ms %.1f gap_p90_ms %.1f gap_p99_ms %.1f release_ms %.1f over_1.1_rounds %ld\n", n, ran,
	       first_max / 1e6, quantile_ms(gaps, ran, 1.0), (unsigned long long)total, (now_ns() - release) / 1e9,
	       quantile_ms(gaps, ran, 0.5), quantile_ms(gaps, ran, 0.9), quantile_ms(gaps, ran, 0.99),
	       (woken - release) / 1e6, over);
	fflush(stdout);
	/* exit_group: no need to join 10,000 threads */
	_exit(ran == n ? 0 : 1);
}
