// SPDX-License-Identifier: GPL-2.0
/*
 * vmscan:mm_vmscan_direct_reclaim_begin passes (gfp, order, memcg) (7.x);
 * before, (order, gfp).
 */
#include <linux/mm.h>
#include <trace/events/vmscan.h>

static void probe(void *data, gfp_t gfp, int order, struct mem_cgroup *memcg)
{
}

static void __used check(void)
{
	check_trace_callback_type_mm_vmscan_direct_reclaim_begin(probe);
}
