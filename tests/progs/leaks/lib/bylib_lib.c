// SPDX-License-Identifier: GPL-2.0
/*
 * libbylib.so, the shared object half of the bylib fixture: its own
 * allocations, so --by-lib can tell them from the program's.
 */
#include <stdlib.h>
#include "../common.h"

void *volatile lib_sink;

NOINLINE void lib_work(void)
{
	void *m[20], *c[8];
	int i;

	for (i = 0; i < 20; i++)
		m[i] = malloc(50);		/* LEAK(lib_malloc): 5 x 50 of 20 calls */
	for (i = 0; i < 8; i++)
		c[i] = calloc(4, 16);		/* LEAK(lib_calloc): 6 x 64 of 8 calls */
	for (i = 5; i < 20; i++)
		free(m[i]);			/* FREED */
	for (i = 6; i < 8; i++)
		free(c[i]);			/* FREED */
	for (i = 0; i < 5; i++)
		lib_sink = m[i];
	for (i = 0; i < 6; i++)
		lib_sink = c[i];
}
