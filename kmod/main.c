// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack: per-task memory counters for Linux.
 *
 * Load order matters: the task lifecycle hooks attach before the scan of
 * existing tasks so that no fork or exit falls between the two; unload
 * removes the /proc files (no more config writes), detaches every hook and
 * waits for running probes, stops the reaper, and only then frees the table.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include "mtr.h"
#include "leak.h"

module_param_named(ring_kb, mtr_ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "Per-CPU buffer of each /dev/memtrack reader (KiB)");

#define MTR_REAP_INTERVAL (HZ / 4)
static void mtr_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(mtr_reap_work, mtr_reap_fn);

static void mtr_reap_fn(struct work_struct *work)
{
	static unsigned int tick;
	u64 now = ktime_get_ns();

	mtr_table_reap(now, (u64)READ_ONCE(mtr_retention_ms) * NSEC_PER_MSEC);
	if (++tick % (HZ / MTR_REAP_INTERVAL) == 0)
		mtr_growth_sample(now);
	schedule_delayed_work(&mtr_reap_work, MTR_REAP_INTERVAL);
}

static int __init mtr_init(void)
{
	unsigned int g;
	int err;

	err = mtr_config_check_params();
	if (err)
		return err;
	mtr_summary_init();
	err = mtr_table_init();
	if (err)
		return err;
	err = mtr_hooks_init();
	if (err)
		goto out_table;

	mutex_lock(&mtr_config_lock);
	err = mtr_hook_group_set(&mtr_group_task, true);
	mutex_unlock(&mtr_config_lock);
	if (err)
		goto out_hooks;
	mtr_table_scan_existing();

	mutex_lock(&mtr_config_lock);
	for (g = 0; g < mtr_nr_groups; g++)
		if (mtr_hook_group_set(mtr_groups[g], true))
			pr_warn(MTR_NAME ": hook group %s left off\n",
				mtr_groups[g]->name);
	mutex_unlock(&mtr_config_lock);

	schedule_delayed_work(&mtr_reap_work, MTR_REAP_INTERVAL);
	err = mtr_proc_init();
	if (err)
		goto out_reaper;
	err = mtr_leak_init();
	if (err)
		goto out_proc;
	err = mtr_netlink_init();
	if (err)
		goto out_leak;
	err = mtr_dev_init();
	if (err)
		goto out_netlink;
	return 0;

out_netlink:
	mtr_leak_exit();
	mtr_netlink_exit();
	goto out_proc;
out_leak:
	mtr_leak_exit();
out_proc:
	mtr_proc_exit();
out_reaper:
	cancel_delayed_work_sync(&mtr_reap_work);
out_hooks:
	mtr_hooks_detach_all();
out_table:
	mtr_table_exit();
	return err;
}

static void __exit mtr_exit(void)
{
	mtr_dev_exit();
	mtr_leak_exit();	/* sessions end while the family still exists */
	mtr_netlink_exit();
	mtr_proc_exit();
	mtr_hooks_detach_all();
	cancel_delayed_work_sync(&mtr_reap_work);
	mtr_table_exit();
}

module_init(mtr_init);
module_exit(mtr_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("memtrack developers");
MODULE_DESCRIPTION("Per-task memory counters and memory-event tracing");
MODULE_VERSION(MEMTRACK_VERSION);
