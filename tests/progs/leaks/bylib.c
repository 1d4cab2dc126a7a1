// SPDX-License-Identifier: GPL-2.0
/*
 * bylib: allocations from the program and from its shared library
 * (lib/bylib_lib.c, libbylib.so next to it), some freed, for --by-lib:
 *   bylib        malloc: 10 calls of 100 bytes, 6 left, and 5 of 40
 *                        bytes from a line whose blocks are all freed;
 *                calloc: 3 calls of 32 bytes, all left;
 *   libbylib.so  malloc: 20 calls of 50 bytes, 5 left;
 *                calloc: 8 calls of 4 x 16 bytes, 6 left.
 * Calls from a stack with no block left count too (LEAK_STACKS with
 * LEAK_ALL).
 */
#include <stdlib.h>
#include "common.h"

void *volatile fixture_sink;
void lib_work(void);

NOINLINE static void main_work(void)
{
	void *m[10], *c[3];
	int i;

	for (i = 0; i < 10; i++)
		m[i] = malloc(100);		/* LEAK(main_malloc): 6 x 100 of 10 calls */
	for (i = 0; i < 3; i++)
		c[i] = calloc(1, 32);		/* LEAK(main_calloc): 3 x 32 of 3 calls */
	for (i = 6; i < 10; i++)
		free(m[i]);			/* FREED */
	for (i = 0; i < 6; i++)
		fixture_sink = m[i];
	for (i = 0; i < 3; i++)
		fixture_sink = c[i];
}

NOINLINE static void churn(void)
{
	for (int i = 0; i < 5; i++) {
		void *p = malloc(40);		/* LEAK(main_churn): 0 x 40 of 5 calls */

		escape(p);
		free(p);			/* FREED */
	}
}

int main(void)
{
	fixture_wait("ready");
	main_work();
	churn();
	lib_work();
	fixture_wait("done");
	return 0;
}
