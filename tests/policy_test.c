/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests of the scheduling policy (src/bpf/policy.h), the same functions the BPF scheduler
 * runs. Build and run: make -C tests check.
 *
 * A test case is one test_* function of the table in main(): one named property, however many
 * assertions (CHECK) or inputs it takes to show it (a loop over 10,000 inputs is still one case). Each
 * case prints "PASS name (N assertions)" or "FAIL name: K of N assertions failed, the first at
 * file:line: expression"; the closing line counts cases, with the assertions as an extra figure:
 * "policy: N passed, N failed (N assertions)". A case that checks nothing fails.
 */
#include <stdio.h>
#include <string.h>
#include "sim.h"

/* The case under way: its assertions, its failed ones, the first failure's place and expression. */
static struct {
	unsigned long checks, failed;
	const char *file, *expr;
	int line;
} cur;
static unsigned long assertions;

static void check(int ok, const char *file, int line, const char *expr)
{
	cur.checks++;
	assertions++;
	if (ok)
		return;
	if (!cur.failed++) {
		cur.file = file;
		cur.line = line;
		cur.expr = expr;
	}
}

#define CHECK(cond) check(!!(cond), __FILE__, __LINE__, #cond)

/* n with thousands separators ("1,234,567"), in buf */
static const char *count_str(unsigned long n, char buf[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%lu", n), i, o = 0;

	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

#define MS(x) ((u64)(x) * VRQ_NSEC_PER_MSEC)
#define US(x) ((u64)(x) * VRQ_NSEC_PER_USEC)

static void test_prio_ratio(void)
{
	u64 prev = 0;
	s32 nice;

	CHECK(vrq_prio_ratio(-20) == 128);
	CHECK(vrq_prio_ratio(-19) == 140);	/* 128 * 11 / 10, integer */
	CHECK(vrq_prio_ratio(0) == 836);
	CHECK(vrq_prio_ratio(19) == 5089);
	for (nice = -20; nice <= 19; nice++) {
		u64 r = vrq_prio_ratio(nice);

		if (nice > -20)
			CHECK(r == prev * 11 / 10);
		prev = r;
	}
	CHECK(vrq_prio_ratio(-100) == 128);	/* clamped */
	CHECK(vrq_prio_ratio(100) == 5089);
}

static void test_deadline(void)
{
	/* nice 0 at rr_interval 6 ms: 836/128 * 6 ms = 39.1875 ms after now */
	CHECK(vrq_deadline(MS(1000), 0, MS(6)) == MS(1000) + 39187500);
	/* nice -20: exactly one rr_interval */
	CHECK(vrq_deadline(0, -20, MS(6)) == MS(6));
	/* nice only moves the deadline: higher nice, later deadline */
	CHECK(vrq_deadline(0, 10, MS(6)) > vrq_deadline(0, 0, MS(6)));
	/* a shorter slice scales the offset with it */
	CHECK(vrq_deadline(0, 0, MS(3)) * 2 == vrq_deadline(0, 0, MS(6)));
}

static void test_priodl(void)
{
	u64 early_normal = vrq_priodl(VRQ_PRIO_NORMAL, MS(10));
	u64 late_normal = vrq_priodl(VRQ_PRIO_NORMAL, MS(100000));
	u64 early_idle = vrq_priodl(VRQ_PRIO_SCHED_IDLE, 0);

	CHECK(early_normal < late_normal);
	CHECK(late_normal < early_idle);	/* priority dominates the deadline */
	CHECK(vrq_priodl_prio(early_idle) == VRQ_PRIO_SCHED_IDLE);
	CHECK(vrq_priodl(VRQ_PRIO_NORMAL, 0x123456789abcdef0ULL) ==
	      (((u64)VRQ_PRIO_NORMAL << 56) | (0x123456789abcdef0ULL >> 8)));
	/* every live key lies well inside the kernel's signed vtime comparison window */
	CHECK(early_idle - early_normal < (1ULL << 63));
}

static void test_task_prio(void)
{
	CHECK(vrq_task_prio(VRQ_SCHED_NORMAL, 0, 0) == VRQ_PRIO_NORMAL);
	CHECK(vrq_task_prio(VRQ_SCHED_BATCH, 0, 0) == VRQ_PRIO_NORMAL);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 0, 0) == VRQ_PRIO_SCHED_IDLE);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 1, 0) == VRQ_PRIO_NORMAL);	/* exiting: holds resources */
	/* a kernel thread's wake-up goes before every user task, whatever its deadline */
	CHECK(vrq_task_prio(VRQ_SCHED_NORMAL, 0, 1) == VRQ_PRIO_KERNEL);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 0, 1) == VRQ_PRIO_KERNEL);
	CHECK(vrq_priodl(VRQ_PRIO_KERNEL, ~0ULL) < vrq_priodl(VRQ_PRIO_NORMAL, 0));
}

static void test_preempt(void)
{
	CHECK(vrq_may_preempt(VRQ_SCHED_NORMAL, 0));
	CHECK(!vrq_may_preempt(VRQ_SCHED_BATCH, 0));
	CHECK(!vrq_may_preempt(VRQ_SCHED_NORMAL, 1));

	CHECK(vrq_should_preempt(100, 200));
	CHECK(!vrq_should_preempt(200, 200));
	CHECK(!vrq_should_preempt(300, 200));
	CHECK(!vrq_should_preempt(100, 0));	/* an idle CPU is woken, never "preempted" */
}

static void test_keeps_cpu(void)
{
	/* dispatch: the task that just ran keeps its CPU unless a queue head is earlier */
	CHECK(vrq_keeps_cpu(500, 0, 0));	/* every queue empty */
	CHECK(vrq_keeps_cpu(100, 1, 200));
	CHECK(vrq_keeps_cpu(200, 1, 200));	/* a tie keeps it: no switch for nothing */
	CHECK(!vrq_keeps_cpu(300, 1, 200));
	/* a kernel thread's wake-up at the head beats any user task that just ran */
	CHECK(!vrq_keeps_cpu(vrq_priodl(VRQ_PRIO_NORMAL, 0), 1, vrq_priodl(VRQ_PRIO_KERNEL, ~0ULL)));
}

static void test_effective_slice(void)
{
	u32 why = 99;

	/* short queues keep rr_interval exactly */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 0, 2, &why) == MS(6) && why == VRQ_SLICE_FULL);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 300, 2, NULL) == MS(6));	/* 150 * 6 ms < 1 s */
	/* 1000 queued on 2 CPUs: 500 per CPU, 1 s / 500 = 2 ms */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 1000, 2, &why) == MS(2) && why == VRQ_SLICE_FIT_ROUND);
	/* 10,000 runnable on 2 CPUs: floor at the minimum slice; round = 5000 * 250 us = 1.25 s */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 10000, 2, &why) == US(250) && why == VRQ_SLICE_FIT_ROUND);
	CHECK(5000 * vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 10000, 2, NULL) < MS(10000));
	/* never longer than rr_interval, even with a min slice above it */
	CHECK(vrq_effective_slice(MS(1), MS(2), MS(10), VRQ_RATE_ONE, 1000, 1, &why) == MS(1) && why == VRQ_SLICE_FULL);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 1000, 0, NULL) == US(1000));	/* 0 CPUs = 1 */
	/* kernel threads keep rr_interval however long the queue; user tasks get the shrunk slice */
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 10000, 2, 1, &why) == MS(6) && why == VRQ_SLICE_FULL);
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 10000, 2, 0, NULL) == US(250));
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 10, 2, 0, NULL) == MS(6));
}

/*
 * The floor gives way before a round passes half the watchdog: 100,000 runnable tasks on 2 CPUs at
 * the 250 us floor would be a 12.5 s round; the slice becomes 5 s / 50,000 = 100 us instead. Below the
 * shortest slice the timer ends, the round grows past the safe round (and it is said so).
 */
static void test_floor_gives_way(void)
{
	u64 slice, n;
	u32 why = 99;

	CHECK(VRQ_SAFE_ROUND_NS == MS(5000));
	/* 20,000 per CPU x 250 us = 5 s exactly: the floor still holds */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 40000, 2, &why) == US(250) && why == VRQ_SLICE_FIT_ROUND);
	/* one more task per CPU and it gives way */
	slice = vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 40002, 2, &why);
	CHECK(slice < US(250) && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	CHECK(20001 * slice <= VRQ_SAFE_ROUND_NS);
	/* the 100,000 threads on 2 CPUs */
	slice = vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 100000, 2, &why);
	CHECK(slice == US(100) && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	/* at every count the floor can hold, the round is within the safe round */
	for (n = 2; n <= 2 * VRQ_SAFE_ROUND_NS / VRQ_SLICE_TIMER_MIN_NS; n = n * 3 / 2 + 1) {
		slice = vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, n, 2, &why);
		CHECK((n / 2) * slice <= VRQ_SAFE_ROUND_NS || why == VRQ_SLICE_FULL);
		CHECK(slice >= VRQ_SLICE_TIMER_MIN_NS);
	}
	/* past 100,000 per CPU not even the shortest slice holds the round: it stays at that minimum */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 200000, 2, &why) == VRQ_SLICE_TIMER_MIN_NS &&
	      why == VRQ_SLICE_FLOOR_GAVE_WAY);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 200002, 2, &why) == VRQ_SLICE_TIMER_MIN_NS &&
	      why == VRQ_SLICE_ROUND_OVER);
	/* a longer --max-round-ms than the floor's round still never passes the safe round */
	slice = vrq_effective_slice(MS(6), US(250), MS(5000), VRQ_RATE_ONE, 100000, 1, &why);
	CHECK(100000 * slice <= VRQ_SAFE_ROUND_NS && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	/* kernel threads still keep rr_interval at any count */
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), VRQ_RATE_ONE, 1000000, 2, 1, &why) == MS(6) && why == VRQ_SLICE_FULL);
}

/*
 * Target latency: while tasks wait, the queues' clock runs faster so that the runnable tasks per CPU
 * each get a turn (rr_interval of clock time) within the target, down to the floor's turn; the
 * long-queue rules take over beyond that. Deadline offsets stay rr_interval's in clock time.
 */
