// SPDX-License-Identifier: GPL-2.0
// sleeper: a periodic SCHED_OTHER sleeper, the shape of an audio callback, a frame timer, an input or
// compositor tick: every PERIOD_US (on an absolute clock, the period's boundary) something wakes it, it
// does WORK_US of CPU work (calibrated on this CPU before the run; 0 for none) and sleeps again. SOURCE is
// what wakes it:
//   timer   its own clock_nanosleep to the boundary (an hrtimer in its own CPU's interrupt; cyclictest's
//           shape);
//   futex   a waker thread, pinned to WAKER_CPU (default the last CPU), sleeps to the boundary and wakes it
//           with FUTEX_WAKE;
//   pipe    the same waker writes a byte into a pipe the sleeper reads;
//   epoll   the same waker sends a datagram over loopback UDP to a socket the sleeper waits for in
//           epoll_wait (the wake-up comes from the network's softirq);
//   signal  the same waker sends SIGUSR1 to the sleeper's thread (tgkill), which waits in sigwaitinfo.
// The program does not pin the sleeper: the bench runs it under taskset, with its hogs on the same CPU and the
// waker on another, because on an emulated machine with one host thread for all vCPUs a wake-up for a busy
// vCPU that is not the one running waits for its turn, whatever the scheduler does.
// Its timer slack is 1 ns (see main), so that a timer's lateness is the wake-up's, not the kernel's batching.
// Measured per period:
//   wake-up latency  from the boundary (timer) or from the waker's call (the others: its timestamp just
//                    before the system call) to the sleeper running again (µs);
//   missed           periods without an on-time wake-up: the sleeper was not back asleep when the
//                    boundary came (its work, or its wait for a CPU, ran past it) or the waker was so late
//                    that it skipped the boundary. A late sleeper resumes at the next boundary after it is
//                    done; it never catches up in a burst.
// Prints "samples=N periods=P missed=M p50=.. p99=.. p999=.. max=.. waker_p50=.. waker_p99=.. [cpuK_n=..
// cpuK_p50=.. cpuK_p99=..]... source=.. period_us=.. work_us=..": latencies in µs, waker_* how late the
// waker itself ran after the boundary (0 for timer), and per CPU the sleeper woke on its samples' count,
// p50 and p99 (on an emulated machine with one host thread for all vCPUs, which vCPU a wake-up lands on
// can decide its figure).
//   sleeper SECONDS PERIOD_US WORK_US timer|futex|pipe|epoll|signal [WAKER_CPU]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

enum source { TIMER, FUTEX, PIPE, EPOLL, SIGNAL };
static const char *const source_names[] = { "timer", "futex", "pipe", "epoll", "signal" };

#define RING 1024 // the waker's recent post times, by event number

static enum source source;
static uint64_t period_ns, start_ns, end_ns, work_loops;
static long nperiods;
static _Atomic uint32_t seq;	  // the last event posted (futex word for FUTEX)
static _Atomic int quit;
static uint64_t post_ns[RING];	  // when event k was posted (waker's timestamp before its system call)
static uint64_t *waker_late_us;
static long nwaker;
static int pipefd[2], udp_rx = -1, udp_tx = -1, epfd = -1;
static struct sockaddr_in udp_addr;
static pid_t sleeper_tid;
static int waker_cpu;

static uint64_t *lat_us;
static int *lat_cpu;
static long nsamples;

