// SPDX-License-Identifier: GPL-2.0
/*
 * The per-task counters as a table, built from the ABI's one list
 * (linux/memtrack_counters.h), so that memtrackd's families, memtrack-top's
 * columns and the records' text all follow the list and nothing else.
 */
#include "libmemtrack.h"

#define MEMTRACK_COUNTER(id, name, unit, metric, title, help)		\
	[MEMTRACK_CTR_##id] = { #name, MEMTRACK_UNIT_##unit, metric, title, help },
const struct mt_counter mt_counters[MEMTRACK_NR_COUNTERS] = {
#include <linux/memtrack_counters.h>
};
#undef MEMTRACK_COUNTER

const char *mt_counter_name(unsigned int idx)
{
	return idx < MEMTRACK_NR_COUNTERS ? mt_counters[idx].name : NULL;
}

bool mt_counter_signed(unsigned int idx)
{
	return idx < MEMTRACK_NR_COUNTERS &&
	       mt_counters[idx].unit == MEMTRACK_UNIT_NET_BYTES;
}

bool mt_counter_needs_module(unsigned int idx)
{
	return idx != MEMTRACK_CTR_MIN_FLT && idx != MEMTRACK_CTR_MAJ_FLT;
}
