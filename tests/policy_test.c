/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests of the scheduling policy (src/bpf/policy.h), the same functions the BPF scheduler
 * runs. Build and run: make -C tests check. Ends with "N passed, N failed".
 */
#include <stdio.h>
#include <string.h>
#include "sim.h"

static int passed, failed;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (cond) {                                                               \
			passed++;                                                         \
		} else {                                                                  \
			failed++;                                                         \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);    \
		}                                                                         \
	} while (0)

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
	u64 early_idle = vrq_priodl(VRQ_PRIO_IDLE, 0);

	CHECK(early_normal < late_normal);
	CHECK(late_normal < early_idle);	/* priority dominates the deadline */
	CHECK(vrq_priodl_prio(early_idle) == VRQ_PRIO_IDLE);
	CHECK(vrq_priodl(VRQ_PRIO_NORMAL, 0x123456789abcdef0ULL) ==
	      (((u64)VRQ_PRIO_NORMAL << 56) | (0x123456789abcdef0ULL >> 8)));
	/* every live key lies well inside the kernel's signed vtime comparison window */
	CHECK(early_idle - early_normal < (1ULL << 63));
}

static void test_task_prio_and_preempt(void)
{
	CHECK(vrq_task_prio(VRQ_SCHED_NORMAL, 0, 0) == VRQ_PRIO_NORMAL);
	CHECK(vrq_task_prio(VRQ_SCHED_BATCH, 0, 0) == VRQ_PRIO_NORMAL);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 0, 0) == VRQ_PRIO_IDLE);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 1, 0) == VRQ_PRIO_NORMAL);	/* exiting: holds resources */
	/* a kernel thread's wake-up goes before every user task, whatever its deadline */
	CHECK(vrq_task_prio(VRQ_SCHED_NORMAL, 0, 1) == VRQ_PRIO_KERNEL);
	CHECK(vrq_task_prio(VRQ_SCHED_IDLE, 0, 1) == VRQ_PRIO_KERNEL);
	CHECK(vrq_priodl(VRQ_PRIO_KERNEL, ~0ULL) < vrq_priodl(VRQ_PRIO_NORMAL, 0));

	CHECK(vrq_may_preempt(VRQ_SCHED_NORMAL, 0));
	CHECK(!vrq_may_preempt(VRQ_SCHED_BATCH, 0));
	CHECK(!vrq_may_preempt(VRQ_SCHED_NORMAL, 1));

	CHECK(vrq_should_preempt(100, 200));
	CHECK(!vrq_should_preempt(200, 200));
	CHECK(!vrq_should_preempt(300, 200));
	CHECK(!vrq_should_preempt(100, 0));	/* an idle CPU is woken, never "preempted" */
}

