// SPDX-License-Identifier: GPL-2.0
/*
 * libdlleak.so, which the dlopen fixture loads only after the tracer has
 * attached: its leaks' callers are found only if the tracer sends the
 * unwind table of a mapping that appeared after the attach.
 */
#include <stdlib.h>
#include "../common.h"

void *volatile fixture_sink;

NOINLINE void dl_leak(void)
{
	for (int i = 0; i < 3; i++)
		escape(fixture_sink = malloc(96));	/* LEAK(dl_leak): 3 x 96 */
}
