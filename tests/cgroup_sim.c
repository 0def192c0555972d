/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup-sim: a host design study for issue 30 item 1 (hierarchical cgroup v2 cpu.weight as
 * `--group-accounting cgroup`). It simulates BFS's deadline rule as scx_vrq applies it (the same
 * policy.h functions: vrq_prio_ratio, vrq_group_deadline, vrq_group_multiplier, vrq_should_renew,
 * vrq_wakeup_credit, vrq_under_share, vrq_under_share_deadline) on one shared queue of 2 CPUs, a 4 ms
 * tick that alone ends slices, a 6 ms rr_interval, always-runnable hogs and a sleeper that runs 1 ms
 * and sleeps 10 ms, and prints, for each candidate way of turning cgroup weights into deadlines, the
 * CPU shares of each case beside its target (+-10% relative) and the sleeper's wake-up delay.
 *
 * Build and run (no Makefile; from the repository root):
 *   cc -O2 -Wall -o /tmp/cgroup_sim tests/cgroup_sim.c && nice -n 10 /tmp/cgroup_sim [SECONDS]
 * SECONDS of simulated time per case (default 30; the first 2 s are not counted).
 *
 * Designs (the deadline offset given to a task when its deadline is renewed; o(nice) is BFS's
 * prio_ratio(nice) x rr_interval / 128, d the fork-depth factor when the penalty is on, n_g the
 * runnable tasks of the task's leaf cgroup, hw_g the leaf's hierarchical share of the machine --
 * the product over its ancestors of weight / sum of the weights of active siblings -- and m the CPUs):
 *   off       o(nice) x d                               BFS, no grouping (reference)
 *   session   o(nice) x d x count multiplier            today's default, the leaf cgroup as the group
 *   naive     o(nice) x d x count mult. x prod(sum w / w)   the BFS group rule weighted along the tree
 *   add-T     o(nice) x d + T x n_g / (m x hw_g)        the additive mapping: T the turn length (the
 *                                                       slice rounded up to the tick, 8 ms; or 6 ms)
 *   vtime-B   o(nice) x d + clamp(cv_g - max cv, -B, 0) a per-cgroup virtual time: cv_g advances by
 *                                                       ran / (m x hw_g); lag bounded by B while the
 *                                                       cgroup competes, by rr_interval when it comes
 *                                                       back from idle (no sleep credit)
 *   hybrid-B  add-8 + vtime-B                           the additive mapping, corrected by the vtime
 *   hyb6-120  add-6 + vtime-120                         the same with the turn mis-estimated as 6 ms
 *
 * Optional second argument: CPU 1's tick runs this many ms ahead of CPU 0's (default 0: aligned).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define NCPU 2
#define MAXT 48
#define MAXG 8
#define DT_NS (10ULL * VRQ_NSEC_PER_USEC)
#define TICK_NS (4ULL * VRQ_NSEC_PER_MSEC)
#define RR_NS (6ULL * VRQ_NSEC_PER_MSEC)
#define WARM_NS (2000ULL * VRQ_NSEC_PER_MSEC)
#define T0_NS (10000ULL * VRQ_NSEC_PER_MSEC)	/* the clock starts at 10 s: lag terms never go below 0 */
#define SLEEP_NS (10ULL * VRQ_NSEC_PER_MSEC)
#define RUN_NS (1ULL * VRQ_NSEC_PER_MSEC)
#define WAKE_CREDIT_PCT 50
#define MAXWAKES 100000

enum kind { D_OFF, D_SESSION, D_NAIVE, D_ADD, D_VT, D_HYB };

struct design {
	const char *name;
	enum kind kind;
	u64 turn_ns;		/* add, hybrid: T */
	u64 budget_ns;		/* vtime, hybrid: B */
};

