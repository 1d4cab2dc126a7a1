// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the monotonic clock (CLOCK_MONOTONIC) as one number, for
 * every deadline, timeout and age the library, libmemtrack-net, memtrackd
 * and the tools compute (libmemtrack.h).  Not for user/preload/, which runs
 * inside traced programs and does not link libmemtrack.
 */
#include <time.h>
#include "libmemtrack.h"

uint64_t mt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int64_t mt_mono_ms(void)
{
	return (int64_t)(mt_mono_ns() / 1000000);
}

double mt_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