static void sleep_until(uint64_t t)
{
	struct timespec at = { .tv_sec = t / 1000000000ull, .tv_nsec = t % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
}

// The first boundary strictly after @t.
static uint64_t next_boundary(uint64_t t)
{
	return t < start_ns ? start_ns : start_ns + ((t - start_ns) / period_ns + 1) * period_ns;
}

static void post(void)
{
	static const char byte = 1;

	switch (source) {
	case FUTEX:
		syscall(SYS_futex, &seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		break;
	case PIPE:
		if (write(pipefd[1], &byte, 1) < 0 && errno != EAGAIN)
			perror("sleeper: write");
		break;
	case EPOLL:
		sendto(udp_tx, &byte, 1, 0, (struct sockaddr *)&udp_addr, sizeof(udp_addr));
		break;
	case SIGNAL:
		syscall(SYS_tgkill, getpid(), sleeper_tid, SIGUSR1);
		break;
	case TIMER:
		break;
	}
}

static void *waker_main(void *arg)
{
	cpu_set_t set;
	uint64_t b = start_ns;
	uint32_t k = 0;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(waker_cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (b < end_ns) {
		uint64_t t;

		sleep_until(b);
		t = now_ns();
		if (nwaker < nperiods + 1)
			waker_late_us[nwaker++] = (t - b) / 1000;
		post_ns[++k % RING] = t;
		atomic_store(&seq, k);
		post();
		b = next_boundary(now_ns()); // a waker late past a boundary skips it
	}
	atomic_store(&quit, 1);
	atomic_fetch_add(&seq, 1);
	post();
	return NULL;
}

// Block until the waker's next event may be there (spurious returns are fine: the caller reads seq).
static void wait_event(uint32_t seen)
{
	char buf[256];
	struct epoll_event ev;
	sigset_t usr1;
	siginfo_t si;

	switch (source) {
	case FUTEX:
		syscall(SYS_futex, &seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
		break;
	case PIPE:
		if (read(pipefd[0], buf, sizeof(buf)) < 0 && errno != EINTR)
			perror("sleeper: read");
		break;
	case EPOLL:
		if (epoll_wait(epfd, &ev, 1, -1) > 0)
			while (recv(udp_rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
		break;
	case SIGNAL:
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigwaitinfo(&usr1, &si);
		break;
	case TIMER:
		break;
	}
}

// Drain what the waker posted while the sleeper was busy, so that the next wait blocks.
static void drain(void)
{
	char buf[256];
	sigset_t usr1;
	struct timespec zero = { 0, 0 };
	int n;

	switch (source) {
	case PIPE: // the read end blocks (a pipe's wait as its users have it): take only what is there
		while (!ioctl(pipefd[0], FIONREAD, &n) && n > 0 && read(pipefd[0], buf, sizeof(buf)) > 0)
			;
		break;
	case EPOLL:
		while (recv(udp_rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		break;
	case SIGNAL:
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		while (sigtimedwait(&usr1, NULL, &zero) > 0)
			;
		break;
	default:
		break;
	}
}

static void record(uint64_t woke, uint64_t from)
{
	if (nsamples < nperiods + 1) {
		lat_us[nsamples] = woke > from ? (woke - from) / 1000 : 0;
		lat_cpu[nsamples] = sched_getcpu();
		nsamples++;
	}
}

static void run_timer(void)
{
	uint64_t b = start_ns;

	while (b < end_ns) {
		sleep_until(b);
		record(now_ns(), b);
		if (work_loops)
			spin(work_loops);
		b = next_boundary(now_ns());
	}
}

static void run_event(void)
{
	uint32_t last = 0;
	uint64_t ready = now_ns(), woke; // ready: when the sleeper was done with its last period

	for (;;) {
		uint32_t s;

		while ((s = atomic_load(&seq)) == last && !atomic_load(&quit))
			wait_event(last);
		woke = now_ns();
		if (atomic_load(&quit))
			return;
		// an event posted before the sleeper was back waiting found it busy: no wake-up, a missed period
		if (post_ns[s % RING] >= ready)
			record(woke, post_ns[s % RING]);
		last = s;
		if (work_loops)
			spin(work_loops);
		ready = now_ns();
		drain();
	}
}

static int setup_source(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len = sizeof(udp_addr);

	switch (source) {
	case PIPE:
		return pipe(pipefd);
	case EPOLL:
		udp_rx = socket(AF_INET, SOCK_DGRAM, 0);
		udp_tx = socket(AF_INET, SOCK_DGRAM, 0);
		udp_addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (udp_rx < 0 || udp_tx < 0 || bind(udp_rx, (struct sockaddr *)&udp_addr, sizeof(udp_addr)) ||
		    getsockname(udp_rx, (struct sockaddr *)&udp_addr, &len))
			return -1;
		epfd = epoll_create1(0);
		ev.data.fd = udp_rx;
		return epfd < 0 ? -1 : epoll_ctl(epfd, EPOLL_CTL_ADD, udp_rx, &ev);
	default:
		return 0;
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long period_us = argc > 2 ? atol(argv[2]) : 0, work_us = argc > 3 ? atol(argv[3]) : -1, ncpu, i;
	const char *src = argc > 4 ? argv[4] : "";
	sigset_t usr1;
	pthread_t waker;
	uint64_t *sorted, *mine;

	for (source = TIMER; source <= SIGNAL; source++)
		if (!strcmp(src, source_names[source]))
			break;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	waker_cpu = argc > 5 ? atoi(argv[5]) : (int)ncpu - 1;
	if (secs <= 0 || period_us < 1 || work_us < 0 || work_us >= period_us || source > SIGNAL || waker_cpu < 0 ||
	    waker_cpu >= ncpu) {
		fprintf(stderr, "usage: sleeper SECONDS PERIOD_US WORK_US timer|futex|pipe|epoll|signal [WAKER_CPU]  "
				"(0 <= WORK_US < PERIOD_US; WAKER_CPU default the last CPU)\n");
		return 2;
	}
	// The kernel lets a SCHED_OTHER thread's timer fire up to its timer slack late (by default 50 us) to
	// batch wake-ups; that lateness is the same under every scheduler and would hide the scheduler's part.
	// The slack is set to 1 ns, as cyclictest does, before the waker thread is created (it inherits it).
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0)) {
		perror("sleeper: PR_SET_TIMERSLACK");
		return 1;
	}
	period_ns = (uint64_t)period_us * 1000;
	work_loops = work_us ? calibrate(work_us) : 0;
	nperiods = (long)(secs * 1e9 / period_ns);
	lat_us = calloc(nperiods + 1, sizeof(*lat_us));
	lat_cpu = calloc(nperiods + 1, sizeof(*lat_cpu));
	waker_late_us = calloc(nperiods + 1, sizeof(*waker_late_us));
	sorted = calloc(nperiods + 1, sizeof(*sorted));
	if (!lat_us || !lat_cpu || !waker_late_us || !sorted) {
		perror("sleeper: alloc");
		return 1;
	}
	if (setup_source()) {
		perror("sleeper: setting up the wake source");
		return 1;
	}
	// SIGUSR1 blocked in every thread: it is taken only by the sleeper's sigwaitinfo
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	sleeper_tid = syscall(SYS_gettid);
	start_ns = now_ns() + period_ns + 20 * 1000 * 1000; // the waker is up and pinned before the first boundary
	end_ns = start_ns + (uint64_t)nperiods * period_ns;
	if (source == TIMER) {
		run_timer();
	} else {
		if (pthread_create(&waker, NULL, waker_main, NULL)) {
			perror("sleeper: pthread_create");
			return 1;
		}
		run_event();
		pthread_join(waker, NULL);
	}

	memcpy(sorted, lat_us, nsamples * sizeof(*sorted));
	qsort(sorted, nsamples, sizeof(*sorted), cmp_u64);
	printf("samples=%ld periods=%ld missed=%ld p50=%llu p99=%llu p999=%llu max=%llu", nsamples, nperiods,
	       nperiods - nsamples, (unsigned long long)pct(sorted, nsamples, 0.5),
	       (unsigned long long)pct(sorted, nsamples, 0.99), (unsigned long long)pct(sorted, nsamples, 0.999),
	       (unsigned long long)pct(sorted, nsamples, 1.0));
	qsort(waker_late_us, nwaker, sizeof(*waker_late_us), cmp_u64);
	printf(" waker_p50=%llu waker_p99=%llu", (unsigned long long)pct(waker_late_us, nwaker, 0.5),
	       (unsigned long long)pct(waker_late_us, nwaker, 0.99));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		long n = 0;

		mine = sorted;
		for (i = 0; i < nsamples; i++)
			if (lat_cpu[i] == cpu)
				mine[n++] = lat_us[i];
		if (!n)
			continue;
		qsort(mine, n, sizeof(*mine), cmp_u64);
		printf(" cpu%d_n=%ld cpu%d_p50=%llu cpu%d_p99=%llu", cpu, n, cpu, (unsigned long long)pct(mine, n, 0.5),
		       cpu, (unsigned long long)pct(mine, n, 0.99));
	}
	printf(" source=%s period_us=%ld work_us=%ld\n", source_names[source], period_us, work_us);
	return nsamples ? 0 : 1;
}