static const struct design designs[] = {
	{ "off", D_OFF, 0, 0 },
	{ "session", D_SESSION, 0, 0 },
	{ "naive", D_NAIVE, 0, 0 },
	{ "add-6", D_ADD, 6ULL * VRQ_NSEC_PER_MSEC, 0 },
	{ "add-8", D_ADD, 8ULL * VRQ_NSEC_PER_MSEC, 0 },
	{ "vtime-250", D_VT, 0, 250ULL * VRQ_NSEC_PER_MSEC },
	{ "vtime-1000", D_VT, 0, 1000ULL * VRQ_NSEC_PER_MSEC },
	{ "hybrid-24", D_HYB, 8ULL * VRQ_NSEC_PER_MSEC, 24ULL * VRQ_NSEC_PER_MSEC },
	{ "hybrid-120", D_HYB, 8ULL * VRQ_NSEC_PER_MSEC, 120ULL * VRQ_NSEC_PER_MSEC },
	{ "hyb6-120", D_HYB, 6ULL * VRQ_NSEC_PER_MSEC, 120ULL * VRQ_NSEC_PER_MSEC },
};
#define NDESIGNS ((int)(sizeof(designs) / sizeof(designs[0])))

struct cg {
	int parent;		/* -1: the root */
	u32 weight;
	int nr;			/* runnable tasks in this cgroup (leaf) */
	int sub;		/* runnable tasks in its subtree */
	double hw;		/* hierarchical share of the machine */
	double cv;		/* virtual time (vtime, hybrid) */
	u64 runtime;
	const char *name;
};

struct task {
	int cg, nice, depth, sleeper;
	int runnable, cpu;	/* cpu -1: queued (runnable) or asleep */
	u64 deadline;
	s64 slice;
	u64 offset;		/* the offset at the last renewal (under-share uses it) */
	u64 runtime;
	u64 wake_at, run_left, woke_at, slept_at, ran_since;
	u64 avg_run, avg_sleep;
	int waiting_wake;
	u64 run_ns, sleep_ns;	/* a sleeper's run and sleep */
	int probe;		/* its wake-up delays are recorded */
};

static u64 tick_skew_ns;	/* CPU 1's tick this much before CPU 0's (argv[2], ms) */

struct sim {
	const struct design *d;
	int depth_penalty;
	int ng, nt;
	struct cg g[MAXG];
	struct task t[MAXT];
	int cur[NCPU];
	u64 now;
	u64 wakes[MAXWAKES];
	int nwakes;
};

/* Hierarchical shares of the active cgroups (flatcg's hweight): weight over the active siblings' sum. */
static void update_hw(struct sim *s)
{
	int i, j;

	for (i = 0; i < s->ng; i++)
		s->g[i].sub = 0;
	for (i = 0; i < s->ng; i++)
		for (j = i; j >= 0; j = s->g[j].parent)
			s->g[j].sub += s->g[i].nr;
	/* parents come before children in the table */
	for (i = 0; i < s->ng; i++) {
		int p = s->g[i].parent;
		double sum = 0;

		if (p < 0) {
			s->g[i].hw = 1.0;
			continue;
		}
		for (j = 0; j < s->ng; j++)
			if (s->g[j].parent == p && (s->g[j].sub || j == i))
				sum += s->g[j].weight;
		s->g[i].hw = s->g[p].hw * s->g[i].weight / sum;
	}
}

static double max_cv(struct sim *s)
{
	double r = 0;
	int i, any = 0;

	for (i = 0; i < s->ng; i++)
		if (s->g[i].nr && (!any || s->g[i].cv > r)) {
			r = s->g[i].cv;
			any = 1;
		}
	return r;
}

/* A lagging cgroup is brought up to within the budget of the leader (EEVDF's lag bound). */
static void floor_cv_by(struct sim *s, int gi, u64 budget_ns)
{
	double r = max_cv(s);

	if (s->g[gi].cv < r - (double)budget_ns)
		s->g[gi].cv = r - (double)budget_ns;
}

static void floor_cv(struct sim *s, int gi)
{
	floor_cv_by(s, gi, s->d->budget_ns);
}

static int total_runnable(struct sim *s)
{
	int i, n = 0;

	for (i = 0; i < s->nt; i++)
		n += s->t[i].runnable;
	return n;
}

