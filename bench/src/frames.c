// SPDX-License-Identifier: GPL-2.0
// frames: a frame-paced loop, the shape of a game's or a compositor's main thread. Every PERIOD_US
// (default 16667, 60 Hz) a frame starts on an absolute clock (the vsync): the thread sleeps until then,
// does WORK_US of CPU work (calibrated on this CPU before the loop) and sleeps again. A frame is
// late when its work is not done by the next frame's start (a missed vsync: the frame shows a period
// late); the next frame then starts at the first vsync after it (the vsyncs passed meanwhile are
// dropped frames), as a game's loop does, so lateness does not cascade.
// Measured per frame:
//   frame time   from the frame's vsync to its work done (µs): the wake-up, the work, and every wait
//                for a CPU in between;
//   wake delay   from the vsync to the thread running (µs).
// Prints "frames=N late=L dropped=D frame_p50=.. frame_p99=.. frame_max=.. wake_p50=.. wake_p99=..
// work_us=.. period_us=.."
// after SECONDS.
//   frames SECONDS WORK_US [PERIOD_US]
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "probe.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long work_us = argc > 2 ? atol(argv[2]) : 0;
	long period_us = argc > 3 ? atol(argv[3]) : 16667;
	uint64_t loops, start, vsync, woke, done, *frame_us, *wake_us;
	uint64_t period_ns = (uint64_t)period_us * 1000, end;
	long n = 0, cap, late = 0, dropped = 0;

	if (secs <= 0 || work_us < 1 || period_us < 1 || work_us >= period_us) {
		fprintf(stderr, "usage: frames SECONDS WORK_US [PERIOD_US]  (1 <= WORK_US < PERIOD_US, default "
				"16667: 60 Hz)\n");
		return 2;
	}
	loops = calibrate(work_us);
	cap = (long)(secs * 1e6 / period_us) + 2;
	frame_us = calloc(cap, sizeof(*frame_us));
	wake_us = calloc(cap, sizeof(*wake_us));
	if (!frame_us || !wake_us) {
		perror("frames: alloc");
		return 1;
	}
	start = now_ns() + period_ns;
	end = start + (uint64_t)(secs * 1e9);
	for (vsync = start; n < cap && vsync + period_ns <= end;) {
		struct timespec at = { .tv_sec = vsync / 1000000000ull, .tv_nsec = vsync % 1000000000ull };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
		woke = now_ns();
		spin(loops);
		done = now_ns();
		frame_us[n] = (done - vsync) / 1000;
		wake_us[n] = woke > vsync ? (woke - vsync) / 1000 : 0;
		n++;
		vsync += period_ns;
		if (done > vsync)
			late++;
		for (; done > vsync; vsync += period_ns)
			dropped++;
	}
	qsort(frame_us, n, sizeof(*frame_us), cmp_u64);
	qsort(wake_us, n, sizeof(*wake_us), cmp_u64);
	printf("frames=%ld late=%ld dropped=%ld frame_p50=%llu frame_p99=%llu frame_max=%llu wake_p50=%llu "
	       "wake_p99=%llu work_us=%ld period_us=%ld\n",
	       n, late, dropped, (unsigned long long)pct(frame_us, n, 0.5), (unsigned long long)pct(frame_us, n, 0.99),
	       (unsigned long long)pct(frame_us, n, 1.0), (unsigned long long)pct(wake_us, n, 0.5),
	       (unsigned long long)pct(wake_us, n, 0.99), work_us, period_us);
	return n ? 0 : 1;
}