static void test_target_latency(void)
{
	u32 why = 99;
	u64 r;

	/* off, or nothing waits: real time */
	CHECK(vrq_clock_rate(MS(6), 0, US(250), 4, 2) == VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(6), US(750), 0, 2) == VRQ_RATE_ONE);
	/* 4 waiting on 2 CPUs: 3 runnable per CPU, 3 x 6 ms / 6 ms: the clock runs 3x, turns of 2 ms */
	r = vrq_clock_rate(MS(6), MS(6), US(750), 4, 2);
	CHECK(r == 3 * VRQ_RATE_ONE);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 4, 2, &why) == MS(2) && why == VRQ_SLICE_TARGET);
	/* 1 waiting on 2 CPUs counts as one more per CPU: turns of 3 ms */
	r = vrq_clock_rate(MS(6), MS(6), US(750), 1, 2);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 1, 2, &why) == MS(3) && why == VRQ_SLICE_TARGET);
	/* 14 waiting (8 per CPU): the floor's reach (6 ms / 750 us), 8x, turns of 750 us */
	r = vrq_clock_rate(MS(6), MS(6), US(750), 14, 2);
	CHECK(r == 8 * VRQ_RATE_ONE);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 14, 2, &why) == US(750) && why == VRQ_SLICE_TARGET);
	/* target 3 ms, 3 runnable per CPU: 6x, turns of 1 ms; the floor's reach is 16x (turns of 375 us) */
	CHECK(vrq_clock_rate(MS(6), MS(3), US(375), 4, 2) == 6 * VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(3), US(375), 14, 2) == 16 * VRQ_RATE_ONE);
	/* a queue with nothing waiting keeps rr_interval whatever the rate (nothing waits there) */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 6 * VRQ_RATE_ONE, 0, 2, &why) == MS(6) &&
	      why == VRQ_SLICE_FULL);
	/* a target above what the queue needs changes nothing */
	CHECK(vrq_clock_rate(MS(6), MS(100), US(750), 4, 2) == VRQ_RATE_ONE);
	/* past the floor's reach the turn grows back: at 2 ms with a 1 ms floor the floor serves 2 per CPU
	 * (6x, 1 ms); 3 per CPU get 1.5 ms (4x), 6 get 3 ms (2x), 12 or more rr_interval (real time) --
	 * hackbench's ~160 latency waiters on 2 CPUs see BFS's turns */
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(1), 2, 2) == 6 * VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(1), 4, 2) == 4 * VRQ_RATE_ONE);
	r = vrq_clock_rate(MS(6), MS(2), MS(1), 4, 2);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 4, 2, &why) == US(1500) && why == VRQ_SLICE_TARGET);
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(1), 10, 2) == 2 * VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(1), 22, 2) == VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(1), 160, 2) == VRQ_RATE_ONE);
	/* never faster than the floor's reach on the way: the rate only falls past it */
	{
		u64 n, prev = 0, top = 0;
		int rises_after_top = 0;

		for (n = 1; n <= 200; n++) {
			r = vrq_clock_rate(MS(6), MS(2), US(250), n, 2);
			CHECK(r <= 24 * VRQ_RATE_ONE);
			if (top && r > prev)
				rises_after_top = 1;
			if (r == 24 * VRQ_RATE_ONE)
				top = n;
			prev = r;
		}
		CHECK(top && !rises_after_top);
	}
	/* below the floor's reach the target rules: 2 latency waiters on 2 CPUs at 2 ms is 2 x 3 = 6x either way */
	CHECK(vrq_clock_rate(MS(6), MS(2), US(500), 2, 2) == 6 * VRQ_RATE_ONE);
	/* a floor of rr_interval or more leaves nothing to shorten: real time */
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(6), 3, 2) == VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(6), MS(2), MS(7), 3, 2) == VRQ_RATE_ONE);
	/* long queues: the round rule as before (the target's turn has grown back by then) */
	r = vrq_clock_rate(MS(6), MS(6), US(750), 10000, 2);
	CHECK(r == VRQ_RATE_ONE);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 10000, 2, &why) == US(250) && why == VRQ_SLICE_FIT_ROUND);
	r = vrq_clock_rate(MS(6), MS(6), US(750), 100000, 2);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 100000, 2, &why) == US(100) &&
	      why == VRQ_SLICE_FLOOR_GAVE_WAY);
	/* a shortened turn beside a long queue: the round rule wins when it gives the shorter turn */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 8 * VRQ_RATE_ONE, 2800, 2, &why) == MS(1000) / 1400 &&
	      why == VRQ_SLICE_FIT_ROUND);
	/* kernel threads keep rr_interval */
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), 3 * VRQ_RATE_ONE, 4, 2, 1, NULL) == MS(6));
	/* huge queues do not overflow the rate */
	CHECK(vrq_clock_rate(MS(1000), MS(1), US(125), ~0ULL / 2, 1) == VRQ_RATE_ONE);
	CHECK(vrq_clock_rate(MS(1000), MS(1000), US(50), 2, 1) == 3 * VRQ_RATE_ONE);
	/* the round target: every queued task counts, against a round of 12 ms */
	/* a build of 1.5 jobs per CPU (2 runnable per CPU: one queued on 2 CPUs) keeps BFS's turns */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 0, 1, 2, 0) == VRQ_RATE_ONE);
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 0, 2, 2, 0) == VRQ_RATE_ONE);
	/* 4 request workers per CPU and their message thread (7 queued on 2 CPUs, 5 runnable per CPU):
	 * 30 ms of turns against 12, the clock at 2.5x, turns of 2.4 ms */
	r = vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 0, 7, 2, 0);
	CHECK(r == 5 * (MS(6) * VRQ_RATE_ONE / MS(12)));
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 7, 2, &why) == US(2400) && why == VRQ_SLICE_TARGET);
	/* off (0), the latency target alone decides */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), 0, MS(1), 0, 7, 2, 0) == VRQ_RATE_ONE);
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), 0, MS(1), 2, 7, 2, 0) == vrq_clock_rate(MS(6), MS(2), MS(1), 2, 2));
	/* the faster of the two wins: one latency waiter among them sets 6x (the 2 ms target) */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 1, 7, 2, 0) == 6 * VRQ_RATE_ONE);
	/* past the floor's reach (12 per CPU) the turn grows back: 47 runnable per CPU get 1.5x, 72 real time */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 0, 92, 2, 0) == 6 * VRQ_RATE_ONE * 12 / 47);
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 0, 142, 2, 0) == VRQ_RATE_ONE);
	/* with the round target the round of a queue of up to 12 runnable per CPU is within it */
	{
		u64 n;

		for (n = 1; n <= 22; n++) {
			u64 per_cpu = (n + 1) / 2 + 1;

			r = vrq_queues_clock_rate(MS(6), 0, MS(12), MS(1), 0, n, 2, 0);
			CHECK(per_cpu * vrq_effective_slice(MS(6), US(250), MS(1000), r, n, 2, NULL) <= MS(12) + US(1));
		}
	}
}

/*
 * --hold-floor: latency waiters' turns hold at the floor up to the round target's reach (round target /
 * floor per CPU) instead of growing back past the target latency's (target / floor), then grow back as
 * the round target's own turns do.
 */
static void test_hold_floor(void)
{
	u64 n, r;

	/* the reach: the round target's only when held and longer than the target */
	CHECK(vrq_latency_reach(MS(2), MS(12), 0) == MS(2));
	CHECK(vrq_latency_reach(MS(2), MS(12), 1) == MS(12));
	CHECK(vrq_latency_reach(MS(2), 0, 1) == MS(2));
	CHECK(vrq_latency_reach(MS(2), MS(1), 1) == MS(2));
	/* the reach at the target is vrq_clock_rate, for every count; a reach below the target is the target */
	for (n = 0; n <= 300; n++) {
		CHECK(vrq_clock_rate_reach(MS(6), MS(2), MS(2), MS(1), n, 2) == vrq_clock_rate(MS(6), MS(2), MS(1), n, 2));
		CHECK(vrq_clock_rate_reach(MS(6), MS(2), MS(1), MS(1), n, 2) == vrq_clock_rate(MS(6), MS(2), MS(1), n, 2));
		CHECK(vrq_clock_rate_reach(MS(6), MS(3), MS(3), US(375), n, 2) ==
		      vrq_clock_rate(MS(6), MS(3), US(375), n, 2));
	}
	/* within the target's reach nothing changes: 2 latency waiters on 2 CPUs, 6x, 1 ms turns */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 2, 2, 2, 1) == 6 * VRQ_RATE_ONE);
	/* 1 ms requests x 4 workers per CPU (6 latency waiters queued on 2 CPUs, 4 runnable per CPU): turns of
	 * 2 ms without (3x: the latency rule grown back, faster than the round target's 2x), held at the
	 * floor's 1 ms with it */
	r = vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 6, 6, 2, 0);
	CHECK(r == 3 * VRQ_RATE_ONE);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 6, 2, NULL) == MS(2));
	r = vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 6, 6, 2, 1);
	CHECK(r == 6 * VRQ_RATE_ONE);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), r, 6, 2, NULL) == MS(1));
	/* held to 12 runnable per CPU (22 waiters on 2 CPUs), growing back past it as the round target does:
	 * 47 per CPU get 1.5x, 72 real time -- the same turns as without, where the round target rules */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), 22, 22, 2, 1) == 6 * VRQ_RATE_ONE);
	for (n = 23; n <= 400; n++)
		CHECK(vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), n, n, 2, 1) ==
		      vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), n, n, 2, 0));
	/* between the two reaches, the turns held are never longer than without; the rate never above the cap */
	for (n = 1; n <= 22; n++) {
		u64 held = vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), n, n, 2, 1);

		CHECK(held >= vrq_queues_clock_rate(MS(6), MS(2), MS(12), MS(1), n, n, 2, 0));
		CHECK(held <= 6 * VRQ_RATE_ONE);
	}
	/* the round target off: nothing to hold to */
	CHECK(vrq_queues_clock_rate(MS(6), MS(2), 0, MS(1), 6, 6, 2, 1) == 3 * VRQ_RATE_ONE);
}

/* Which waiting tasks set the clock's rate, and when a turn at that rate is over. */
static void test_clock_waiters_and_turns(void)
{
	u64 r;

	/* only latency waiters set the rate: none (hogs requeued after their turn) is real time; a
	 * count that raced below 0 is none; more than the queues hold is what they hold */
	CHECK(vrq_clock_waiters(0, 5) == 0);
	CHECK(vrq_clock_waiters(-2, 5) == 0);
	CHECK(vrq_clock_waiters(3, 5) == 3);
	CHECK(vrq_clock_waiters(9, 5) == 5);
	CHECK(vrq_clock_rate(MS(6), MS(3), US(375), vrq_clock_waiters(0, 1), 2) == VRQ_RATE_ONE);
	/* a turn under way is over once it lasted the turn at the rate: 1 latency waiter on 2 CPUs at
	 * 3 ms is 4x, 1.5 ms; never at real time, however long the turn */
	r = vrq_clock_rate(MS(6), MS(3), US(375), vrq_clock_waiters(1, 1), 2);
	CHECK(r == 4 * VRQ_RATE_ONE);
	CHECK(!vrq_turn_over(US(1499), MS(6), r));
	CHECK(vrq_turn_over(US(1500), MS(6), r));
	CHECK(!vrq_turn_over(MS(60), MS(6), VRQ_RATE_ONE));
}

static void test_clock_slice(void)
{
	/* the offset's slice, in clock time: rr_interval for a shortened turn, a lone task, a kernel
	 * thread alike; the slice itself at real time and for the long-queue rules' shorter turns */
	CHECK(vrq_clock_slice(MS(2), MS(6), 3 * VRQ_RATE_ONE) == MS(6));
	CHECK(vrq_clock_slice(MS(6), MS(6), 3 * VRQ_RATE_ONE) == MS(6));
	CHECK(vrq_clock_slice(MS(6), MS(6), VRQ_RATE_ONE) == MS(6));
	CHECK(vrq_clock_slice(US(250), MS(6), VRQ_RATE_ONE) == US(250));
	CHECK(vrq_clock_slice(US(250), MS(6), 8 * VRQ_RATE_ONE) == MS(2));
}

