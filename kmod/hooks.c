// SPDX-License-Identifier: GPL-2.0
/*
 * Hook groups: tracepoints (found by name, since most are not exported) and
 * kprobes where the kernel has no tracepoint.  A group is switched on and off
 * as a whole from /proc/memtrack/config; every state change happens under
 * mtr_config_lock.
 */
#include <linux/tracepoint.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <linux/mutex.h>
#include "mtr.h"

/*
 * Serializes every change of a setting (config.c) and of a group's state
 * (here).  Defined with the groups, the lower of the two: config.c switches
 * groups through this file, never the other way round.
 */
DEFINE_MUTEX(mtr_config_lock);

struct mtr_hook_group *const mtr_groups[] = {
	&mtr_group_task, &mtr_group_pages, &mtr_group_kmalloc,
	&mtr_group_mmap, &mtr_group_reclaim, &mtr_group_oom,
};
const unsigned int mtr_nr_groups = ARRAY_SIZE(mtr_groups);

static void mtr_tp_lookup(struct tracepoint *tp, void *priv)
{
	unsigned int g, i;

	for (g = 0; g < mtr_nr_groups; g++)
		for (i = 0; i < mtr_groups[g]->nr_tps; i++)
			if (!strcmp(tp->name, mtr_groups[g]->tps[i].name))
				mtr_groups[g]->tps[i].tp = tp;
}

int mtr_hooks_init(void)
{
	unsigned int g, i;
	int err = 0;

	for_each_kernel_tracepoint(mtr_tp_lookup, NULL);
	for (g = 0; g < mtr_nr_groups; g++)
		for (i = 0; i < mtr_groups[g]->nr_tps; i++)
			if (!mtr_groups[g]->tps[i].tp) {
				pr_err(MTR_NAME ": tracepoint %s not found\n",
				       mtr_groups[g]->tps[i].name);
				err = -ENOENT;
			}
	return err;
}

/* A kprobe can only be registered again with the fields it set cleared. */
static void mtr_kprobe_reset(struct kprobe *kp)
{
	kp->addr = NULL;
	kp->flags = 0;
	kp->nmissed = 0;
}

/*
 * Unregister a group's probes; the caller waits for running probes with
 * tracepoint_synchronize_unregister(), once for however many groups.
 */
static void mtr_group_unregister(struct mtr_hook_group *g)
{
	struct kretprobe *krps[MTR_MAX_KRETPROBES];
	unsigned int i, n = 0;

	for (i = 0; i < g->nr_tps; i++) {
		if (!g->tps[i].attached)
			continue;
		tracepoint_probe_unregister(g->tps[i].tp, g->tps[i].probe, NULL);
		g->tps[i].attached = false;
	}
	for (i = 0; i < g->nr_kps; i++) {
		if (!g->kps[i].attached)
			continue;
		unregister_kprobe(&g->kps[i].kp);
		g->kps[i].attached = false;
	}
	/* One RCU grace period for all of them, not one each. */
	for (i = 0; i < g->nr_krps; i++) {
		if (!g->krps[i].attached)
			continue;
		krps[n++] = &g->krps[i].rp;
		g->krps[i].attached = false;
	}
	if (n)
		unregister_kretprobes(krps, n);
}

static void mtr_group_detach(struct mtr_hook_group *g)
{
	mtr_group_unregister(g);
	tracepoint_synchronize_unregister();
}

static int mtr_group_attach(struct mtr_hook_group *g)
{
	struct kprobe *kp;
	unsigned int i;
	int err;

	for (i = 0; i < g->nr_tps; i++) {
		err = tracepoint_probe_register(g->tps[i].tp, g->tps[i].probe,
						NULL);
		if (err) {
			pr_err(MTR_NAME ": cannot attach %s: %d\n",
			       g->tps[i].name, err);
			mtr_group_detach(g);
			return err;
		}
		g->tps[i].attached = true;
	}
	for (i = 0; i < g->nr_kps; i++) {
		kp = &g->kps[i].kp;
		mtr_kprobe_reset(kp);
		err = register_kprobe(kp);
		if (err)
			pr_info(MTR_NAME ": kprobe %s unavailable: %d\n",
				kp->symbol_name, err);
		g->kps[i].attached = !err;
	}
	for (i = 0; i < g->nr_krps; i++) {
		kp = &g->krps[i].rp.kp;
		mtr_kprobe_reset(kp);
		g->krps[i].rp.nmissed = 0;
		err = register_kretprobe(&g->krps[i].rp);
		if (err)
			pr_info(MTR_NAME ": kretprobe %s unavailable: %d\n",
				kp->symbol_name, err);
		g->krps[i].attached = !err;
	}
	return 0;
}

int mtr_hook_group_set(struct mtr_hook_group *g, bool on)
{
	int err = 0;

	lockdep_assert_held(&mtr_config_lock);
	if (g->enabled == on)
		return 0;
	if (!on && g->always_on)
		return -EINVAL;
	if (on)
		err = mtr_group_attach(g);
	else
		mtr_group_detach(g);
	if (!err)
		g->enabled = on;
	return err;
}

void mtr_hooks_detach_all(void)
{
	unsigned int g;

	mutex_lock(&mtr_config_lock);
	for (g = mtr_nr_groups; g-- > 0;) {
		if (mtr_groups[g]->enabled)
			mtr_group_unregister(mtr_groups[g]);
		mtr_groups[g]->enabled = false;
	}
	/* No probe of any group runs after this. */
	tracepoint_synchronize_unregister();
	mutex_unlock(&mtr_config_lock);
}

unsigned int mtr_hook_group_attached(const struct mtr_hook_group *g)
{
	unsigned int i, n = 0;

	for (i = 0; i < g->nr_tps; i++)
		n += g->tps[i].attached;
	for (i = 0; i < g->nr_kps; i++)
		n += g->kps[i].attached;
	for (i = 0; i < g->nr_krps; i++)
		n += g->krps[i].attached;
	return n;
}

unsigned int mtr_hook_group_size(const struct mtr_hook_group *g)
{
	return g->nr_tps + g->nr_kps + g->nr_krps;
}
