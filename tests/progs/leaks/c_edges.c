// SPDX-License-Identifier: GPL-2.0
/*
 * Edge cases: a realloc chain (only the last block is outstanding), a failed
 * realloc (the old block stays), malloc(0), a large mmap-backed allocation,
 * and a block allocated before the tracer attached and freed after it (not
 * reported).
 */
#include <stdint.h>
#include <stdlib.h>
#include "common.h"

void *volatile fixture_sink;

NOINLINE static void realloc_chain(void)
{
	char *p = malloc(16);				/* FREED */

	for (int i = 1; i <= 8; i++)
		p = realloc(p, 16 << i);		/* LEAK(realloc_chain): 1 x 4096 */
	fixture_sink = p;
}

NOINLINE static void failed_realloc(void)
{
	void *p = malloc(500);				/* LEAK(failed_realloc): 1 x 500 */
	void *q = realloc(p, SIZE_MAX / 2);		/* fails: p stays */

	fixture_sink = q ? q : p;
}

NOINLINE static void zero_malloc(void)
{
	fixture_sink = malloc(0);			/* LEAK(malloc0): 1 x 0 */
}

NOINLINE static void large(void)
{
	fixture_sink = malloc(8 << 20);			/* LEAK(large): 1 x 8388608 */
}

int main(void)
{
	void *before = malloc(777);			/* FREED (before attach) */

	fixture_wait("ready");
	realloc_chain();
	failed_realloc();
	zero_malloc();
	large();
	free(before);
	fixture_wait("done");
	return 0;
}