static void test_clock_now(void)
{
	/* the clock: real time plus what it gained, banked and since the mark */
	CHECK(vrq_clock_now(MS(10), 0, 0, VRQ_RATE_ONE) == MS(10));
	CHECK(vrq_clock_now(MS(10), MS(4), MS(5), VRQ_RATE_ONE) == MS(15));
	CHECK(vrq_clock_now(MS(10), MS(4), MS(5), 3 * VRQ_RATE_ONE) == MS(10) + MS(5) + 2 * MS(6));
	/* a long stretch without a tick gains at most a second's worth at the stale rate (no overflow) */
	CHECK(vrq_clock_gain(30ULL * 24 * 3600 * 1000 * MS(1), 16 * VRQ_RATE_ONE) == 15 * VRQ_CLOCK_GAIN_MAX_NS);
	CHECK(vrq_clock_gain(MS(10), VRQ_RATE_ONE) == 0);
	/* a reader that sees a mark later than its own now (an update raced it) gains nothing since */
	CHECK(vrq_clock_now(MS(10), MS(11), MS(5), 3 * VRQ_RATE_ONE) == MS(15));
}

/* Short runners: the run average, and which requeued tasks count toward the target latency. */
static void test_short_runner(void)
{
	u64 avg = 0;
	int i, runs_to_pass = 0;

	/* off: nobody counts */
	CHECK(!vrq_short_runner(0, 0, 0));
	/* a request worker: runs of 2 ms against a 6 ms limit count, before, during and after a run */
	for (i = 0; i < 20; i++)
		avg = vrq_run_avg(avg, MS(2));
	CHECK(avg <= MS(2) && avg > MS(2) - US(10));
	CHECK(vrq_short_runner(avg, 0, MS(6)));
	CHECK(vrq_short_runner(avg, MS(5), MS(6)));
	/* ... but not once the run under way passes the limit: a new compiler (average still 0) stops
	 * counting within its first turn, without waiting for its run to end */
	CHECK(!vrq_short_runner(avg, MS(6), MS(6)));
	CHECK(!vrq_short_runner(0, MS(6), MS(6)));
	/* one long run (a worker that computed 100 ms) lifts the average past the limit at once; short
	 * runs bring it back under within a few runs (a quarter per run) */
	avg = vrq_run_avg(avg, MS(100));
	CHECK(!vrq_short_runner(avg, 0, MS(6)));
	while (!vrq_short_runner(avg, 0, MS(6)) && runs_to_pass < 100) {
		avg = vrq_run_avg(avg, MS(2));
		runs_to_pass++;
	}
	CHECK(runs_to_pass >= 3 && runs_to_pass <= 8);
	/* a hog never sleeps, so its run under way keeps growing across its turns: past the first 6 ms of
	 * CPU it never counts, whatever average it brought from its short runs before */
	for (i = 1; i <= 50; i++)
		CHECK(vrq_short_runner(MS(1), US(100) * i, MS(6)) == (US(100) * i < MS(6)));
	/* a task whose runs are as long as the limit does not count: the average only nears it from below
	 * after long runs, and each such run passes the limit while under way */
	CHECK(!vrq_short_runner(MS(6) - 1, MS(6), MS(6)));
	/* the average saturates at a run's length and never overflows on long runs */
	avg = vrq_run_avg(~0ULL / 8, ~0ULL / 8);
	CHECK(avg == ~0ULL / 8);
}

static void test_idle_wait(void)
{
	u64 now = MS(100);

	/* no wait, or no idle CPU: nothing */
	CHECK(vrq_idle_wait_ns(now, 0, MS(50)) == 0);
	CHECK(vrq_idle_wait_ns(now, MS(50), 0) == 0);
	/* a CPU idle since before the wait began: the whole wait counts */
	CHECK(vrq_idle_wait_ns(now, MS(90), MS(80)) == MS(10));
	/* idle only since part-way: from then */
	CHECK(vrq_idle_wait_ns(now, MS(80), MS(97)) == MS(3));
	/* within the time to wake a CPU: within the bound */
	CHECK(vrq_idle_wait_ns(now, MS(80), now - VRQ_IDLE_WAIT_GRACE_NS) == 0);
	CHECK(vrq_idle_wait_ns(now, MS(80), now - VRQ_IDLE_WAIT_GRACE_NS - 1) == VRQ_IDLE_WAIT_GRACE_NS + 1);
	/* a timestamp from another CPU's clock a little ahead of this one: nothing, no wrap */
	CHECK(vrq_idle_wait_ns(now, now + US(5), now + US(5)) == 0);
}

/*
 * --handoff-slice's repayment: what hand-offs added comes out of the next renewals' slices, each kept at
 * the floor at least; nothing owed, nothing paid; a slice at or below the floor pays nothing.
 */
static void test_handoff_repayment(void)
{
	u64 floor = US(250);

	CHECK(vrq_slice_payment(0, MS(6), floor) == 0);
	/* a part of a slice: all of it, now */
	CHECK(vrq_slice_payment(MS(4), MS(6), floor) == MS(4));
	/* two slices owed: all but the floor now, the rest at the next renewal */
	CHECK(vrq_slice_payment(MS(12), MS(6), floor) == MS(6) - floor);
	CHECK(vrq_slice_payment(MS(12) - (MS(6) - floor), MS(6), floor) == MS(6) - floor);
	/* a slice shrunk to the floor, or below it (a long queue's), pays nothing and keeps it */
	CHECK(vrq_slice_payment(MS(4), floor, floor) == 0);
	CHECK(vrq_slice_payment(MS(4), US(100), floor) == 0);
	CHECK(vrq_slice_payment(MS(4), -MS(1), floor) == 0);
	/* no overflow on huge debts */
	CHECK(vrq_slice_payment(~0ULL, MS(6), floor) == MS(6) - floor);
}

/*
 * --handoff-slice: a task preempted by its wakee keeps its turn unless it is a short runner or the
 * hand-offs not yet repaid would come to more than VRQ_HANDOFF_MAX_SLICES slices; never with the rule off
 * or without the wakee's preemption; and the bound holds: whatever its requests' lengths, it is never
 * more than that far ahead of the turns it was given, and what it took ahead is repaid -- while two
 * hand-offs in a row (a lock's waiter, then the message thread) both keep the turn.
 */
static void test_handoff_keeps_turn(void)
{
	u64 slice = MS(6), added, added_total, renewals;
	s64 left;
	int i, limit;

	CHECK(vrq_slice_top_up(MS(2), slice) == MS(4));
	CHECK(vrq_slice_top_up(slice, slice) == 0 && vrq_slice_top_up(MS(7), slice) == 0);
	CHECK(vrq_slice_top_up(0, slice) == slice && vrq_slice_top_up(-MS(1), slice) == slice + MS(1));
	/* a 10 ms request worker, preempted by the message thread it woke: keeps its turn */
	CHECK(vrq_handoff_keeps_turn(1, 1, MS(4), slice, MS(10), MS(3), MS(6)));
	/* a run that is long now counts, whatever the average says */
	CHECK(vrq_handoff_keeps_turn(1, 1, MS(4), slice, MS(1), MS(7), MS(6)));
	/* a short runner (1 ms requests): the latency waiters' rules serve it */
	CHECK(!vrq_handoff_keeps_turn(1, 1, MS(4), slice, MS(1), MS(1), MS(6)));
	/* a second hand-off right after a whole slice's top-up adds next to nothing: kept; owing more
	 * than VRQ_HANDOFF_MAX_SLICES slices with it: not */
	CHECK(vrq_handoff_keeps_turn(1, 1, slice + US(20), slice, MS(10), US(20), MS(6)));
	CHECK(vrq_handoff_keeps_turn(1, 1, VRQ_HANDOFF_MAX_SLICES * slice, slice, MS(10), MS(3), MS(6)));
	CHECK(!vrq_handoff_keeps_turn(1, 1, VRQ_HANDOFF_MAX_SLICES * slice + 1, slice, MS(10), MS(3), MS(6)));
	/* its slice ran out, or a kick for another task: no hand-off */
	CHECK(!vrq_handoff_keeps_turn(1, 0, MS(4), slice, MS(10), MS(3), MS(6)));
	/* the rule off */
	CHECK(!vrq_handoff_keeps_turn(0, 1, MS(4), slice, MS(10), MS(3), MS(6)));
	/* --short-run-us 0: every task is a long runner */
	CHECK(vrq_handoff_keeps_turn(1, 1, US(50), slice, US(50), US(50), 0));
	/* requests of 1 to 30 ms, and of 1 ms with every task a long runner (--short-run-us 0), one
	 * after another, each ended by a hand-off: what it owes never exceeds VRQ_HANDOFF_MAX_SLICES slices
	 * (a slice run out, or a turn counted over at a hand-off the rule let go, is a renewal, and pays);
	 * and, repaid, most hand-offs keep the turn (owed for ever, only the first dozen would) */
	for (limit = 0; limit < 2; limit++) {
		u64 floor = US(250), paid, kept = 0;

		left = slice;
		added = added_total = renewals = 0;
		for (i = 0; i < 1000; i++) {
			s64 req = limit ? MS(1) + (s64)(i * 7919 % 30) * MS(1) : MS(1);
			u64 top;

			while (req >= left) {	/* the slice runs out mid-request: renewed */
				req -= left;
				paid = vrq_slice_payment(added, slice, floor);
				left = slice - paid;
				added -= paid;
				renewals++;
			}
			left -= req;
			top = vrq_slice_top_up(left, slice);
			if (vrq_handoff_keeps_turn(1, 1, added + top, slice, MS(10), req, limit ? MS(6) : 0)) {
				left = slice;
				added += top;
				added_total += top;
				kept++;
			} else {		/* the turn counted over: renewed */
				paid = vrq_slice_payment(added, slice, floor);
				left = slice - paid;
				added -= paid;
				renewals++;
			}
			CHECK(added <= VRQ_HANDOFF_MAX_SLICES * slice);
		}
		CHECK(kept > 750);
		CHECK(added_total > 0 && renewals > 0);
	}
}

/*
 * Latency waiters: woken tasks and short runners queued again; a long runner queued again (a CPU hog
 * after its turn, a worker its wakee preempted) never -- the hand-off rule serves the worker.
 */
static void test_latency_waiter(void)
{
	CHECK(vrq_latency_waiter(1, 0));
	CHECK(vrq_latency_waiter(0, 1));
	CHECK(vrq_latency_waiter(1, 1));
	CHECK(!vrq_latency_waiter(0, 0));
}

/*
 * A short runner's slice renewed at a run's end (--short-run-renew): only a short runner, only with
 * less slice left than its average run, never a slice already used up (renewed anyway).
 */
static void test_short_run_renew(void)
{
	/* a request worker averaging 1 ms runs, 300 us of its slice left: its next request would be cut
	 * off after 300 us -- renewed; with 2 ms left it fits -- kept */
	CHECK(vrq_should_renew_short_run(US(300), MS(1), MS(6)));
	CHECK(!vrq_should_renew_short_run(MS(2), MS(1), MS(6)));
	/* exactly its average left: the run fits */
	CHECK(!vrq_should_renew_short_run(MS(1), MS(1), MS(6)));
	/* used up or overdrawn: the renewal at its sleep or enqueue happens anyway, nothing to count */
	CHECK(!vrq_should_renew_short_run(0, MS(1), MS(6)));
	CHECK(!vrq_should_renew_short_run(-US(50), MS(1), MS(6)));
	/* not a short runner (a compiler's 20 ms runs), or the rule off: BFS's carried-over slice */
	CHECK(!vrq_should_renew_short_run(US(300), MS(20), MS(6)));
	CHECK(!vrq_should_renew_short_run(US(300), MS(1), 0));
	/* a task that has never run (average 0) keeps whatever it has */
	CHECK(!vrq_should_renew_short_run(US(300), 0, MS(6)));
}

/*
 * Under-share wake-ups: under its share while its average run times the tasks it competes with is below
 * its average sleep; its deadline then two nice-0 offsets earlier than its own from now (one offset
 * before now at nice 0) unless its own deadline is earlier.
 */
