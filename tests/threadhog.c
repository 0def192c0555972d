/* SPDX-License-Identifier: GPL-2.0 */
/* threadhog N: one process with N CPU-bound threads (the in-guest test of --group-accounting thread). */
#include <pthread.h>
#include <stdlib.h>

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		x++;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, i;
	pthread_t t;

	for (i = 1; i < n; i++)
		pthread_create(&t, NULL, spin, NULL);
	spin(NULL);
	return 0;
}
