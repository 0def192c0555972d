/* SPDX-License-Identifier: GPL-2.0 */
/* yielder: calls sched_yield() in a loop forever (the in-guest test of --yield-type). */
#include <sched.h>

int main(void)
{
	for (;;)
		sched_yield();
}