static void test_under_share(void)
{
	/* a periodic sleeper: 20 us runs, 10 ms sleeps, beside 4 tasks per CPU -- far under its fifth */
	CHECK(vrq_under_share(US(20), MS(10), 4));
	/* a request worker preempted rather than asleep: 1 ms runs, 50 us sleeps -- over it */
	CHECK(!vrq_under_share(MS(1), US(50), 2));
	/* exactly its share (1 ms runs, 1 ms sleeps, one other task): not under it */
	CHECK(!vrq_under_share(MS(1), MS(1), 1));
	CHECK(vrq_under_share(MS(1), MS(1) + 1, 1));
	/* the same task beside more competitors drops out: 1 ms runs, 3 ms sleeps, share 1/4 at 3 others */
	CHECK(vrq_under_share(MS(1), MS(3) + 1, 2));
	CHECK(!vrq_under_share(MS(1), MS(3), 3));
	/* never run (no average yet), or a CPU hog (never sleeps): not under it */
	CHECK(!vrq_under_share(0, MS(10), 1));
	CHECK(!vrq_under_share(MS(500), 0, 1));
	/* an absurd count is capped, not overflowed */
	CHECK(!vrq_under_share(MS(1000), MS(1000), ~0ULL));
	/* nor is a huge average run (a day-long run, 2^47 ns): run * others would wrap below the sleep */
	CHECK(!vrq_under_share(1ULL << 47, MS(10), 1ULL << 20));
	CHECK(!vrq_under_share(1ULL << 60, ~0ULL, 1ULL << 20));
}

/* ... and the deadline a task under its share gets */
static void test_under_share_deadline(void)
{
	/* the wake-up path's nice-0 constant is BFS's ratio, and its offset the deadline rule's */
	CHECK(VRQ_PRIO_RATIO_NICE0 == vrq_prio_ratio(0));
	CHECK(vrq_nice0_offset(MS(6)) == vrq_deadline(0, 0, MS(6)));
	CHECK(vrq_nice0_offset(MS(1)) == vrq_group_deadline(0, 0, MS(1), VRQ_GROUP_LOAD_ONE));
	/* nice 0 alone in its group: one offset (40 ms) before now (1 s) ... */
	CHECK(vrq_under_share_deadline(MS(1030), MS(1000), MS(40), MS(40)) == MS(960));
	/* ... unless its own deadline is earlier already */
	CHECK(vrq_under_share_deadline(MS(900), MS(1000), MS(40), MS(40)) == MS(900));
	/* nice 19 (six times the offset) or a group of six: after now, behind new nice-0 renewals at 1040 */
	CHECK(vrq_under_share_deadline(MS(1300), MS(1000), MS(240), MS(40)) == MS(1160));
	/* nice -20 (a sixth of it): before the nice-0 ones */
	CHECK(vrq_under_share_deadline(MS(1030), MS(1000), MS(7), MS(40)) == MS(927));
	/* early in the clock's life: never below 0 */
	CHECK(vrq_under_share_deadline(MS(50), MS(10), MS(40), MS(40)) == 0);
}

/* Wake-up credit: only on a wake-up, only with slice left, as a share of the deadline offset. */
static void test_wakeup_credit(void)
{
	u64 off0 = vrq_deadline(0, 0, MS(6)), off19 = vrq_deadline(0, 19, MS(6));

	CHECK(vrq_wakeup_credit(MS(3), 1, MS(6), off0, 100) == off0);
	CHECK(vrq_wakeup_credit(MS(3), 1, MS(6), off0, 50) == off0 / 2);
	CHECK(vrq_wakeup_credit(MS(3), 1, MS(6), off0, 0) == 0);		/* off: BFS */
	CHECK(vrq_wakeup_credit(MS(3), 0, MS(6), off0, 100) == 0);		/* not a wake-up */
	CHECK(vrq_wakeup_credit(US(50), 1, MS(6), off0, 100) == 0);		/* its slice ran out: no credit */
	CHECK(vrq_wakeup_credit(-1000, 1, MS(6), off0, 100) == 0);
	/* the credited deadline is never before now */
	CHECK(off0 - vrq_wakeup_credit(MS(3), 1, MS(6), off0, 100) == 0);
	CHECK(off19 - vrq_wakeup_credit(MS(3), 1, MS(6), off19, 75) > 0);
	/* with 75% a woken nice-0 task is ahead of a nice-0 hog queued since it renewed 2 slices ago ... */
	CHECK(MS(1000) + off0 - vrq_wakeup_credit(MS(3), 1, MS(6), off0, 75) < MS(1000) - MS(12) + off0);
	/* ... and with 50% not of one that renewed 4 slices ago */
	CHECK(MS(1000) + off0 - vrq_wakeup_credit(MS(3), 1, MS(6), off0, 50) > MS(1000) - MS(24) + off0);
	/* the credited renewal keeps the rest of the slice, at most what the queue allows now */
	CHECK(vrq_credited_slice(MS(2), MS(6)) == MS(2));
	CHECK(vrq_credited_slice(MS(5), MS(3)) == MS(3));
}

/* Sync hand-off: only when the waker sleeps, onto a waker the task may use, with nothing waiting there. */
static void test_sync_handoff(void)
{
	CHECK(vrq_sync_handoff(1, 1, 0, 0, 0));
	CHECK(!vrq_sync_handoff(0, 1, 0, 0, 0));	/* the waker goes on */
	CHECK(!vrq_sync_handoff(1, 0, 0, 0, 0));	/* not allowed on the waker */
	CHECK(!vrq_sync_handoff(1, 1, 1, 0, 0));	/* the waker's CPU is scaled */
	CHECK(!vrq_sync_handoff(1, 1, 0, 1, 0));	/* a task waits in the waker's local queue */
	CHECK(!vrq_sync_handoff(1, 1, 0, 0, 3));	/* tasks wait in the waker's run queue */
}

/*
 * Wake-ups that preempt nobody: a sync one, and with --vfork-handoff a vfork parent woken by its child's
 * exec; the others may.
 */
static void test_wakeup_spares_waker(void)
{
	CHECK(vrq_wakeup_spares_waker(1, 0, 0));
	CHECK(vrq_wakeup_spares_waker(1, 1, 1));
	CHECK(vrq_wakeup_spares_waker(0, 1, 1));	/* the vfork parent at its child's exec */
	CHECK(!vrq_wakeup_spares_waker(0, 0, 1));	/* --vfork-handoff false */
	CHECK(!vrq_wakeup_spares_waker(0, 1, 0));	/* a plain wake-up */
}

/*
 * The waker sleeps as its wakee starts: a sync wake-up (--sync-handoff), or a vfork child's fork
 * (--vfork-handoff); nothing else, and neither with its flag off.
 */
static void test_waker_sleeps(void)
{
	CHECK(vrq_waker_sleeps(1, 1, 1, 0));
	CHECK(vrq_waker_sleeps(1, 0, 1, 1));	/* a vfork child: its parent waits for its exec or exit */
	CHECK(!vrq_waker_sleeps(1, 0, 1, 0));	/* a plain wake-up or fork: the waker goes on */
	CHECK(!vrq_waker_sleeps(0, 1, 1, 0));	/* --sync-handoff false */
	CHECK(!vrq_waker_sleeps(1, 0, 0, 1));	/* --vfork-handoff false */
	CHECK(vrq_waker_sleeps(0, 0, 1, 1));	/* each flag gates its own case only */
	CHECK(vrq_waker_sleeps(1, 1, 0, 0));
}

/*
 * --stay-behind-kthread: only a task switched out (not woken) for a kernel thread bound to its CPU, with
 * nothing waiting in its queue; a thread that may run elsewhere would have taken an idle CPU rather than
 * preempt.
 */
static void test_stays_behind_kthread(void)
{
	CHECK(vrq_stays_behind_kthread(1, 1, 1, 0));
	CHECK(!vrq_stays_behind_kthread(0, 1, 1, 0));	/* off */
	CHECK(!vrq_stays_behind_kthread(1, 0, 1, 0));	/* woken, or not its CPU's current task */
	CHECK(!vrq_stays_behind_kthread(1, 1, 0, 0));	/* a user task preempted it: it may run long */
	CHECK(!vrq_stays_behind_kthread(1, 1, 1, 2));	/* others wait: it competes by its deadline */
	CHECK(vrq_bound_kthread(1, 1));
	CHECK(!vrq_bound_kthread(1, 2));	/* an unbound kernel thread (kworker/u) */
	CHECK(!vrq_bound_kthread(0, 1));	/* a user task pinned to one CPU */
}

/* Local preemption: only where the wakee may run and beats the local task too. */
static void test_preempt_local(void)
{
	CHECK(vrq_preempt_local(1, 1, 100, 200));
	CHECK(!vrq_preempt_local(0, 1, 100, 200));	/* off: BFS's latest-deadline CPU */
	CHECK(!vrq_preempt_local(1, 0, 100, 200));	/* not allowed here */
	CHECK(!vrq_preempt_local(1, 1, 300, 200));	/* the local task is earlier */
	CHECK(!vrq_preempt_local(1, 1, 100, 0));	/* idle: woken, never preempted */
}

static void test_expiry(void)
{
	CHECK(vrq_slice_expired(0, MS(6)));
	CHECK(vrq_slice_expired(-5, MS(6)));
	CHECK(vrq_slice_expired(US(99), MS(6)));
	CHECK(!vrq_slice_expired(US(100), MS(6)));
	/* against a short slice, an eighth of it: 100 us slices with 95 us left are not used up */
	CHECK(!vrq_slice_expired(US(95), US(100)));
	CHECK(vrq_slice_expired(US(12), US(100)));
	CHECK(!vrq_slice_expired(US(13), US(100)));
	CHECK(!vrq_slice_expired(US(40), US(50)));

	CHECK(vrq_deadline_expired(100, 100));
	CHECK(vrq_deadline_expired(100, 200));
	CHECK(!vrq_deadline_expired(200, 100));
	CHECK(!vrq_deadline_expired(5, (u64)-5));	/* wrap-safe */
}

static void test_renew_deadline(void)
{
	/* a used-up slice always renews; a passed deadline only on a wake-up, not for a preempted task */
	CHECK(vrq_should_renew(US(50), MS(6), MS(10), MS(5), 0));
	CHECK(vrq_should_renew(US(50), MS(6), MS(10), MS(5), 1));
	CHECK(vrq_should_renew(US(200), MS(6), MS(10), MS(20), 1));
	CHECK(!vrq_should_renew(US(200), MS(6), MS(10), MS(20), 0));
	CHECK(!vrq_should_renew(US(200), MS(6), MS(30), MS(20), 1));
	/* a 100 us turn cut short after 5 us keeps its deadline (no second round without a run) */
	CHECK(!vrq_should_renew(US(95), US(100), MS(10), MS(20), 0));
}

static void test_clocks_across_queues(void)
{
	/* a deadline 30 ms ahead on the source clock stays 30 ms ahead on the destination clock */
	CHECK(vrq_rebase_deadline(MS(130), MS(100), MS(500)) == MS(530));
	CHECK(vrq_rebase_deadline(MS(130), MS(500), MS(100)) == MS(130) - MS(400));

	CHECK(vrq_niffies_advance(100, 200) == 200);
	CHECK(vrq_niffies_advance(200, 100) == 200);	/* never backwards */
}