/* The deadline offset of @t renewed now (may be below the base for vtime's lag term: signed). */
static s64 offset_of(struct sim *s, struct task *t)
{
	struct cg *g = &s->g[t->cg];
	u64 depth_m = s->depth_penalty ? vrq_fork_depth_multiplier(t->depth) : 1;
	u64 one = VRQ_GROUP_LOAD_ONE, gm, mult;
	s64 off;
	double ratio = 1.0;
	int j;

	switch (s->d->kind) {
	case D_OFF:
		return (s64)vrq_group_deadline(0, t->nice, RR_NS, one * depth_m);
	case D_SESSION:
	case D_NAIVE:
		gm = vrq_group_multiplier(vrq_group_level(g->nr), vrq_group_level(total_runnable(s)));
		if (s->d->kind == D_NAIVE) {
			for (j = t->cg; s->g[j].parent >= 0; j = s->g[j].parent) {
				int p = s->g[j].parent, k;
				double sum = 0;

				for (k = 0; k < s->ng; k++)
					if (s->g[k].parent == p && (s->g[k].sub || k == j))
						sum += s->g[k].weight;
				ratio *= sum / s->g[j].weight;
			}
		}
		mult = (u64)((double)gm * ratio) * depth_m;
		return (s64)vrq_group_deadline(0, t->nice, RR_NS, mult);
	case D_ADD:
	case D_VT:
	case D_HYB:
		off = (s64)vrq_group_deadline(0, t->nice, RR_NS, one * depth_m);
		if (s->d->kind != D_VT)
			off += (s64)((double)s->d->turn_ns * (g->nr ? g->nr : 1) / (NCPU * g->hw));
		if (s->d->kind != D_ADD) {
			floor_cv(s, t->cg);
			off += (s64)(g->cv - max_cv(s));	/* in [-B, 0] */
		}
		return off;
	}
	return 0;
}

static u64 priodl(struct task *t)
{
	return vrq_priodl(VRQ_PRIO_NORMAL, t->deadline);
}

static void renew(struct sim *s, struct task *t, int woken)
{
	s64 off = offset_of(s, t);
	u64 uoff = off > 0 ? (u64)off : 0;
	u64 credit = vrq_wakeup_credit(t->slice, woken, RR_NS, uoff, WAKE_CREDIT_PCT);

	t->slice = credit ? vrq_credited_slice(t->slice, RR_NS) : (s64)RR_NS;
	t->deadline = (u64)((s64)s->now + off) - credit;
	t->offset = uoff;
}

static int queue_head(struct sim *s)
{
	int i, best = -1;

	for (i = 0; i < s->nt; i++)
		if (s->t[i].runnable && s->t[i].cpu < 0 && (best < 0 || priodl(&s->t[i]) < priodl(&s->t[best])))
			best = i;
	return best;
}

static void run_on(struct sim *s, int c, int ti)
{
	struct task *t = &s->t[ti];

	s->cur[c] = ti;
	t->cpu = c;
	if (t->waiting_wake) {
		if (t->probe && s->now >= T0_NS + WARM_NS && s->nwakes < MAXWAKES)
			s->wakes[s->nwakes++] = s->now - t->woke_at;
		t->waiting_wake = 0;
	}
}

static void requeue(struct sim *s, int c)
{
	int ti = s->cur[c];

	if (ti >= 0)
		s->t[ti].cpu = -1;
	s->cur[c] = -1;
}

static void set_runnable(struct sim *s, struct task *t, int r)
{
	s->g[t->cg].nr += r ? 1 : -1;
	t->runnable = r;
	update_hw(s);
	/* a cgroup that comes back from idle brings at most one rr_interval of lag: no sleep credit */
	if (r && s->d->budget_ns)
		floor_cv_by(s, t->cg, s->g[t->cg].nr == 1 ? RR_NS : s->d->budget_ns);
}