static void test_effective_slice(void)
{
	u32 why = 99;

	/* short queues keep rr_interval exactly */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 0, 2, &why) == MS(6) && why == VRQ_SLICE_FULL);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 300, 2, NULL) == MS(6));	/* 150 * 6 ms < 1 s */
	/* 1000 queued on 2 CPUs: 500 per CPU, 1 s / 500 = 2 ms */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 1000, 2, &why) == MS(2) && why == VRQ_SLICE_FIT_ROUND);
	/* 10,000 runnable on 2 CPUs: floor at the minimum slice; round = 5000 * 250 us = 1.25 s */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 10000, 2, &why) == US(250) && why == VRQ_SLICE_FIT_ROUND);
	CHECK(5000 * vrq_effective_slice(MS(6), US(250), MS(1000), 10000, 2, NULL) < MS(10000));
	/* never longer than rr_interval, even with a min slice above it */
	CHECK(vrq_effective_slice(MS(1), MS(2), MS(10), 1000, 1, &why) == MS(1) && why == VRQ_SLICE_FULL);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 1000, 0, NULL) == US(1000));	/* 0 CPUs = 1 */
	/* kernel threads keep rr_interval however long the queue; user tasks get the shrunk slice */
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), 10000, 2, 1, &why) == MS(6) && why == VRQ_SLICE_FULL);
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), 10000, 2, 0, NULL) == US(250));
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), 10, 2, 0, NULL) == MS(6));
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
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 40000, 2, &why) == US(250) && why == VRQ_SLICE_FIT_ROUND);
	/* one more task per CPU and it gives way */
	slice = vrq_effective_slice(MS(6), US(250), MS(1000), 40002, 2, &why);
	CHECK(slice < US(250) && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	CHECK(20001 * slice <= VRQ_SAFE_ROUND_NS);
	/* the 100,000 threads on 2 CPUs */
	slice = vrq_effective_slice(MS(6), US(250), MS(1000), 100000, 2, &why);
	CHECK(slice == US(100) && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	/* at every count the floor can hold, the round is within the safe round */
	for (n = 2; n <= 2 * VRQ_SAFE_ROUND_NS / VRQ_SLICE_TIMER_MIN_NS; n = n * 3 / 2 + 1) {
		slice = vrq_effective_slice(MS(6), US(250), MS(1000), n, 2, &why);
		CHECK((n / 2) * slice <= VRQ_SAFE_ROUND_NS || why == VRQ_SLICE_FULL);
		CHECK(slice >= VRQ_SLICE_TIMER_MIN_NS);
	}
	/* past 100,000 per CPU not even the shortest slice holds the round: it stays at that minimum */
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 200000, 2, &why) == VRQ_SLICE_TIMER_MIN_NS &&
	      why == VRQ_SLICE_FLOOR_GAVE_WAY);
	CHECK(vrq_effective_slice(MS(6), US(250), MS(1000), 200002, 2, &why) == VRQ_SLICE_TIMER_MIN_NS &&
	      why == VRQ_SLICE_ROUND_OVER);
	/* a longer --max-round-ms than the floor's round still never passes the safe round */
	slice = vrq_effective_slice(MS(6), US(250), MS(5000), 100000, 1, &why);
	CHECK(100000 * slice <= VRQ_SAFE_ROUND_NS && why == VRQ_SLICE_FLOOR_GAVE_WAY);
	/* kernel threads still keep rr_interval at any count */
	CHECK(vrq_task_slice(MS(6), US(250), MS(1000), 1000000, 2, 1, &why) == MS(6) && why == VRQ_SLICE_FULL);
}

static void test_expiry_and_clocks(void)
{
	CHECK(vrq_slice_expired(0));
	CHECK(vrq_slice_expired(-5));
	CHECK(vrq_slice_expired(US(99)));
	CHECK(!vrq_slice_expired(US(100)));

	CHECK(vrq_deadline_expired(100, 100));
	CHECK(vrq_deadline_expired(100, 200));
	CHECK(!vrq_deadline_expired(200, 100));
	CHECK(!vrq_deadline_expired(5, (u64)-5));	/* wrap-safe */

	/* a used-up slice always renews; a passed deadline only on a wake-up, not for a preempted task */
	CHECK(vrq_renew_deadline(US(50), MS(10), MS(5), 0));
	CHECK(vrq_renew_deadline(US(50), MS(10), MS(5), 1));
	CHECK(vrq_renew_deadline(US(200), MS(10), MS(20), 1));
	CHECK(!vrq_renew_deadline(US(200), MS(10), MS(20), 0));
	CHECK(!vrq_renew_deadline(US(200), MS(30), MS(20), 1));

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

	/* a lone task, or the group off (count 0/1), is plain BFS */
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), 1) == vrq_deadline(MS(100), 0, MS(6)));
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), 0) == vrq_deadline(MS(100), 0, MS(6)));
	/* N runnable in the group: N times the offset */
	CHECK(vrq_group_deadline(MS(100), 0, MS(6), 32) == MS(100) + 32 * one);
	/* capped */
	CHECK(vrq_group_deadline(0, 0, MS(6), 1000000) == VRQ_GROUP_MAX_SCALE * one);
	/* nice still counts inside a group */
	CHECK(vrq_group_deadline(0, 10, MS(6), 4) > vrq_group_deadline(0, 0, MS(6), 4));
}