/* 2 packages x 2 cores x 2 threads, one LLC per package, one node: CPUs 0-7 as QEMU numbers them */
static struct vrq_cpu_topo topo8[8] = {
	{ 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 },
	{ 2, 1, 1, 0 }, { 2, 1, 1, 0 }, { 3, 1, 1, 0 }, { 3, 1, 1, 0 },
};

static void test_cpu_distance(void)
{
	struct vrq_cpu_topo other_node = { 9, 9, 9, 1 };
	struct vrq_cpu_topo same_node_pkg2 = { 8, 8, 2, 0 };
	struct vrq_cpu_topo same_pkg_other_llc = { 7, 7, 0, 0 };

	CHECK(vrq_cpu_distance(0, &topo8[0], 0, &topo8[0]) == VRQ_DIST_SAME);
	CHECK(vrq_cpu_distance(0, &topo8[0], 1, &topo8[1]) == VRQ_DIST_SMT);
	CHECK(vrq_cpu_distance(0, &topo8[0], 2, &topo8[2]) == VRQ_DIST_LLC);
	CHECK(vrq_cpu_distance(0, &topo8[0], 4, &topo8[4]) == VRQ_DIST_NODE);
	CHECK(vrq_cpu_distance(0, &topo8[0], 9, &same_pkg_other_llc) == VRQ_DIST_PKG);
	CHECK(vrq_cpu_distance(0, &topo8[0], 9, &same_node_pkg2) == VRQ_DIST_NODE);
	CHECK(vrq_cpu_distance(0, &topo8[0], 9, &other_node) == VRQ_DIST_ANY);
	/* symmetric */
	CHECK(vrq_cpu_distance(4, &topo8[4], 1, &topo8[1]) == vrq_cpu_distance(1, &topo8[1], 4, &topo8[4]));
	/* the selection order is VRQ's best_mask_cpu: prev < SMT < LLC < package < node < any */
	CHECK(VRQ_DIST_SAME < VRQ_DIST_SMT && VRQ_DIST_SMT < VRQ_DIST_LLC && VRQ_DIST_LLC < VRQ_DIST_PKG &&
	      VRQ_DIST_PKG < VRQ_DIST_NODE && VRQ_DIST_NODE < VRQ_DIST_ANY);
}

static void test_queue_of(void)
{
	CHECK(vrq_queue_of(VRQ_QUEUE_GLOBAL, 5, &topo8[5]) == 0);
	CHECK(vrq_queue_of(VRQ_QUEUE_LLC, 3, &topo8[3]) == 0);
	CHECK(vrq_queue_of(VRQ_QUEUE_LLC, 5, &topo8[5]) == 1);
	CHECK(vrq_queue_of(VRQ_QUEUE_CPU, 5, &topo8[5]) == 5);
}

static void test_yield_type(void)
{
	CHECK(!vrq_yield_gives_up_cpu(VRQ_YIELD_NONE) && !vrq_yield_expires_slice(VRQ_YIELD_NONE));
	CHECK(vrq_yield_gives_up_cpu(VRQ_YIELD_BETTER) && !vrq_yield_expires_slice(VRQ_YIELD_BETTER));
	CHECK(vrq_yield_gives_up_cpu(VRQ_YIELD_EXPIRE) && vrq_yield_expires_slice(VRQ_YIELD_EXPIRE));
	CHECK(!vrq_yield_gives_up_cpu(3) && !vrq_yield_expires_slice(3));
}

static void test_group_deadline(void)
{
	u64 one = vrq_deadline(MS(100), 0, MS(6)) - MS(100);
	const u64 k = VRQ_GROUP_LOAD_ONE;

	/* a multiplier of 1 is plain BFS */
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), k) == vrq_deadline(MS(100), 0, MS(6)));
	/* N times the offset, fractions too */
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), 32 * k) == MS(100) + 32 * one);
	CHECK(vrq_group_deadline(0, 0, MS(6), k / 4) == one / 4);
	/* a stretched offset stops at a quarter of the watchdog: 63 x 39 ms is under it, 64 x over */
	CHECK(VRQ_STRETCH_MAX_NS == MS(2500));
	CHECK(vrq_group_deadline(0, 0, MS(6), 63 * k) == 63 * one);
	CHECK(vrq_group_deadline(0, 0, MS(6), 64 * k) == VRQ_STRETCH_MAX_NS);
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), 1000000 * k) == MS(100) + VRQ_STRETCH_MAX_NS);
	/* ... the fork-depth penalty times a group's count too (the deepest, the largest group) */
	CHECK(vrq_group_deadline(0, 0, MS(6), (u64)VRQ_FORK_DEPTH_MAX * VRQ_GROUP_MAX_MULTIPLIER * k) ==
	      VRQ_STRETCH_MAX_NS);
	/* an offset already longer unstretched stays as BFS has it (nice 19 at rr_interval 1 s: 40 s);
	 * no overflow at the longest slice, the latest nice and the largest multiplier */
	CHECK(vrq_group_deadline(0, 19, MS(1000), ~0ULL) == vrq_deadline(0, 19, MS(1000)));
	CHECK(vrq_group_deadline(0, 19, MS(1000), 2 * k) == vrq_deadline(0, 19, MS(1000)));
	/* shrinking is never capped: a fraction of the offset */
	CHECK(vrq_group_deadline(0, 19, MS(1000), k / 2) == vrq_deadline(0, 19, MS(1000)) / 2);
	/* whatever the multiplier, no task's offset passes max(its own, the cap): it waits for at most
	 * that while others renew with shorter ones */
	for (s32 nice = -20; nice <= 19; nice += 13) {
		u64 own = vrq_deadline(0, nice, MS(6)), bound = own > VRQ_STRETCH_MAX_NS ? own : VRQ_STRETCH_MAX_NS;

		for (u64 m = k; m <= (u64)VRQ_GROUP_MAX_MULTIPLIER * k; m += k * 7)
			CHECK(vrq_group_deadline(0, nice, MS(6), m) <= bound);
	}
	/* nice still counts inside a group */
	CHECK(vrq_group_deadline(0, 10, MS(6), 4 * k) > vrq_group_deadline(0, 0, MS(6), 4 * k));
}

static void test_group_avg_toward(void)
{
	const u64 k = VRQ_GROUP_LOAD_ONE;

	/* the count averaged over tau: a group whose count flips between 3 and 5 every 2 ms settles near
	 * their time-weighted mean and stays within a sixth of it whichever count it renews at */
	{
		u64 avg = 0;
		int i;

		for (i = 0; i < 40; i++)
			avg = vrq_group_avg_toward(avg, vrq_group_level((i & 1) ? 5 : 3), MS(2), MS(6));
		CHECK(avg > 4 * k - k / 2 && avg < 4 * k + k / 2);
		CHECK(vrq_group_avg_toward(avg, vrq_group_level(5), MS(2), MS(6)) < 4 * k + 2 * k / 3);
		CHECK(vrq_group_avg_toward(avg, vrq_group_level(3), MS(2), MS(6)) > 4 * k - 2 * k / 3);
	}
	/* a third of tau at a new count moves the average a third of the way */
	CHECK(vrq_group_avg_toward(3 * k, vrq_group_level(6), MS(2), MS(6)) == 4 * k);
	CHECK(vrq_group_avg_toward(6 * k, vrq_group_level(3), MS(2), MS(6)) == 5 * k);
	/* after tau or more, the count alone: a group idle that long starts again from nothing */
	CHECK(vrq_group_avg_toward(40 * k, vrq_group_level(0), MS(6), MS(6)) == 0);
	CHECK(vrq_group_avg_toward(0, vrq_group_level(32), MS(7), MS(6)) == 32 * k);
	/* a count that raced below 0 is none; huge counts are capped as the multiplier is */
	CHECK(vrq_group_avg_toward(0, vrq_group_level(-3), MS(6), MS(6)) == 0);
	CHECK(vrq_group_avg_toward(0, vrq_group_level(1LL << 40), MS(6), MS(6)) == VRQ_GROUP_MAX_MULTIPLIER * k);
	CHECK(vrq_group_avg_toward(~0ULL, vrq_group_level(1LL << 40), MS(1), MS(6)) <= VRQ_GROUP_MAX_MULTIPLIER * k);
}

/*
 * struct vrq_load: every change counted, the average folded in at most VRQ_GROUP_SAMPLES times per tau.
 * A count that flips between 3 and 5 every 7 µs (a pipe-like group) averages 4, whether the flips fall
 * in step with the folds or not (averaging only the count seen at each fold gave 5 or 3 here).
 */
static void test_group_load_kept(void)
{
	const u64 k = VRQ_GROUP_LOAD_ONE, tau = MS(6);
	u64 step, now, folds;

	for (step = US(7); step <= US(13); step += US(6)) {
		struct vrq_load l = {.nr = 3};
		u64 prev_stamp = 0;

		folds = 0;
		for (now = step; now <= MS(200); now += step) {
			vrq_load_note_change(&l, now, tau);
			l.nr = l.nr == 3 ? 5 : 3;
			if (l.stamp != prev_stamp) {
				folds++;
				prev_stamp = l.stamp;
			}
			if (now > MS(50)) {
				CHECK(l.avg > 4 * k - k / 8 && l.avg < 4 * k + k / 8);
				CHECK(vrq_load_avg_at(&l, now + US(1), tau) > 4 * k - k / 4);
				CHECK(vrq_load_avg_at(&l, now + US(1), tau) < 4 * k + k / 4);
			}
		}
		/* folds: one per sample interval or so, not one per change */
		CHECK(folds <= MS(200) / (tau / VRQ_GROUP_SAMPLES) + 2);
	}
}

/* struct vrq_load at its edges: a count held, a fresh entry, the largest values */
static void test_group_load_edges(void)
{
	const u64 k = VRQ_GROUP_LOAD_ONE, tau = MS(6);

	/* a count held for tau or more is the average, at once */
	{
		struct vrq_load l = {.nr = 7, .avg = 2 * k, .stamp = MS(10), .last = MS(10)};

		CHECK(vrq_load_avg_at(&l, MS(16), tau) == 7 * k);
		CHECK(vrq_load_avg_at(&l, MS(10), tau) == 2 * k);
		/* half of tau at 7 from 2: halfway */
		CHECK(vrq_load_avg_at(&l, MS(13), tau) == k * 9 / 2);
		vrq_load_note_change(&l, MS(30), tau);
		CHECK(l.avg == 7 * k && l.stamp == MS(30) && l.last == MS(30) && l.acc == 0);
	}
	/* a fresh entry (all zero) starts from its count */
	{
		struct vrq_load l = {0};

		vrq_load_note_change(&l, MS(5000), tau);
		l.nr = 1;
		CHECK(l.avg == 0);
		CHECK(vrq_load_avg_at(&l, MS(5000) + tau, tau) == k);
	}
	/* the most a long slice and a huge count can give: no overflow */
	{
		struct vrq_load l = {.nr = 1LL << 40, .stamp = 0, .last = MS(60)};

		l.acc = (u64)VRQ_GROUP_MAX_MULTIPLIER * MS(60);
		CHECK(vrq_load_avg_at(&l, MS(1000) + MS(60) - 1, MS(1000)) <= VRQ_GROUP_MAX_MULTIPLIER * k);
		CHECK(vrq_load_avg_at(&l, MS(1000) + MS(60) - 1, MS(1000)) > (VRQ_GROUP_MAX_MULTIPLIER - 1) * k);
	}
}