static void wake(struct sim *s, int ti)
{
	struct task *t = &s->t[ti];
	u64 queued = 0, others, worst = 0;
	int i, c, victim = -1;

	t->avg_sleep = t->avg_sleep ? vrq_run_avg(t->avg_sleep, s->now - t->slept_at) : s->now - t->slept_at;
	set_runnable(s, t, 1);
	t->run_left = t->run_ns;
	t->woke_at = s->now;
	t->waiting_wake = 1;
	if (vrq_should_renew(t->slice, RR_NS, t->deadline, s->now, 1))
		renew(s, t, 1);
	for (i = 0; i < s->nt; i++)
		queued += s->t[i].runnable && s->t[i].cpu < 0 && i != ti;
	others = (queued + NCPU - 1) / NCPU + 1;
	if (vrq_under_share(t->avg_run, t->avg_sleep, others))
		t->deadline = vrq_under_share_deadline(t->deadline, s->now, t->offset,
						       vrq_nice0_offset(RR_NS));
	/* an idle CPU, else the one running the latest deadline, if ours is earlier (BFS's preemption) */
	for (c = 0; c < NCPU; c++) {
		if (s->cur[c] < 0) {
			victim = c;
			break;
		}
		if (priodl(&s->t[s->cur[c]]) > worst) {
			worst = priodl(&s->t[s->cur[c]]);
			victim = c;
		}
	}
	if (s->cur[victim] < 0 || vrq_should_preempt(priodl(t), worst)) {
		requeue(s, victim);	/* the preempted task keeps its deadline and slice */
		run_on(s, victim, ti);
	}
}

static void tick(struct sim *s, int c)
{
	int ti = s->cur[c], h;
	struct task *t;

	if (ti < 0)
		return;
	t = &s->t[ti];
	if (!vrq_slice_expired(t->slice, RR_NS))
		return;
	renew(s, t, 0);
	h = queue_head(s);
	if (h >= 0 && priodl(&s->t[h]) < priodl(t)) {	/* ties keep the running task */
		requeue(s, c);
		run_on(s, c, h);
	}
}

static void run(struct sim *s, u64 secs)
{
	u64 end = T0_NS + secs * 1000 * VRQ_NSEC_PER_MSEC;
	int i, c;

	s->now = T0_NS;
	for (c = 0; c < NCPU; c++)
		s->cur[c] = -1;
	for (i = 0; i < s->nt; i++) {
		s->t[i].cpu = -1;
		s->t[i].slice = 0;
		s->t[i].runnable = 0;
		if (s->t[i].sleeper) {
			s->t[i].wake_at = T0_NS + 3ULL * VRQ_NSEC_PER_MSEC;
			s->t[i].slept_at = T0_NS;
		} else {
			set_runnable(s, &s->t[i], 1);
		}
	}
	for (i = 0; i < s->nt; i++)
		if (s->t[i].runnable)
			renew(s, &s->t[i], 0);
	while (s->now < end) {
		int counting = s->now >= T0_NS + WARM_NS;

		for (c = 0; c < NCPU; c++)
			if (s->cur[c] < 0 && (i = queue_head(s)) >= 0)
				run_on(s, c, i);
		s->now += DT_NS;
		/* charge what ran */
		for (c = 0; c < NCPU; c++) {
			struct task *t;

			if ((i = s->cur[c]) < 0)
				continue;
			t = &s->t[i];
			t->slice -= DT_NS;
			if (counting) {
				t->runtime += DT_NS;
				s->g[t->cg].runtime += DT_NS;
			}
			if (s->d->budget_ns)
				s->g[t->cg].cv += (double)DT_NS / (NCPU * s->g[t->cg].hw);
			if (t->sleeper && (t->run_left -= DT_NS) == 0) {
				t->avg_run = t->avg_run ? vrq_run_avg(t->avg_run, t->run_ns) : t->run_ns;
				requeue(s, c);
				set_runnable(s, t, 0);
				t->slept_at = s->now;
				t->wake_at = s->now + t->sleep_ns;
			}
		}
		for (i = 0; i < s->nt; i++)
			if (s->t[i].sleeper && !s->t[i].runnable && s->t[i].wake_at <= s->now)
				wake(s, i);
		for (c = 0; c < NCPU; c++)
			if ((s->now + c * tick_skew_ns) % TICK_NS == 0)
				tick(s, c);
	}
}

/* ---- the cases ---- */

struct expect {
	int cg;
	double share;	/* target share of all CPU time */
};

static int add_cg(struct sim *s, int parent, u32 weight, const char *name)
{
	struct cg *g = &s->g[s->ng];

	memset(g, 0, sizeof(*g));
	g->parent = parent;
	g->weight = weight;
	g->name = name;
	return s->ng++;
}

