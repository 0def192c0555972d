// SPDX-License-Identifier: GPL-2.0
// reqlat: a saturated request/worker latency probe, the shape sched_ext latency work is judged by
// (schbench-like). MSG_THREADS message threads (default 1) each hand requests to their share of WORKERS
// worker threads; each request is a fixed WORK_US of CPU work. A worker that finishes reports back and
// its message thread hands it the next request at once, so with more workers than CPUs the machine stays
// saturated. Measured per request:
//   wake latency    from the message thread waking the worker to the worker running (µs);
//   request latency from handing the request out to its work being done (µs): wake-up, the work, and
//                   every time the worker was preempted or waited for a CPU in between.
// Prints "requests=N rps=X wake_p50=.. wake_p99=.. wake_p999=.. req_p50=.. req_p99=.. req_p999=.."
// (µs) after SECONDS. The work is calibrated before the threads start (a loop timed on this CPU).
//   reqlat SECONDS WORKERS [WORK_US [MSG_THREADS]]
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

enum { IDLE, REQUEST, DONE, QUIT };

// One message thread and the workers it hands requests to (workers[first .. first + count - 1]).
struct msg_thread {
	_Atomic uint32_t completions; // futex word the message thread sleeps on
	long first, count;
	char pad[40];
};

struct worker {
	_Atomic uint32_t state;
	uint64_t handed_at; // ns: when the message thread handed out the request
	struct msg_thread *msg;
	char pad[40];
};

static struct worker *workers;
static struct msg_thread *msgs;
static long nworkers, nmsgs;
static uint64_t work_loops, end_ns;
static uint64_t *wake_us, *req_us;
static long nsamples, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t started, done;
	uint32_t s;

	for (;;) {
		while ((s = atomic_load(&w->state)) != REQUEST) {
			if (s == QUIT)
				return NULL;
			futex_wait(&w->state, s);
		}
		started = now_ns();
		spin(work_loops);
		done = now_ns();
		pthread_mutex_lock(&lock);
		if (nsamples < cap) {
			wake_us[nsamples] = (started - w->handed_at) / 1000;
			req_us[nsamples] = (done - w->handed_at) / 1000;
			nsamples++;
		}
		pthread_mutex_unlock(&lock);
		// REQUEST -> DONE, unless the run ended meanwhile (QUIT must not be overwritten)
		s = REQUEST;
		if (!atomic_compare_exchange_strong(&w->state, &s, DONE))
			return NULL;
		atomic_fetch_add(&w->msg->completions, 1);
		futex_wake(&w->msg->completions, 1);
	}
}

static void hand_out(struct worker *w)
{
	w->handed_at = now_ns();
	atomic_store(&w->state, REQUEST);
	futex_wake(&w->state, 1);
}

static void *msg_main(void *arg)
{
	struct msg_thread *m = arg;
	struct worker *mine = &workers[m->first];
	long i;

	for (i = 0; i < m->count; i++)
		hand_out(&mine[i]);
	while (now_ns() < end_ns) {
		uint32_t seen = atomic_load(&m->completions);

		for (i = 0; i < m->count; i++)
			if (atomic_load(&mine[i].state) == DONE)
				hand_out(&mine[i]);
		// sleep until a worker reports (or wake up now if one did since we looked)
		futex_wait(&m->completions, seen);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long work_us = argc > 3 ? atol(argv[3]) : 1000;
	uint64_t start, t;
	long i;
	pthread_t *tids, *msg_tids;

	nworkers = argc > 2 ? atol(argv[2]) : 0;
	nmsgs = argc > 4 ? atol(argv[4]) : 1;
	if (secs <= 0 || nworkers < 1 || work_us < 1 || nmsgs < 1 || nmsgs > nworkers) {
		fprintf(stderr, "usage: reqlat SECONDS WORKERS [WORK_US [MSG_THREADS]]  (WORKERS >= 1, WORK_US >= 1, "
				"default 1000; 1 <= MSG_THREADS <= WORKERS, default 1)\n");
		return 2;
	}
	work_loops = calibrate(work_us);
	cap = (long)(secs * 1e6 / work_us * 4) + 1000;
	workers = aligned_alloc(64, sizeof(*workers) * nworkers);
	msgs = aligned_alloc(64, sizeof(*msgs) * nmsgs);
	tids = calloc(nworkers, sizeof(*tids));
	msg_tids = calloc(nmsgs, sizeof(*msg_tids));
	wake_us = calloc(cap, sizeof(*wake_us));
	req_us = calloc(cap, sizeof(*req_us));
	if (!workers || !msgs || !tids || !msg_tids || !wake_us || !req_us) {
		perror("reqlat: alloc");
		return 1;
	}
	// the workers split as evenly as they go: message thread k has workers k*W/M .. (k+1)*W/M - 1
	for (i = 0; i < nmsgs; i++) {
		msgs[i] = (struct msg_thread){ .first = i * nworkers / nmsgs,
					       .count = (i + 1) * nworkers / nmsgs - i * nworkers / nmsgs };
		for (long j = msgs[i].first; j < msgs[i].first + msgs[i].count; j++)
			workers[j] = (struct worker){ .state = IDLE, .msg = &msgs[i] };
	}
	for (i = 0; i < nworkers; i++) {
		if (pthread_create(&tids[i], NULL, worker_main, &workers[i])) {
			perror("reqlat: pthread_create");
			return 1;
		}
	}
	start = now_ns();
	end_ns = start + (uint64_t)(secs * 1e9);
	for (i = 0; i < nmsgs; i++) {
		if (pthread_create(&msg_tids[i], NULL, msg_main, &msgs[i])) {
			perror("reqlat: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < nmsgs; i++)
		pthread_join(msg_tids[i], NULL);
	t = now_ns();
	for (i = 0; i < nworkers; i++) {
		atomic_store(&workers[i].state, QUIT);
		futex_wake(&workers[i].state, 1);
	}
	for (i = 0; i < nworkers; i++)
		pthread_join(tids[i], NULL);
	qsort(wake_us, nsamples, sizeof(*wake_us), cmp_u64);
	qsort(req_us, nsamples, sizeof(*req_us), cmp_u64);
	printf("requests=%ld rps=%.1f wake_p50=%llu wake_p99=%llu wake_p999=%llu req_p50=%llu req_p99=%llu "
	       "req_p999=%llu work_us=%ld workers=%ld msg_threads=%ld\n",
	       nsamples, nsamples / ((t - start) / 1e9), (unsigned long long)pct(wake_us, nsamples, 0.5),
	       (unsigned long long)pct(wake_us, nsamples, 0.99), (unsigned long long)pct(wake_us, nsamples, 0.999),
	       (unsigned long long)pct(req_us, nsamples, 0.5), (unsigned long long)pct(req_us, nsamples, 0.99),
	       (unsigned long long)pct(req_us, nsamples, 0.999), work_us, nworkers, nmsgs);
	return nsamples ? 0 : 1;
}