/*
 * A group's slot word: owner and count in one word; a task counts where its group owns the slot, or
 * claims one no task counts in; a count's decrement (the word less 1) never touches the owner.
 */
static void test_group_slot_word(void)
{
	u64 w, next;
	u32 g, i, j;

	w = vrq_group_word(0xfffffffeU, 0xffffffffU);
	CHECK(vrq_group_word_owner(w) == 0xfffffffeU && vrq_group_word_count(w) == 0xffffffffU);
	w = vrq_group_word(7, 0);
	CHECK(vrq_group_word_owner(w) == 7 && vrq_group_word_count(w) == 0);

	/* its own slot, busy or idle: one more, claimed or not */
	CHECK(vrq_group_word_inc(vrq_group_word(7, 0), 7, 0) == vrq_group_word(7, 1));
	CHECK(vrq_group_word_inc(vrq_group_word(7, 3), 7, 1) == vrq_group_word(7, 4));
	/* another group's busy slot: never */
	CHECK(vrq_group_word_inc(vrq_group_word(8, 1), 7, 0) == 0);
	CHECK(vrq_group_word_inc(vrq_group_word(8, 1), 7, 1) == 0);
	/* another group's idle slot (or a never used one): only when claiming, and its first task */
	CHECK(vrq_group_word_inc(vrq_group_word(8, 0), 7, 0) == 0);
	CHECK(vrq_group_word_inc(vrq_group_word(8, 0), 7, 1) == vrq_group_word(7, 1));
	CHECK(vrq_group_word_inc(0, 7, 1) == vrq_group_word(7, 1));
	CHECK(vrq_group_word_taken_over(vrq_group_word(8, 0), 7));
	CHECK(vrq_group_word_taken_over(0, 7));
	CHECK(!vrq_group_word_taken_over(vrq_group_word(7, 0), 7));
	/* counts up and back down to the group's idle word, the owner untouched; 0 <-> 1 is where a group
	 * becomes busy or idle */
	w = vrq_group_word(0x80000001U, 0);
	for (i = 0; i < 1000; i++) {
		next = vrq_group_word_inc(w, 0x80000001U, 0);
		CHECK(vrq_group_word_count(next) == i + 1 && vrq_group_word_owner(next) == 0x80000001U);
		w = next;
	}
	for (i = 1000; i > 0; i--) {
		w += (u64)-1;		/* quiescent's atomic add of -1 */
		CHECK(vrq_group_word_count(w) == i - 1 && vrq_group_word_owner(w) == 0x80000001U);
	}
	CHECK(w == vrq_group_word(0x80000001U, 0));

	/* the probed slots: in range, all different, consecutive from the home slot */
	for (g = 1; g < 100000; g += 37) {
		for (i = 0; i < VRQ_GROUP_PROBES; i++) {
			CHECK(vrq_group_probe(g, i) < VRQ_GROUP_SLOTS);
			CHECK(vrq_group_probe(g, i) == ((vrq_group_probe(g, 0) + i) & (VRQ_GROUP_SLOTS - 1)));
			for (j = 0; j < i; j++)
				CHECK(vrq_group_probe(g, i) != vrq_group_probe(g, j));
		}
	}
	/* consecutive ids (pids of one boot's sessions) land apart: 1024 of them in over 900 home slots */
	{
		static unsigned char used[VRQ_GROUP_SLOTS];
		u32 homes = 0;

		for (g = 1000; g < 2024; g++)
			if (!used[vrq_group_probe(g, 0)]++)
				homes++;
		CHECK(homes > 900);
	}
}

/*
 * A slot's average from the count its word holds (vrq_load_avg_of, vrq_load_note_of) is the average
 * struct vrq_load keeps with its own nr.
 */
static void test_group_load_of(void)
{
	const u64 tau = MS(6);
	struct vrq_load own = {.nr = 2}, slot = {0};
	s64 count = 2;
	u64 now;

	for (now = US(5); now < MS(100); now += US(5) + now % US(7)) {
		vrq_load_note_change(&own, now, tau);
		vrq_load_note_of(&slot, count, now, tau);
		count = now % 3 + 1;
		own.nr = count;
		CHECK(own.avg == slot.avg && own.acc == slot.acc && own.stamp == slot.stamp && own.last == slot.last);
		CHECK(vrq_load_avg_at(&own, now + US(3), tau) == vrq_load_avg_of(&slot, count, now + US(3), tau));
	}
}

/*
 * The multiplier is relative to the mean group. Alone (one busy group), exactly 1 whatever its count
 * does: hackbench's single group swinging from 5 to 160 runnable keeps BFS's order.
 */
static void test_group_multiplier(void)
{
	const u64 k = VRQ_GROUP_LOAD_ONE;
	u64 n;

	for (n = 1; n <= 4096; n *= 2) {
		/* alone (every grouped task is its own): BFS's order */
		CHECK(vrq_group_multiplier(n * k, n * k) == k);
		/* averages a little off (a lost update, a group idle part of tau) change nothing */
		CHECK(vrq_group_multiplier(n * k + 7, n * k) == k);
		/* beside a stray wake-up of another session (0.01 of a task): about 1 */
		CHECK(vrq_group_multiplier(n * k, n * k + k / 100) <= k + n * k / 100);
		/* a group with one task competes as one task whatever runs beside it */
		CHECK(vrq_group_multiplier(k, k + n * k) == k);
	}
	/* a group idle part of tau still counts one task */
	CHECK(vrq_group_multiplier(k / 3, 40 * k) == k);
	/* 32 tasks of a session beside a hog: 32 to 1, each group about one task's share */
	CHECK(vrq_group_multiplier(32 * k, 33 * k) == 32 * k);
	CHECK(vrq_group_multiplier(k, 33 * k) == k);
	/* the others' count weighs the group's in: half a task beside, half the stretch */
	CHECK(vrq_group_multiplier(9 * k, 9 * k + k / 2) == 5 * k);
	/* huge groups: capped, no overflow */
	CHECK(vrq_group_multiplier(~0ULL, ~0ULL) == k);
	CHECK(vrq_group_multiplier(~0ULL / 2, ~0ULL) == VRQ_GROUP_MAX_MULTIPLIER * k);
	CHECK(vrq_group_multiplier(4096 * k, 8192 * k) == VRQ_GROUP_MAX_MULTIPLIER * k);
	/* larger group, larger multiplier; more beside it, larger or equal */
	for (n = 1; n < 64; n++) {
		CHECK(vrq_group_multiplier(n * k, 80 * k) <= vrq_group_multiplier((n + 1) * k, 80 * k));
		CHECK(vrq_group_multiplier(8 * k, 8 * k + n * k / 64) <=
		      vrq_group_multiplier(8 * k, 8 * k + (n + 1) * k / 64));
	}
	CHECK(VRQ_GROUP_STRETCHED_MIN > k);
}

static void test_fork_depth(void)
{
	CHECK(vrq_fork_depth_multiplier(0) == 1);
	CHECK(vrq_fork_depth_multiplier(1) == 1);
	CHECK(vrq_fork_depth_multiplier(5) == 5);
	CHECK(vrq_fork_depth_multiplier(1000) == VRQ_FORK_DEPTH_MAX);
	/* deeper: a later deadline, by the ratio of depths */
	CHECK(vrq_group_deadline(0, 0, MS(6), vrq_fork_depth_multiplier(6) * VRQ_GROUP_LOAD_ONE) ==
	      2 * vrq_group_deadline(0, 0, MS(6), vrq_fork_depth_multiplier(3) * VRQ_GROUP_LOAD_ONE));
}

/* cgroup weights: the hierarchical share, the stretch, the virtual time and its lag bounds. */
static void test_cgroup_weights(void)
{
	const u64 one = VRQ_CGROUP_SHARE_ONE;
	u64 a, b, a1;

	/* siblings at 100 and 300, both active: 1/4 and 3/4 of the parent's share */
	a = vrq_cgroup_child_share(one, 100, 400);
	b = vrq_cgroup_child_share(one, 300, 400);
	CHECK(a == one / 4 && b == 3 * one / 4);
	/* a child alone (or not yet counted in the sum) has its parent's whole share */
	CHECK(vrq_cgroup_child_share(one, 100, 100) == one);
	CHECK(vrq_cgroup_child_share(one, 100, 0) == one);
	/* nesting: A(100){A1, A2} beside B(100): A1 gets a quarter */
	a1 = vrq_cgroup_child_share(vrq_cgroup_child_share(one, 100, 200), 100, 200);
	CHECK(a1 == one / 4);
	/* weights outside cpu.weight's range are clamped; a share is never 0 */
	CHECK(vrq_cgroup_child_share(one, 0, 10000) == one / 10000);
	CHECK(vrq_cgroup_child_share(1, 1, 10000) == 1);
	CHECK(vrq_cgroup_child_share(one, 50000, 10000) == one);

	/* the stretch: n tasks over the CPUs the share is worth, in nice-0 offsets */
	CHECK(vrq_cgroup_stretch(MS(6), 4, 2, one) == MS(12));
	CHECK(vrq_cgroup_stretch(MS(6), 4, 2, one / 4) == MS(48));
	CHECK(vrq_cgroup_stretch(MS(6), 0, 2, one) == MS(3));	/* at least one task */
	/* one task beside sixteen at equal weights: 16x the stretch, so one turn each way */
	CHECK(vrq_cgroup_stretch(MS(6), 16, 2, one / 2) == 16 * vrq_cgroup_stretch(MS(6), 1, 2, one / 2));
	/* capped: a tiny share or a huge count does not overflow the deadline */
	CHECK(vrq_cgroup_stretch(MS(6), 4096, 1, 1) == VRQ_STRETCH_MAX_NS);
	CHECK(vrq_cgroup_stretch(MS(6), 1000000, 1, one) == VRQ_STRETCH_MAX_NS);
	CHECK(vrq_cgroup_stretch(~0ULL, 1, 1, one) == VRQ_STRETCH_MAX_NS);

	/* a turn: the slice rounded up to the tick, in clock time; shorter than a tick, as it is */
	CHECK(vrq_cgroup_turn(MS(6), MS(6), MS(4)) == MS(8));
	CHECK(vrq_cgroup_turn(MS(12), MS(6), MS(4)) == MS(16));	/* the clock at twice real time */
	CHECK(vrq_cgroup_turn(MS(8), MS(8), MS(4)) == MS(8));
	CHECK(vrq_cgroup_turn(MS(2), MS(2), MS(4)) == MS(2));
	CHECK(vrq_cgroup_turn(MS(6), MS(6), 0) == MS(6));

	/* virtual time: CPU over share; a quarter share moves four times as fast as a whole one */
	CHECK(vrq_cgroup_vtime_delta(MS(4), 2, one) == MS(2));
	CHECK(vrq_cgroup_vtime_delta(MS(4), 2, one / 4) == MS(8));
	CHECK(vrq_cgroup_vtime_delta(MS(4), 0, 0) == MS(4) * one);

	/* the lag: behind the furthest by up to the bound, never ahead */
	CHECK(vrq_cgroup_lag(MS(100), MS(150), VRQ_CGROUP_LAG_MAX_NS) == MS(50));
	CHECK(vrq_cgroup_lag(MS(100), MS(900), VRQ_CGROUP_LAG_MAX_NS) == VRQ_CGROUP_LAG_MAX_NS);
	CHECK(vrq_cgroup_lag(MS(200), MS(150), VRQ_CGROUP_LAG_MAX_NS) == 0);
	/* floors: back from idle at most rr_interval behind; ahead or near stays */
	CHECK(vrq_cgroup_vtime_floor(MS(10), MS(1000), MS(6)) == MS(994));
	CHECK(vrq_cgroup_vtime_floor(MS(998), MS(1000), MS(6)) == MS(998));
	CHECK(vrq_cgroup_vtime_floor(MS(2000), MS(1000), MS(6)) == MS(2000));
	CHECK(vrq_cgroup_vtime_floor(0, MS(3), MS(6)) == 0);	/* early in the boot */
}