static void add_tasks(struct sim *s, int cg, int n, int nice, int depth, int sleeper)
{
	while (n--) {
		struct task *t = &s->t[s->nt++];

		memset(t, 0, sizeof(*t));
		t->cg = cg;
		t->nice = nice;
		t->depth = depth;
		t->sleeper = sleeper;
		t->probe = sleeper;
		t->run_ns = RUN_NS;
		t->sleep_ns = SLEEP_NS;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int fails[NDESIGNS];

static void report(struct sim *s, const char *title, const struct expect *e, int ne, int di)
{
	u64 total = 0;
	int i, ok = 1;

	for (i = 0; i < s->ng; i++)
		total += s->g[i].runtime;
	printf("  %-10s", designs[di].name);
	for (i = 0; i < ne; i++) {
		double got = (double)s->g[e[i].cg].runtime / (double)total;
		/* a target of 0: reported, not judged */
		int in = !e[i].share || (got >= e[i].share * 0.9 && got <= e[i].share * 1.1);

		ok &= in;
		printf("  %s %.3f%s", s->g[e[i].cg].name, got, in ? "" : "*");
	}
	printf("  %s\n", ok ? "ok" : "MISS");
	if (!ok)
		fails[di]++;
	(void)title;
}

static void header(const char *title, const struct expect *e, int ne, struct sim *s)
{
	int i;

	printf("\n%s\n  %-10s", title, "target");
	for (i = 0; i < ne; i++)
		if (e[i].share)
			printf("  %s %.3f ", s->g[e[i].cg].name, e[i].share);
		else
			printf("  %s   -   ", s->g[e[i].cg].name);
	printf(" (+-10%%; * outside)\n");
}

int main(int argc, char **argv)
{
	u64 secs = argc > 1 ? strtoull(argv[1], NULL, 10) : 30;
	int ncases = 9;
	int di, c;

	printf("cgroup-sim: %d CPUs, one shared queue, tick %llu ms, rr_interval %llu ms, %llu s per case\n",
	       NCPU, (unsigned long long)(TICK_NS / VRQ_NSEC_PER_MSEC), (unsigned long long)(RR_NS / VRQ_NSEC_PER_MSEC),
	       (unsigned long long)secs);
	if (argc > 2)
		tick_skew_ns = strtoull(argv[2], NULL, 10) * VRQ_NSEC_PER_MSEC;
	for (c = 0; c < ncases; c++) {
		for (di = 0; di < NDESIGNS; di++) {
			static struct sim s;
			struct expect e[4];
			int ne = 0, r, a, b, a1, a2, l, h;
			const char *title = "";

			memset(&s, 0, sizeof(s));
			s.d = &designs[di];
			r = add_cg(&s, -1, 100, "root");
			switch (c) {
			case 0:
				title = "1. siblings A(100) B(300), four hogs each: A:B = 1:3";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 300, "B");
				add_tasks(&s, a, 4, 0, 1, 0);
				add_tasks(&s, b, 4, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.25 };
				e[ne++] = (struct expect){ b, 0.75 };
				break;
			case 1:
				title = "2. nesting A(100){A1(100), A2(100)} beside B(100), four hogs in each leaf: A1:A2:B = 1:1:2";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 100, "B");
				a1 = add_cg(&s, a, 100, "A1");
				a2 = add_cg(&s, a, 100, "A2");
				add_tasks(&s, a1, 4, 0, 1, 0);
				add_tasks(&s, a2, 4, 0, 1, 0);
				add_tasks(&s, b, 4, 0, 1, 0);
				e[ne++] = (struct expect){ a1, 0.25 };
				e[ne++] = (struct expect){ a2, 0.25 };
				e[ne++] = (struct expect){ b, 0.5 };
				break;
			case 2:
				title = "3. one hog in A(100) beside sixteen in B(100): A:B = 1:1";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 100, "B");
				add_tasks(&s, a, 1, 0, 1, 0);
				add_tasks(&s, b, 16, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.5 };
				e[ne++] = (struct expect){ b, 0.5 };
				break;
			case 3:
				title = "4. group sizes: A(100) eight hogs beside B(300) two hogs: A:B = 1:3";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 300, "B");
				add_tasks(&s, a, 8, 0, 1, 0);
				add_tasks(&s, b, 2, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.25 };
				e[ne++] = (struct expect){ b, 0.75 };
				break;
			case 4:
				title = "5. nice inside: A(100){2 hogs nice 0, 2 nice 10} beside B(100){4 nice 0}: A:B = 1:1";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 100, "B");
				add_tasks(&s, a, 2, 0, 1, 0);
				add_tasks(&s, a, 2, 10, 1, 0);
				add_tasks(&s, b, 4, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.5 };
				e[ne++] = (struct expect){ b, 0.5 };
				break;
			case 5:
				title = "6. fork depth (penalty on): A(100) four hogs at depth 4 beside B(100) four at depth 1: A:B = 1:1";
				s.depth_penalty = 1;
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 100, "B");
				add_tasks(&s, a, 4, 0, 4, 0);
				add_tasks(&s, b, 4, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.5 };
				e[ne++] = (struct expect){ b, 0.5 };
				break;
			case 6:
				title = "7. wake-up: L(10){sleeper: 1 ms run, 10 ms sleep} beside H(100){8 hogs}: sleeper's own share 1/11 CPU";
				l = add_cg(&s, r, 10, "L");
				h = add_cg(&s, r, 100, "H");
				add_tasks(&s, l, 1, 0, 1, 1);
				add_tasks(&s, h, 8, 0, 1, 0);
				e[ne++] = (struct expect){ l, 1.0 / 22 };
				e[ne++] = (struct expect){ h, 21.0 / 22 };
				break;
			case 7:
				title = "8. herd: C(100){4 tasks run 40 ms, sleep 200 ms, together} beside H(100){4 hogs + the sleeper}: C 4x40/240 of 2 CPUs";
				l = add_cg(&s, r, 100, "C");
				h = add_cg(&s, r, 100, "H");
				add_tasks(&s, l, 4, 0, 1, 1);
				for (a = 0; a < 4; a++) {
					s.t[a].run_ns = 40ULL * VRQ_NSEC_PER_MSEC;
					s.t[a].sleep_ns = 200ULL * VRQ_NSEC_PER_MSEC;
					s.t[a].probe = 0;
				}
				add_tasks(&s, h, 4, 0, 1, 0);
				add_tasks(&s, h, 1, 0, 1, 1);
				/* no share target: how much C gets depends on how fast its herd is served */
				e[ne++] = (struct expect){ l, 0 };
				e[ne++] = (struct expect){ h, 0 };
				break;
			case 8:
				title = "9. one hog in A(100) beside forty in B(100): A:B = 1:1";
				a = add_cg(&s, r, 100, "A");
				b = add_cg(&s, r, 100, "B");
				add_tasks(&s, a, 1, 0, 1, 0);
				add_tasks(&s, b, 40, 0, 1, 0);
				e[ne++] = (struct expect){ a, 0.5 };
				e[ne++] = (struct expect){ b, 0.5 };
				break;
			}
			if (!di)
				header(title, e, ne, &s);
			run(&s, secs);
			report(&s, title, e, ne, di);
			if (c == 4) {
				/* per task: A's nice-0 against A's nice-10 */
				double n0 = (double)(s.t[0].runtime + s.t[1].runtime) / 2;
				double n10 = (double)(s.t[2].runtime + s.t[3].runtime) / 2;

				printf("  %-10s    inside A: nice 0 : nice 10 per task = %.1f : 1\n", "", n10 ? n0 / n10 : 0);
			}
			if (c >= 6 && s.nwakes) {
				qsort(s.wakes, s.nwakes, sizeof(u64), cmp_u64);
				printf("  %-10s    sleeper wake-up delay: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d wake-ups)\n", "",
				       s.wakes[s.nwakes / 2] / 1e6, s.wakes[(int)(s.nwakes * 0.99)] / 1e6,
				       s.wakes[s.nwakes - 1] / 1e6, s.nwakes);
			}
		}
	}
	printf("\ncases outside +-10%% per design (of %d):", ncases);
	for (di = 0; di < NDESIGNS; di++)
		printf(" %s %d", designs[di].name, fails[di]);
	printf("\n");
	return 0;
}
