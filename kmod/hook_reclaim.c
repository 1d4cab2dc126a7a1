// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim: direct-reclaim stalls per task (count and time between the
 * begin/end tracepoints) and what reclaim scanned, reclaimed and found dirty
 * or under writeback, system-wide.
 */
#include <linux/mm.h>
#include <linux/vmstat.h>
#include <linux/timekeeping.h>
#include <trace/events/vmscan.h>
#include "mtr.h"
#include "compat.h"

static void mtr_reclaim_begin(void)
{
	struct mtr_thread *t = mtr_current();

	if (t)
		WRITE_ONCE(t->reclaim_start_ns, ktime_get_ns());
}

/* Every end is a stall, whether or not we saw its task begin. */
static void mtr_reclaim_end(unsigned long nr_reclaimed)
{
	struct mtr_thread *t = mtr_current();
	u64 start, ns;

	mtr_total_add(reclaim_stalls, 1);
	if (!t)
		return;
	start = READ_ONCE(t->reclaim_start_ns);
	if (!start)
		return;
	ns = ktime_get_ns() - start;
	WRITE_ONCE(t->reclaim_start_ns, 0);
	mtr_total_add(reclaim_ns, ns);
	mtr_count(t, MTR_C_RECLAIM_STALLS, 1);
	mtr_count(t, MTR_C_RECLAIM_NS, ns);
	mtr_ev_reclaim(ns, nr_reclaimed);
}

static void mtr_shrink_inactive(unsigned long nr_scanned,
				unsigned long nr_reclaimed,
				struct reclaim_stat *stat)
{
	mtr_total_add(reclaim_scanned, nr_scanned);
	mtr_total_add(reclaim_reclaimed, nr_reclaimed);
	mtr_total_add(reclaim_dirty, stat->nr_dirty);
	mtr_total_add(reclaim_writeback, stat->nr_writeback);
}

MTR_TP_PROBE(reclaim_begin, (MTR_RECLAIM_BEGIN_PROTO), ())
MTR_TP_PROBE(reclaim_end, (MTR_RECLAIM_END_PROTO), (nr_reclaimed))
MTR_TP_PROBE(shrink_inactive, (int nid, unsigned long nr_scanned,
			       unsigned long nr_reclaimed,
			       struct reclaim_stat *stat, int priority, int file),
	     (nr_scanned, nr_reclaimed, stat))

static void __used mtr_reclaim_check_types(void)
{
	check_trace_callback_type_mm_vmscan_direct_reclaim_begin(mtr_probe_reclaim_begin);
	check_trace_callback_type_mm_vmscan_direct_reclaim_end(mtr_probe_reclaim_end);
	check_trace_callback_type_mm_vmscan_lru_shrink_inactive(mtr_probe_shrink_inactive);
}

static struct mtr_tracepoint mtr_reclaim_tps[] = {
	{ .name = "mm_vmscan_direct_reclaim_begin", .probe = mtr_probe_reclaim_begin },
	{ .name = "mm_vmscan_direct_reclaim_end", .probe = mtr_probe_reclaim_end },
	{ .name = "mm_vmscan_lru_shrink_inactive", .probe = mtr_probe_shrink_inactive },
};

struct mtr_hook_group mtr_group_reclaim = {
	.name = "reclaim",
	.tps = mtr_reclaim_tps,
	.nr_tps = ARRAY_SIZE(mtr_reclaim_tps),
};