static double share_of_first(struct sim_task *t, int n, u64 tick, u64 idle_bound)
{
	u64 total = 0;
	int i;

	sim_run(t, n, MS(6), tick, MS(120000), idle_bound);
	for (i = 0; i < n; i++)
		total += t[i].runtime;
	return (double)t[0].runtime / (double)total;
}

/*
 * The target latency's faster clock keeps nice's shares: turns of rr_interval / rate with offsets in
 * clock time give the shares of BFS at rr_interval (with offsets kept in real time, nice 0 : nice 10
 * went from 8:1 to 35:1 in the guest).
 */
static void test_simulated_shares_at_rate(void)
{
	struct sim_task t[2];
	double base, fast;
	u64 rate;

	memset(t, 0, sizeof(t));
	t[1].nice = 10;
	sim_run(t, 2, MS(6), US(100), MS(120000), 0);
	base = (double)t[1].runtime / (double)(t[0].runtime + t[1].runtime);
	for (rate = 2 * VRQ_RATE_ONE; rate <= 16 * VRQ_RATE_ONE; rate *= 2) {
		memset(t, 0, sizeof(t));
		t[1].nice = 10;
		sim_run_at_rate(t, 2, MS(6), US(100), MS(120000), 0, rate);
		fast = (double)t[1].runtime / (double)(t[0].runtime + t[1].runtime);
		CHECK(fast > base * 0.85 && fast < base * 1.15);
		if (!(fast > base * 0.85 && fast < base * 1.15))
			printf("  nice-10 share at rate %llu/1024: %.4f vs %.4f in real time\n",
			       (unsigned long long)rate, fast, base);
	}
}

static void test_simulated_shares(void)
{
	struct sim_task t[2];
	double s;

	/* BFS's figures (REFERENCE.md): nice 0 gets ~11x nice 10 when slices end exactly ... */
	memset(t, 0, sizeof(t));
	t[1].nice = 10;
	s = share_of_first(t, 2, US(100), 0);
	CHECK(s / (1 - s) > 10.0 && s / (1 - s) < 12.0);
	/* ... and still ~11x when slice expiry is only seen at 4 ms ticks (HZ=250): the run on to the tick is
	 * owed and repaid from the next slice (repay_overrun); not repaid, it gave ~8x ... */
	s = share_of_first(t, 2, MS(4), 0);
	CHECK(s / (1 - s) > 10.0 && s / (1 - s) < 12.0);
	/* ... ~34x nice 19 */
	t[1].nice = 19;
	s = share_of_first(t, 2, US(100), 0);
	CHECK(s / (1 - s) > 30.0 && s / (1 - s) < 38.0);
	/* equal nice: equal shares */
	t[1].nice = 0;
	s = share_of_first(t, 2, MS(4), 0);
	CHECK(s > 0.49 && s < 0.51);
	/* SCHED_IDLE beside a normal hog: nothing without the bound, a sliver with it */
	t[1].policy = VRQ_SCHED_IDLE;
	s = share_of_first(t, 2, MS(4), 0);
	CHECK(s == 1.0);
	s = share_of_first(t, 2, MS(4), MS(2000));
	CHECK(s < 1.0 && s > 0.99);
}

static void test_cpu_scaled(void)
{
	CHECK(!vrq_cpu_scaled(1, 0));			/* threshold 0: nothing is scaled */
	CHECK(!vrq_cpu_scaled(VRQ_PERF_ONE, 100));	/* full speed is never scaled */
	CHECK(vrq_cpu_scaled(VRQ_PERF_ONE - 1, 100));	/* 100%: anything below the maximum is */
	CHECK(vrq_cpu_scaled(511, 50));			/* 49.9% < 50% */
	CHECK(!vrq_cpu_scaled(512, 50));		/* exactly 50% */
	CHECK(!vrq_cpu_scaled(820, 80));		/* 80.08% */
	CHECK(vrq_cpu_scaled(819, 80));
}

static void test_capacity(void)
{
	CHECK(!vrq_cpu_little(0));			/* not read: big */
	CHECK(!vrq_cpu_little(VRQ_PERF_ONE));		/* the biggest */
	CHECK(!vrq_cpu_little(VRQ_CAP_BIG_MIN));	/* within an eighth */
	CHECK(vrq_cpu_little(VRQ_CAP_BIG_MIN - 1));
	CHECK(vrq_cpu_little(512));
	CHECK(vrq_cap_mixed(4, 4));
	CHECK(!vrq_cap_mixed(8, 0));			/* uniform: all big */
	CHECK(!vrq_cap_mixed(0, 8));			/* uniform: all little (injected) */

	/* background first: nice > 0 or SCHED_IDLE, whatever its runs */
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 19, 1, US(100), MS(100), MS(6)) == VRQ_CAP_LITTLE);
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 1, 0, MS(50), 0, MS(6)) == VRQ_CAP_LITTLE);
	CHECK(vrq_cap_pref(VRQ_SCHED_IDLE, 0, 1, MS(50), 0, MS(6)) == VRQ_CAP_LITTLE);
	/* heavy: average run of a slice or more, woken or forked */
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 1, MS(6), 0, MS(6)) == VRQ_CAP_BIG);
	CHECK(vrq_cap_pref(VRQ_SCHED_BATCH, -5, 0, MS(200), MS(1), MS(6)) == VRQ_CAP_BIG);
	/* latency-sensitive: woken, sleeps more than it runs */
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 1, US(100), MS(100), MS(6)) == VRQ_CAP_BIG);
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 0, US(100), MS(100), MS(6)) == VRQ_CAP_ANY);	/* not woken */
	/* no preference: no history, or a short runner that runs as much as it sleeps */
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 1, 0, 0, MS(6)) == VRQ_CAP_ANY);
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 1, US(100), US(50), MS(6)) == VRQ_CAP_ANY);
	CHECK(vrq_cap_pref(VRQ_SCHED_NORMAL, 0, 1, MS(6) - 1, MS(5), MS(6)) == VRQ_CAP_ANY);

	CHECK(vrq_cap_leaves_prev(VRQ_CAP_BIG, 1));
	CHECK(!vrq_cap_leaves_prev(VRQ_CAP_BIG, 0));
	CHECK(vrq_cap_leaves_prev(VRQ_CAP_LITTLE, 0));
	CHECK(!vrq_cap_leaves_prev(VRQ_CAP_LITTLE, 1));
	CHECK(!vrq_cap_leaves_prev(VRQ_CAP_ANY, 0));
	CHECK(!vrq_cap_leaves_prev(VRQ_CAP_ANY, 1));
}

/* VRQ's full best_mask_cpu order (frequency-aware), step by step. */
static void test_select_order(void)
{
	static const u32 aware[][2] = {
		{ VRQ_DIST_SAME, VRQ_PERF_FAST }, { VRQ_DIST_SMT, VRQ_PERF_FAST }, { VRQ_DIST_LLC, VRQ_PERF_FAST },
		{ VRQ_DIST_SAME, VRQ_PERF_SCALED }, { VRQ_DIST_SMT, VRQ_PERF_SCALED },
		{ VRQ_DIST_LLC, VRQ_PERF_SCALED },
		{ VRQ_DIST_PKG, VRQ_PERF_FAST }, { VRQ_DIST_NODE, VRQ_PERF_FAST },
		{ VRQ_DIST_PKG, VRQ_PERF_SCALED }, { VRQ_DIST_NODE, VRQ_PERF_SCALED },
		{ VRQ_DIST_ANY, VRQ_PERF_ANY },
	};
	u32 i, dist, perf, n = 0, ok = 1;

	for (i = 0; vrq_select_step(i, 1, &dist, &perf); i++, n++)
		ok &= i < 11 && dist == aware[i][0] && perf == aware[i][1];
	CHECK(ok);
	CHECK(n == 11 && n == VRQ_SELECT_MAX_STEPS);
	/* each (distance, class) pair appears once and every CPU is reachable by the last step */
	for (i = 0, ok = 1; i < 11; i++) {
		u32 j;

		for (j = i + 1; j < 11; j++)
			ok &= !(aware[i][0] == aware[j][0] && aware[i][1] == aware[j][1]);
	}
	CHECK(ok);

	/* frequency-blind: the plain distance order, one step per distance */
	for (i = 0, n = 0, ok = 1; vrq_select_step(i, 0, &dist, &perf); i++, n++)
		ok &= dist == i && perf == VRQ_PERF_ANY;
	CHECK(ok);
	CHECK(n == VRQ_NR_DIST);
	CHECK(n <= VRQ_SELECT_MAX_STEPS);
}

static void test_delay_placement(void)
{
	CHECK(vrq_delay_placement(US(50), 1, 0, 1, 0));
	CHECK(!vrq_delay_placement(0, 1, 0, 1, 0));	/* off */
	CHECK(!vrq_delay_placement(US(50), 0, 0, 1, 0));	/* the idle CPU found is fast: use it */
	CHECK(!vrq_delay_placement(US(50), 1, 1, 1, 0));	/* the waker is scaled too */
	CHECK(!vrq_delay_placement(US(50), 1, 0, 0, 0));	/* the task may not run on the waker */
	CHECK(!vrq_delay_placement(US(50), 1, 0, 1, 1));	/* the waker is the target */
}

static void test_delay_expired(void)
{
	CHECK(!vrq_delay_expired(MS(10), MS(10) + US(49), US(50)));
	CHECK(vrq_delay_expired(MS(10), MS(10) + US(50), US(50)));
	CHECK(vrq_delay_expired(~0ULL - US(10), US(40), US(50)));	/* clock wrap */
}

/*
 * select_cpu -> enqueue: a sync wake-up's flag is read once. The next wake-up of a task allowed on one
 * CPU only skips select_cpu; its enqueue must read "not sync" (and so may preempt), not the old flag.
 */
static void test_wake_handoff(void)
{
	u8 sync_wakeup = 0;

	sync_wakeup = 1;			/* select_cpu: a sync wake-up */
	CHECK(vrq_take_once(&sync_wakeup) == 1);	/* its enqueue: no preemption */
	CHECK(!vrq_may_preempt(VRQ_SCHED_NORMAL, 1));
	/* the next wake-up, select_cpu skipped: enqueue sees a plain wake-up that may preempt */
	CHECK(vrq_take_once(&sync_wakeup) == 0);
	CHECK(vrq_may_preempt(VRQ_SCHED_NORMAL, vrq_take_once(&sync_wakeup)));
}

