// SPDX-License-Identifier: GPL-2.0
// What the CPU-work probes share (reqlat, frames): the clock, a calibrated busy loop, and percentiles
// of sorted samples.
#ifndef VRQ_PROBE_H
#define VRQ_PROBE_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t probe_sink;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// @loops of a multiply-add chain the compiler cannot drop: the probes' unit of CPU work.
static inline void spin(uint64_t loops)
{
	uint64_t x = 0;

	for (uint64_t i = 0; i < loops; i++)
		x = x * 6364136223846793005ull + i;
	probe_sink = x;
}

// Loops of spin() that take about @us on this CPU (best of a few timings, so that a preemption
// during calibration does not shrink the work).
static inline uint64_t calibrate(long us)
{
	uint64_t loops = 100000, best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns();

		spin(loops);
		uint64_t dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	return best ? loops * (uint64_t)us * 1000 / best : loops;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

// The @q quantile (0..1) of @n sorted samples (0 when there are none).
static inline uint64_t pct(const uint64_t *sorted, long n, double q)
{
	return n ? sorted[(long)(q * (n - 1))] : 0;
}

#endif
