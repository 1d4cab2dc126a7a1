// SPDX-License-Identifier: GPL-2.0
/*
 * vmscan:mm_vmscan_direct_reclaim_end passes (nr_reclaimed, memcg) (7.x);
 * before, (nr_reclaimed).
 */
#include <linux/mm.h>
#include <trace/events/vmscan.h>

static void probe(void *data, unsigned long nr_reclaimed,
		  struct mem_cgroup *memcg)
{
}

static void __used check(void)
{
	check_trace_callback_type_mm_vmscan_direct_reclaim_end(probe);
}