static void test_sticky(void)
{
	u64 offset = vrq_sticky_offset(MS(6));
	u64 a = vrq_priodl(VRQ_PRIO_NORMAL, MS(100)), b = vrq_priodl(VRQ_PRIO_NORMAL, MS(150));
	u64 near_end = vrq_priodl(VRQ_PRIO_NORMAL, ~0ULL);

	/* BFS longest_deadline_diff: the nice-19 offset, 5089/128 rr_intervals */
	CHECK(offset == 5089ULL * MS(6) / 128);
	CHECK(offset == vrq_deadline(0, VRQ_NICE_MAX, MS(6)));
	/* a sticky task 50 ms earlier still counts as later than a non-sticky one elsewhere */
	CHECK(vrq_sticky_priodl(a, offset) > b);
	CHECK(vrq_sticky_priodl(a, offset) - a == offset >> VRQ_PRIODL_DL_SHIFT);
	/* ... but by less than the offset of nice 19: a much later task still loses to it */
	CHECK(vrq_sticky_priodl(a, offset) < vrq_priodl(VRQ_PRIO_NORMAL, MS(100) + offset + MS(1)));
	/* the priority bits never change: a sticky normal task stays ahead of any SCHED_IDLE task */
	CHECK(vrq_priodl_prio(vrq_sticky_priodl(near_end, offset)) == VRQ_PRIO_NORMAL);
	CHECK(vrq_sticky_priodl(near_end, offset) < vrq_priodl(VRQ_PRIO_SCHED_IDLE, 0));
	CHECK(vrq_sticky_priodl(a, 0) == a);
}

/*
 * --queue cpu --sticky, CPU hogs at nice 0, rr_interval 6 ms: CPU A runs one hog; CPU B runs one and
 * has @b_waiting queued; A's queue has @a_waiting. When A's hog's slice ends, A compares its renewed
 * priodl with B's head, sticky to B, queued 12 ms ago (its deadline was set when it left B's CPU, then).
 * Does A take B's head?
 */
static int lone_cpu_takes_sticky_head(u64 b_waiting, u64 a_waiting)
{
	const u64 rr = MS(6), now = MS(10000);
	u64 prev = vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(now, 0, rr));
	u64 head = vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(now - MS(12), 0, rr));

	if (vrq_sticky_holds(b_waiting, 1, a_waiting, 1))
		head = vrq_sticky_priodl(head, vrq_sticky_offset(rr));
	return head < prev;
}

static void test_sticky_claim_lapses(void)
{
	/* the nice-19 offset dwarfs any wait of a hog: without a limit A would never take it */
	CHECK(vrq_sticky_offset(MS(6)) > 20 * MS(8));
	/* three hogs against one (two waiting, none): taking one evens them out, the claim lapses */
	CHECK(lone_cpu_takes_sticky_head(2, 0));
	CHECK(lone_cpu_takes_sticky_head(3, 1));
	/* the 2:1 split (one waiting, none), or queues already even: moving would only swap, it holds */
	CHECK(!lone_cpu_takes_sticky_head(1, 0));
	CHECK(!lone_cpu_takes_sticky_head(2, 1));
	CHECK(!lone_cpu_takes_sticky_head(1, 1));
	/* queues of several CPUs compare waiting tasks per CPU: 2 on 4 CPUs against none on 1 is 1/2
	 * per CPU more, and moving one (-1/4 there, +1 here) would leave 3/4 the other way: holds ... */
	CHECK(vrq_sticky_holds(2, 4, 0, 1));
	/* ... 4 on 4 CPUs (1 each) against none: moving one leaves 1/4 the other way, closer: lapses */
	CHECK(!vrq_sticky_holds(4, 4, 0, 1));
	CHECK(!vrq_sticky_holds(2, 0, 0, 0));	/* a queue of no CPUs counts as one */
}

/*
 * --sticky inside one queue, CPU hogs at nice 0, rr_interval 6 ms: a CPU's hog ends its turn and is
 * renewed now; the queue's head left another CPU mid-work @waited_ms ago (its deadline was set then).
 * Does this CPU take it?
 */
static int cpu_takes_other_cpus_sticky_head(u64 waited_ms)
{
	const u64 rr = MS(6), now = MS(10000);
	u64 prev = vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(now, 0, rr));
	u64 head = vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(now - MS(waited_ms), 0, rr));

	return vrq_sticky_priodl(head, vrq_sticky_queue_offset(rr)) < prev;
}

static void test_sticky_in_queue(void)
{
	/* one rr_interval, far below the nice-19 offset used between queues */
	CHECK(vrq_sticky_queue_offset(MS(6)) == MS(6));
	CHECK(vrq_sticky_queue_offset(MS(6)) < vrq_sticky_offset(MS(6)));
	/* a head that waited less than a turn goes on where it ran: this CPU's own hog keeps it */
	CHECK(!cpu_takes_other_cpus_sticky_head(0));
	CHECK(!cpu_takes_other_cpus_sticky_head(5));
	/* one that waited over a turn (three hogs on its CPU: two turns) is taken: no count of who
	 * waits where is needed to even them out */
	CHECK(cpu_takes_other_cpus_sticky_head(7));
	CHECK(cpu_takes_other_cpus_sticky_head(12));
	/* who becomes sticky: runnable, not yielding, not a short runner */
	CHECK(vrq_becomes_sticky(1, 0, 0));
	CHECK(!vrq_becomes_sticky(0, 0, 0));	/* it sleeps */
	CHECK(!vrq_becomes_sticky(1, 1, 0));	/* it yielded */
	CHECK(!vrq_becomes_sticky(1, 0, 1));	/* a short runner: done soon wherever it runs */
	/* with --short-run-us 0 no task is a short runner, so every preempted task is sticky */
	CHECK(vrq_becomes_sticky(1, 0, vrq_short_runner(US(100), 0, 0)));
	/* without stickiness any head that waited at all wins over a renewed hog */
	CHECK(vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(MS(10000) - MS(1), 0, MS(6))) <
	      vrq_priodl(VRQ_PRIO_NORMAL, vrq_deadline(MS(10000), 0, MS(6))));
}

static void test_hist_bucket(void)
{
	u32 b;
	int ok = 1;

	CHECK(vrq_hist_bucket(0) == 0);
	CHECK(vrq_hist_bucket(999) == 0);		/* below 1 us */
	CHECK(vrq_hist_bucket(US(1)) == 1);		/* [1, 2) us */
	CHECK(vrq_hist_bucket(US(2) - 1) == 1);
	CHECK(vrq_hist_bucket(US(2)) == 2);		/* [2, 4) us */
	CHECK(vrq_hist_bucket(US(3)) == 2);
	CHECK(vrq_hist_bucket(MS(6)) == 13);		/* 6000 us in [4096, 8192) */
	CHECK(vrq_hist_bucket(MS(1000)) == 20);		/* 1e6 us in [2^19, 2^20) */
	/* every bucket's lower edge lands in it, and one less in the bucket before */
	for (b = 1; b < VRQ_HIST_BUCKETS - 1; b++) {
		u64 lower = US(1ULL << (b - 1));

		ok &= vrq_hist_bucket(lower) == b && vrq_hist_bucket(lower - 1) == b - 1;
	}
	CHECK(ok);
	CHECK(vrq_hist_bucket(US(1ULL << 24) - 1) == VRQ_HIST_BUCKETS - 2);	/* just under 16.8 s */
	CHECK(vrq_hist_bucket(US(1ULL << 24)) == VRQ_HIST_BUCKETS - 1);		/* 16.8 s and more */
	CHECK(vrq_hist_bucket(~0ULL) == VRQ_HIST_BUCKETS - 1);
}

static void test_lat_class(void)
{
	CHECK(vrq_lat_class(VRQ_SCHED_NORMAL, 0) == VRQ_LAT_NORMAL);
	CHECK(vrq_lat_class(VRQ_SCHED_BATCH, 0) == VRQ_LAT_BATCH);
	CHECK(vrq_lat_class(VRQ_SCHED_IDLE, 0) == VRQ_LAT_SCHED_IDLE);
	CHECK(vrq_lat_class(VRQ_SCHED_NORMAL, 1) == VRQ_LAT_KTHREAD);
	CHECK(vrq_lat_class(VRQ_SCHED_IDLE, 1) == VRQ_LAT_KTHREAD);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} cases[] = {
		{ "prio_ratio", test_prio_ratio },
		{ "deadline", test_deadline },
		{ "priodl", test_priodl },
		{ "task_prio", test_task_prio },
		{ "preempt", test_preempt },
		{ "keeps_cpu", test_keeps_cpu },
		{ "effective_slice", test_effective_slice },
		{ "floor_gives_way", test_floor_gives_way },
		{ "target_latency", test_target_latency },
		{ "hold_floor", test_hold_floor },
		{ "clock_waiters_and_turns", test_clock_waiters_and_turns },
		{ "clock_slice", test_clock_slice },
		{ "clock_now", test_clock_now },
		{ "short_runner", test_short_runner },
		{ "short_run_renew", test_short_run_renew },
		{ "under_share", test_under_share },
		{ "under_share_deadline", test_under_share_deadline },
		{ "wakeup_credit", test_wakeup_credit },
		{ "sync_handoff", test_sync_handoff },
		{ "waker_sleeps", test_waker_sleeps },
		{ "wakeup_spares_waker", test_wakeup_spares_waker },
		{ "stays_behind_kthread", test_stays_behind_kthread },
		{ "preempt_local", test_preempt_local },
		{ "expiry", test_expiry },
		{ "renew_deadline", test_renew_deadline },
		{ "clocks_across_queues", test_clocks_across_queues },
		{ "cpu_distance", test_cpu_distance },
		{ "queue_of", test_queue_of },
		{ "yield_type", test_yield_type },
		{ "group_deadline", test_group_deadline },
		{ "group_avg_toward", test_group_avg_toward },
		{ "group_load_kept", test_group_load_kept },
		{ "group_load_edges", test_group_load_edges },
		{ "group_multiplier", test_group_multiplier },
		{ "group_slot_word", test_group_slot_word },
		{ "group_load_of", test_group_load_of },
		{ "fork_depth", test_fork_depth },
		{ "cgroup_weights", test_cgroup_weights },
		{ "cpu_scaled", test_cpu_scaled },
		{ "capacity", test_capacity },
		{ "select_order", test_select_order },
		{ "delay_placement", test_delay_placement },
		{ "delay_expired", test_delay_expired },
		{ "wake_handoff", test_wake_handoff },
		{ "handoff_keeps_turn", test_handoff_keeps_turn },
		{ "handoff_repayment", test_handoff_repayment },
		{ "idle_wait", test_idle_wait },
		{ "latency_waiter", test_latency_waiter },
		{ "sticky", test_sticky },
		{ "sticky_claim_lapses", test_sticky_claim_lapses },
		{ "sticky_in_queue", test_sticky_in_queue },
		{ "hist_bucket", test_hist_bucket },
		{ "lat_class", test_lat_class },
		{ "simulated_shares", test_simulated_shares },
		{ "simulated_shares_at_rate", test_simulated_shares_at_rate },
	};
	unsigned long passed = 0, failed = 0;
	char b1[32], b2[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&cur, 0, sizeof(cur));
		cases[i].run();
		if (!cur.checks) {
			failed++;
			printf("FAIL %s: checked nothing\n", cases[i].name);
		} else if (cur.failed) {
			failed++;
			printf("FAIL %s: %s of %s assertions failed, the first at %s:%d: %s\n", cases[i].name,
			       count_str(cur.failed, b1), count_str(cur.checks, b2), cur.file, cur.line, cur.expr);
		} else {
			passed++;
			printf("PASS %s (%s assertion%s)\n", cases[i].name, count_str(cur.checks, b1),
			       cur.checks == 1 ? "" : "s");
		}
	}
	printf("policy: %lu passed, %lu failed (%s assertions)\n", passed, failed, count_str(assertions, b1));
	return failed ? 1 : 0;
}
