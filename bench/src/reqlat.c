// SPDX-License-Identifier: GPL-2.0
// reqlat: a request/worker latency probe, the shape sched_ext latency work is judged by (schbench-like).
// MSG_THREADS message threads (default 1) each hand requests to their share of WORKERS worker threads;
// each request is a fixed WORK_US of CPU work (calibrated before the threads start: a loop timed on this
// CPU). Two modes:
//
// Closed loop (RATE absent or 0): a worker that finishes reports back and its message thread hands it the
// next request at once, so with more workers than CPUs the machine stays saturated. Measured per request:
//   wake latency    from the message thread waking the worker to the worker running (µs);
//   request latency from handing the request out to its work being done (µs): wake-up, the work, and
//                   every time the worker was preempted or waited for a CPU in between.
// Prints "requests=N rps=X wake_p50=.. wake_p99=.. wake_p999=.. req_p50=.. req_p99=.. req_p999=.." (µs).
//
// Open loop (RATE > 0 requests per second in all, ARRIVAL burst, even or poisson): requests arrive at a fixed
// rate whatever the workers do, each message thread its share of RATE: "burst" posts each second's requests
// at once at the start of the second (schbench -R's shape), "even" spaces them evenly (the message threads'
// arrivals interleaved; with requests shorter than the gap no two ever overlap), "poisson" at exponential
// gaps (a Poisson process, the usual model of independent clients; the same seeded sequence every run). A posted request waits in its message thread's queue (FIFO) until one of that
// thread's workers takes it; a worker with nothing queued sleeps until a post wakes it. Arrivals stop after
// SECONDS; the queues are then drained, so no late request is left out. Measured:
//   wake latency     from a post waking an idle worker to that worker running (µs; only wake-ups);
//   request latency  (service) from a worker starting on the request to its work being done (µs);
//   response latency from the request's arrival (its nominal time) to its work being done (µs): the wait
//                    in the queue as well.
// Prints "requests=N rps=X rate=R wake_p50=.. wake_p99=.. wake_p999=.. req_p50=.. req_p99=.. req_p999=..
// resp_p50=.. resp_p99=.. resp_p999=.." (µs), rps over the arrivals' window, or to the last request done
// when that came later.
//   reqlat SECONDS WORKERS [WORK_US [MSG_THREADS [RATE burst|even|poisson]]]
// With REQLAT_DUMP=FILE in the environment it also writes every sample to FILE, one line each, in
// CLOCK_MONOTONIC ns (the kernel trace's `mono` clock), so that a trace can say where each wake-up waited:
//   closed loop "req TID HANDED STARTED DONE"; open loop "wake TID WOKEN_AT WOKE" and "req TID STARTED DONE".
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>
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
static uint64_t work_loops, end_ns, start_ns_open;
static long work_us_open;
static uint64_t *wake_us, *req_us;
static long nsamples, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

// REQLAT_DUMP: every sample's thread and times, written at the end (nothing is written while measuring)
struct dump_rec {
	uint64_t a, b, c;
	int tid;
	char kind; // 'r' closed-loop request, 'w' open-loop wake-up, 'q' open-loop request
};
static struct dump_rec *dump;
static long ndump, dump_cap;

static void dump_add(char kind, int tid, uint64_t a, uint64_t b, uint64_t c)
{
	if (dump && ndump < dump_cap)
		dump[ndump++] = (struct dump_rec){ .a = a, .b = b, .c = c, .tid = tid, .kind = kind };
}