static void test_fork_depth(void)
{
	CHECK(vrq_fork_depth_scale(0) == 1);
	CHECK(vrq_fork_depth_scale(1) == 1);
	CHECK(vrq_fork_depth_scale(5) == 5);
	CHECK(vrq_fork_depth_scale(1000) == VRQ_FORK_DEPTH_MAX);
	/* deeper: a later deadline, by the ratio of depths */
	CHECK(vrq_group_deadline(0, 0, MS(6), vrq_fork_depth_scale(6)) ==
	      2 * vrq_group_deadline(0, 0, MS(6), vrq_fork_depth_scale(3)));
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

static void test_simulated_shares(void)
{
	struct sim_task t[2];
	double s;

	/* BFS's figures (REFERENCE.md): nice 0 gets ~11x nice 10 when slices end exactly ... */
	memset(t, 0, sizeof(t));
	t[1].nice = 10;
	s = share_of_first(t, 2, US(100), 0);
	CHECK(s / (1 - s) > 10.0 && s / (1 - s) < 12.0);
	/* ... ~8x when slice expiry is only seen at 4 ms ticks (HZ=250) ... */
	s = share_of_first(t, 2, MS(4), 0);
	CHECK(s / (1 - s) > 7.0 && s / (1 - s) < 9.0);
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
	u32 i, lvl, perf, n = 0, ok = 1;

	for (i = 0; vrq_select_step(i, 1, &lvl, &perf); i++, n++)
		ok &= i < 11 && lvl == aware[i][0] && perf == aware[i][1];
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
	for (i = 0, n = 0, ok = 1; vrq_select_step(i, 0, &lvl, &perf); i++, n++)
		ok &= lvl == i && perf == VRQ_PERF_ANY;
	CHECK(ok);
	CHECK(n == VRQ_NR_DIST);
	CHECK(n <= VRQ_SELECT_MAX_STEPS);
}

static void test_delay_placement(void)
{
	CHECK(vrq_delay_placement(US(50), 1, 0, 1, 0));
	CHECK(!vrq_delay_placement(0, 1, 0, 1, 0));	/* off */
	CHECK(!vrq_delay_placement(US(50), 0, 0, 1, 0));	/* the idle CPU found is warm: use it */
	CHECK(!vrq_delay_placement(US(50), 1, 1, 1, 0));	/* the waker is cold too */
	CHECK(!vrq_delay_placement(US(50), 1, 0, 0, 0));	/* the task may not run on the waker */
	CHECK(!vrq_delay_placement(US(50), 1, 0, 1, 1));	/* the waker is the target */

	CHECK(!vrq_delay_expired(MS(10), MS(10) + US(49), US(50)));
	CHECK(vrq_delay_expired(MS(10), MS(10) + US(50), US(50)));
	CHECK(vrq_delay_expired(~0ULL - US(10), US(40), US(50)));	/* clock wrap */
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
	CHECK(vrq_sticky_priodl(near_end, offset) < vrq_priodl(VRQ_PRIO_IDLE, 0));
	CHECK(vrq_sticky_priodl(a, 0) == a);
}

int main(void)
{
	test_prio_ratio();
	test_deadline();
	test_priodl();
	test_task_prio_and_preempt();
	test_effective_slice();
	test_floor_gives_way();
	test_expiry_and_clocks();
	test_cpu_distance();
	test_queue_of();
	test_yield_type();
	test_group_deadline();
	test_fork_depth();
	test_cpu_scaled();
	test_select_order();
	test_delay_placement();
	test_sticky();
	test_simulated_shares();
	printf("policy: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
