// SPDX-License-Identifier: GPL-2.0
/*
 * Each C allocator API leaks a known amount from its own function; a second
 * allocation of each is freed and must not be reported.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

void *volatile fixture_sink;

NOINLINE static void leak_malloc(void)
{
	for (int i = 0; i < 10; i++)
		fixture_sink = malloc(100);		/* LEAK(malloc): 10 x 100 */
	free(malloc(100));				/* FREED */
}

NOINLINE static void leak_calloc(void)
{
	for (int i = 0; i < 5; i++)
		fixture_sink = calloc(4, 64);		/* LEAK(calloc): 5 x 256 */
}

NOINLINE static void leak_realloc(void)
{
	void *p = malloc(10);				/* FREED (grown below) */

	p = realloc(p, 1000);				/* LEAK(realloc): 1 x 1000 */
	fixture_sink = p;
}

NOINLINE static void leak_reallocarray(void)
{
	fixture_sink = reallocarray(NULL, 7, 16);	/* LEAK(reallocarray): 1 x 112 */
}

NOINLINE static void leak_posix_memalign(void)
{
	void *p;

	if (!posix_memalign(&p, 64, 200))		/* LEAK(posix_memalign): 1 x 200 */
		fixture_sink = p;
}

NOINLINE static void leak_aligned_alloc(void)
{
	fixture_sink = aligned_alloc(128, 256);		/* LEAK(aligned_alloc): 1 x 256 */
}

NOINLINE static void leak_memalign(void)
{
	fixture_sink = memalign(32, 96);		/* LEAK(memalign): 1 x 96 */
}

NOINLINE static void leak_valloc(void)
{
	fixture_sink = valloc(300);			/* LEAK(valloc): 1 x 300 */
}

NOINLINE static void leak_pvalloc(void)
{
	fixture_sink = pvalloc(300);			/* LEAK(pvalloc): 1 x 4096 */
}

int main(void)
{
	fixture_wait("ready");
	leak_malloc();
	leak_calloc();
	leak_realloc();
	leak_reallocarray();
	leak_posix_memalign();
	leak_aligned_alloc();
	leak_memalign();
	leak_valloc();
	leak_pvalloc();
	fixture_wait("done");
	return 0;
}