static void dump_write(void)
{
	const char *path = getenv("REQLAT_DUMP");
	FILE *f;

	if (!dump || !path || !(f = fopen(path, "w")))
		return;
	for (long i = 0; i < ndump; i++) {
		struct dump_rec *d = &dump[i];

		if (d->kind == 'r')
			fprintf(f, "req %d %llu %llu %llu\n", d->tid, (unsigned long long)d->a, (unsigned long long)d->b,
				(unsigned long long)d->c);
		else if (d->kind == 'w')
			fprintf(f, "wake %d %llu %llu\n", d->tid, (unsigned long long)d->a, (unsigned long long)d->b);
		else
			fprintf(f, "req %d %llu %llu\n", d->tid, (unsigned long long)d->a, (unsigned long long)d->b);
	}
	fclose(f);
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

// The workers go by this name (their comm), so that the bench finds them to sample their CPU time
// (bench/vrqbench/service.py); the message threads by MSG_NAME.
#define WORKER_NAME "reqlat-worker"
#define MSG_NAME "reqlat-msg"

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t started, done;
	uint32_t s;
	int tid = gettid();

	pthread_setname_np(pthread_self(), WORKER_NAME);
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
		dump_add('r', tid, w->handed_at, started, done);
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

	pthread_setname_np(pthread_self(), MSG_NAME);
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

// ---- open loop ----

// One message thread's queue of pending requests (their arrival times) and its idle workers.
struct open_queue {
	pthread_mutex_t lock;
	uint64_t *arrival;   // arrival[head .. tail - 1] are pending
	long head, tail, cap;
	long *idle, nidle;   // indices (into oworkers) of workers asleep waiting for a post
	long first, count;   // its workers: oworkers[first .. first + count - 1]
	double rate;         // its arrivals per second
	double phase;        // its first even arrival, in inter-arrival times
	long next_j;         // even: its next arrival's number
	double next_ns;      // poisson: its last arrival, ns after the start
	uint64_t rng;        // poisson: its generator's state
	int quit;
};

struct open_worker {
	_Atomic uint32_t state; // SLEEPING, or AWAKE once a post (or the end) woke it
	uint64_t woken_at;      // when the post woke it (0: woken by the end of the run)
	struct open_queue *q;
	long index;
	char pad[32];
};

enum { SLEEPING, AWAKE };

static struct open_queue *oqueues;
static struct open_worker *oworkers;
static uint64_t *resp_us, *owake_us;
static long nowake;
static uint64_t last_done_ns;
enum { BURST, EVEN, POISSON };
static int arrival_mode;

static void sleep_until(uint64_t t)
{
	struct timespec at = { .tv_sec = t / 1000000000ull, .tv_nsec = t % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
}

// Queue @n requests that arrived at arrival[0 .. n - 1] and wake as many idle workers (at most @n).
static void post_requests(struct open_queue *q, const uint64_t *arrival, long n)
{
	struct open_worker *wake[64];
	long nwake = 0, i;
	uint64_t t;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < n && q->tail < q->cap; i++)
		q->arrival[q->tail++] = arrival[i];
	t = now_ns();
	while (nwake < n && nwake < 64 && q->nidle > 0) {
		struct open_worker *w = &oworkers[q->idle[--q->nidle]];

		w->woken_at = t;
		atomic_store(&w->state, AWAKE);
		wake[nwake++] = w;
	}
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < nwake; i++)
		futex_wake(&wake[i]->state, 1);
}

