/* SPDX-License-Identifier: GPL-2.0 */
/* The fixtures' protocol: "ready", wait for a line, work, "done", wait. */
#ifndef LEAKS_COMMON_H
#define LEAKS_COMMON_H

#include <stdio.h>

static inline void fixture_wait(const char *say)
{
	char line[64];

	printf("%s\n", say);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
}

/* Keep the compiler from eliding allocations or inlining leak sites away. */
#define NOINLINE __attribute__((noinline))
extern void *volatile fixture_sink;

/* The compiler must assume p is used: -O2 deletes unused allocations. */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "g"(p) : "memory");
}

#endif
