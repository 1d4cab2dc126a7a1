// SPDX-License-Identifier: GPL-2.0
/*
 * Allocates all the time, from one line two calls below main, until it is
 * killed: the first report of an attach (memtrack-leak -p) must show that
 * line as one stack, whole down to main, from the first allocation traced.
 * Every block is kept (~32 bytes every 0.1 ms), so a stack taken at any
 * moment of the attach is still in the report.
 */
#include <stdlib.h>
#include <time.h>
#include "common.h"

void *volatile fixture_sink;

NOINLINE static void *busy_alloc(void)
{
	void *p = malloc(32);				/* BUSY */

	escape(p);		/* a call, not a tail jump: this frame stays */
	return p;
}

NOINLINE static void busy_round(void)
{
	fixture_sink = busy_alloc();
}

int main(void)
{
	struct timespec pause = { 0, 100000 };

	printf("ready\n");
	fflush(stdout);
	for (;;) {
		busy_round();
		nanosleep(&pause, NULL);
	}
}
