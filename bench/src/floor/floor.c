// SPDX-License-Identifier: GPL-2.0
/*
 * scx_floor: loads the floor scheduler (floor.bpf.c, beside this binary as floor.bpf.o) and keeps it
 * attached until SIGINT or SIGTERM, as any sched_ext loader does; the kernel's scheduler takes over
 * again when it exits. Plain libbpf, no skeleton: the bench reads its programs' run time through this
 * process's file descriptors, as for every scheduler.
 *
 *   scx_floor [OBJECT]     (root, sched_ext kernel)
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* libbpf's info lines (struct_ops members this kernel lacks, left zero) are no news here */
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int exited(void)
{
	/* the kernel ejected the scheduler (an error, or sysrq-S): its state is no longer "enabled" */
	char state[32] = "";
	FILE *f = fopen("/sys/kernel/sched_ext/state", "r");

	if (!f)
		return 0;
	if (!fgets(state, sizeof(state), f))
		state[0] = 0;
	fclose(f);
	return strncmp(state, "enabled", 7) != 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], self[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_map *ops;
	struct bpf_link *link;
	ssize_t n;
	int err, waited = 0;

	if (argc > 2) {
		fprintf(stderr, "usage: scx_floor [OBJECT]\n");
		return 2;
	}
	if (argc == 2) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			perror("scx_floor: /proc/self/exe");
			return 1;
		}
		self[n] = 0;
		snprintf(path, sizeof(path), "%s/floor.bpf.o", dirname(self));
	}
	libbpf_set_print(print_warnings);
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "scx_floor: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "scx_floor: cannot load %s: %s\n", path, strerror(-err));
		return 1;
	}
	ops = bpf_object__find_map_by_name(obj, "floor_ops");
	link = ops ? bpf_map__attach_struct_ops(ops) : NULL;
	if (!link) {
		fprintf(stderr, "scx_floor: cannot attach floor_ops: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("scx_floor: attached\n");
	fflush(stdout);
	while (!stop) {
		usleep(100000);
		/* the state reads "enabling" for a moment after the attach */
		if (++waited > 50 && exited()) {
			fprintf(stderr, "scx_floor: the kernel disabled the scheduler\n");
			bpf_link__destroy(link);
			return 1;
		}
	}
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
