// SPDX-License-Identifier: GPL-2.0
/*
 * RSS growth alerts: once a second, while someone reads records, compare each
 * live process's RSS with the previous sample and emit RSS_GROWTH when it
 * crossed rss_alert_kb upwards or grew faster than rss_growth_kbps.  Sampling
 * beats a hook on every RSS change (kmem:rss_stat fires on each fault) and a
 * leak is a trend, not an event.  Only the reaper's worker runs this, so the
 * per-process sample fields need no lock.
 */
#include <linux/mm.h>
#include <linux/timekeeping.h>
#include "mtr.h"

unsigned int mtr_rss_alert_kb = MEMTRACK_RSS_ALERT_KB_DEFAULT;
unsigned int mtr_rss_growth_kbps = MEMTRACK_RSS_GROWTH_KBPS_DEFAULT;

static bool mtr_growth_alert(unsigned long rss, unsigned long prev, u64 ns,
			     unsigned int alert_kb, unsigned int kbps)
{
	u64 kb = (u64)rss << (PAGE_SHIFT - 10);
	u64 prev_kb = (u64)prev << (PAGE_SHIFT - 10);

	if (alert_kb && kb >= alert_kb && prev_kb < alert_kb)
		return true;
	return kbps && kb > prev_kb &&
	       div64_u64((kb - prev_kb) * NSEC_PER_SEC, ns) > kbps;
}

void mtr_growth_sample(u64 now)
{
	unsigned int alert_kb = READ_ONCE(mtr_rss_alert_kb);
	unsigned int kbps = READ_ONCE(mtr_rss_growth_kbps);
	unsigned long rss;
	struct mtr_proc *p;

	if ((!alert_kb && !kbps) || !mtr_have_readers())
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(p, &mtr_proc_list, node) {
		if (READ_ONCE(p->exit_ns))
			continue;
		rss = mtr_proc_rss(p);
		if (p->growth_ns &&
		    mtr_growth_alert(rss, p->growth_rss, now - p->growth_ns,
				     alert_kb, kbps))
			mtr_ev_rss(p, rss, p->growth_rss, now - p->growth_ns);
		p->growth_rss = rss;
		p->growth_ns = now;
	}
	rcu_read_unlock();
}