// The queue's next arrival (ns, absolute) for even and poisson arrivals: even, arrival j at (j + phase) / rate
// seconds; poisson, exponential gaps of mean 1 / rate drawn from a generator seeded by the message thread's
// number, so that every run and every scheduler gets the same arrivals.
static uint64_t next_arrival(struct open_queue *q)
{
	double gap = 1e9 / q->rate;

	if (arrival_mode == EVEN)
		return start_ns_open + (uint64_t)((q->next_j++ + q->phase) * gap);
	// xorshift64*, its top 53 bits as a uniform in (0, 1]
	q->rng ^= q->rng >> 12;
	q->rng ^= q->rng << 25;
	q->rng ^= q->rng >> 27;
	q->next_ns += -log(((q->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 + 0x1p-54) * gap;
	return start_ns_open + (uint64_t)q->next_ns;
}

static void *open_msg_main(void *arg)
{
	struct open_queue *q = arg;
	uint64_t *batch;
	long room = (long)q->rate + 2;

	pthread_setname_np(pthread_self(), MSG_NAME);
	batch = calloc(room > 64 ? room : 64, sizeof(*batch));
	if (!batch)
		return NULL;
	if (arrival_mode == BURST) {
		// second s gets floor((s + 1) * rate) - floor(s * rate) arrivals, all at its start
		for (long s = 0;; s++) {
			uint64_t t = start_ns_open + (uint64_t)s * 1000000000ull;
			long n = (long)((s + 1) * q->rate) - (long)(s * q->rate);

			if (t >= end_ns)
				break;
			sleep_until(t);
			for (long i = 0; i < n; i++)
				batch[i] = t;
			post_requests(q, batch, n);
		}
	} else {
		// even or poisson: a late message thread posts every arrival due, each with its own time
		uint64_t t = next_arrival(q), now;

		while (t < end_ns) {
			long n = 0;

			sleep_until(t);
			now = now_ns();
			for (; n < 64 && t <= now && t < end_ns; n++, t = next_arrival(q))
				batch[n] = t;
			post_requests(q, batch, n);
		}
	}
	free(batch);
	return NULL;
}

static void *open_worker_main(void *arg)
{
	struct open_worker *w = arg;
	struct open_queue *q = w->q;
	uint64_t arrival, started, done, woke;
	int tid = gettid();

	pthread_setname_np(pthread_self(), WORKER_NAME);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (q->head < q->tail) {
			arrival = q->arrival[q->head++];
			pthread_mutex_unlock(&q->lock);
			started = now_ns();
			spin(work_loops);
			done = now_ns();
			pthread_mutex_lock(&lock);
			if (nsamples < cap) {
				req_us[nsamples] = (done - started) / 1000;
				resp_us[nsamples] = done > arrival ? (done - arrival) / 1000 : 0;
				nsamples++;
			}
			if (done > last_done_ns)
				last_done_ns = done;
			dump_add('q', tid, started, done, 0);
			pthread_mutex_unlock(&lock);
			pthread_mutex_lock(&q->lock);
			continue;
		}
		if (q->quit)
			break;
		q->idle[q->nidle++] = w->index;
		atomic_store(&w->state, SLEEPING);
		pthread_mutex_unlock(&q->lock);
		while (atomic_load(&w->state) == SLEEPING)
			futex_wait(&w->state, SLEEPING);
		woke = now_ns();
		pthread_mutex_lock(&q->lock);
		if (w->woken_at) {
			pthread_mutex_lock(&lock);
			if (nowake < cap)
				owake_us[nowake++] = (woke - w->woken_at) / 1000;
			dump_add('w', tid, w->woken_at, woke, 0);
			pthread_mutex_unlock(&lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static int run_open(double secs, double rate)
{
	uint64_t start, t;
	pthread_t *tids, *msg_tids;
	long i;

	oqueues = calloc(nmsgs, sizeof(*oqueues));
	oworkers = aligned_alloc(64, sizeof(*oworkers) * nworkers);
	tids = calloc(nworkers, sizeof(*tids));
	msg_tids = calloc(nmsgs, sizeof(*msg_tids));
	resp_us = calloc(cap, sizeof(*resp_us));
	owake_us = calloc(cap, sizeof(*owake_us));
	if (!oqueues || !oworkers || !tids || !msg_tids || !resp_us || !owake_us) {
		perror("reqlat: alloc");
		return 1;
	}
	for (i = 0; i < nmsgs; i++) {
		struct open_queue *q = &oqueues[i];

		pthread_mutex_init(&q->lock, NULL);
		q->first = i * nworkers / nmsgs;
		q->count = (i + 1) * nworkers / nmsgs - q->first;
		q->rate = rate / nmsgs;
		q->phase = (double)i / nmsgs;
		q->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		q->cap = (long)(q->rate * secs) + 64;
		q->arrival = calloc(q->cap, sizeof(*q->arrival));
		q->idle = calloc(q->count, sizeof(*q->idle));
		if (!q->arrival || !q->idle) {
			perror("reqlat: alloc");
			return 1;
		}
		for (long j = q->first; j < q->first + q->count; j++)
			oworkers[j] = (struct open_worker){ .state = AWAKE, .q = q, .index = j };
	}
	for (i = 0; i < nworkers; i++) {
		if (pthread_create(&tids[i], NULL, open_worker_main, &oworkers[i])) {
			perror("reqlat: pthread_create");
			return 1;
		}
	}
	start = now_ns() + 20 * 1000 * 1000; // every worker asleep in its queue before the first arrival
	start_ns_open = start;
	end_ns = start + (uint64_t)(secs * 1e9);
	for (i = 0; i < nmsgs; i++) {
		if (pthread_create(&msg_tids[i], NULL, open_msg_main, &oqueues[i])) {
			perror("reqlat: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < nmsgs; i++)
		pthread_join(msg_tids[i], NULL);
	// arrivals are over: each queue drains, then its workers go
	for (i = 0; i < nmsgs; i++) {
		struct open_queue *q = &oqueues[i];
		long n;

		pthread_mutex_lock(&q->lock);
		q->quit = 1;
		for (n = q->nidle; n > 0; n--) {
			struct open_worker *w = &oworkers[q->idle[n - 1]];

			w->woken_at = 0;
			atomic_store(&w->state, AWAKE);
			futex_wake(&w->state, 1);
		}
		q->nidle = 0;
		pthread_mutex_unlock(&q->lock);
	}
	for (i = 0; i < nworkers; i++)
		pthread_join(tids[i], NULL);
	// over the arrivals' window, or to the last request done when the queues drained later
	t = last_done_ns > end_ns ? last_done_ns : end_ns;
	qsort(owake_us, nowake, sizeof(*owake_us), cmp_u64);
	qsort(req_us, nsamples, sizeof(*req_us), cmp_u64);
	qsort(resp_us, nsamples, sizeof(*resp_us), cmp_u64);
	printf("requests=%ld rps=%.1f rate=%.2f wake_p50=%llu wake_p99=%llu wake_p999=%llu wakeups=%ld req_p50=%llu "
	       "req_p99=%llu req_p999=%llu resp_p50=%llu resp_p99=%llu resp_p999=%llu work_us=%llu workers=%ld "
	       "msg_threads=%ld arrival=%s\n",
	       nsamples, nsamples / ((t - start) / 1e9), rate, (unsigned long long)pct(owake_us, nowake, 0.5),
	       (unsigned long long)pct(owake_us, nowake, 0.99), (unsigned long long)pct(owake_us, nowake, 0.999),
	       nowake, (unsigned long long)pct(req_us, nsamples, 0.5), (unsigned long long)pct(req_us, nsamples, 0.99),
	       (unsigned long long)pct(req_us, nsamples, 0.999), (unsigned long long)pct(resp_us, nsamples, 0.5),
	       (unsigned long long)pct(resp_us, nsamples, 0.99), (unsigned long long)pct(resp_us, nsamples, 0.999),
	       (unsigned long long)work_us_open, nworkers, nmsgs,
	       arrival_mode == BURST ? "burst" : arrival_mode == EVEN ? "even" : "poisson");
	return nsamples ? 0 : 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long work_us = argc > 3 ? atol(argv[3]) : 1000;
	uint64_t start, t;
	long i;
	pthread_t *tids, *msg_tids;

	double rate = argc > 5 ? atof(argv[5]) : 0;
	const char *arrival = argc > 6 ? argv[6] : "burst";

	nworkers = argc > 2 ? atol(argv[2]) : 0;
	nmsgs = argc > 4 ? atol(argv[4]) : 1;
	arrival_mode = !strcmp(arrival, "burst") ? BURST : !strcmp(arrival, "even") ? EVEN
		     : !strcmp(arrival, "poisson") ? POISSON : -1;
	if (secs <= 0 || nworkers < 1 || work_us < 1 || nmsgs < 1 || nmsgs > nworkers || rate < 0 ||
	    arrival_mode < 0) {
		fprintf(stderr, "usage: reqlat SECONDS WORKERS [WORK_US [MSG_THREADS [RATE burst|even|poisson]]]  (WORKERS >= 1, "
				"WORK_US >= 1, default 1000; 1 <= MSG_THREADS <= WORKERS, default 1; RATE requests/s in "
				"all, open loop; 0 or absent: closed loop)\n");
		return 2;
	}
	work_loops = calibrate(work_us);
	cap = (long)(secs * 1e6 / work_us * 4) + 1000;
	if (getenv("REQLAT_DUMP")) {
		dump_cap = 3 * (rate > 0 ? (long)(rate * secs) + 1000 : cap);
		dump = calloc(dump_cap, sizeof(*dump));
	}
	if (rate > 0) {
		cap = (long)(rate * secs) + 1000;
		req_us = calloc(cap, sizeof(*req_us));
		if (!req_us) {
			perror("reqlat: alloc");
			return 1;
		}
		work_us_open = work_us;
		int rc = run_open(secs, rate);

		dump_write();
		return rc;
	}
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
	dump_write();
	return nsamples ? 0 : 1;
}
