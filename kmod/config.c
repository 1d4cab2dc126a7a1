// SPDX-License-Identifier: GPL-2.0
/*
 * The module's settings and the one way to change them.  The module
 * parameters, /proc/memtrack/config and the SET_CONFIG command all go
 * through here, so every value passes the same range check whichever path
 * it came by, a request changes only what it names, and nothing changes
 * unless all of the request is valid.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include "mtr.h"

unsigned int mtr_retention_ms = MEMTRACK_RETENTION_MS_DEFAULT;
module_param_named(retention_ms, mtr_retention_ms, uint, 0444);
MODULE_PARM_DESC(retention_ms, "How long exited tasks stay listed (ms)");

static bool mtr_retention_valid(unsigned int ms)
{
	return ms <= MEMTRACK_RETENTION_MS_MAX;
}

/* NULL valid(): every u32 is documented as meaningful (0 is "off"). */
const struct mtr_config_key mtr_config_keys[MTR_CFG_NR] = {
	[MTR_CFG_RETENTION_MS] = { "retention_ms", &mtr_retention_ms,
				   mtr_retention_valid },
	[MTR_CFG_RING_KB] = { "ring_kb", &mtr_ring_kb, mtr_ring_kb_valid },
	[MTR_CFG_RSS_ALERT_KB] = { "rss_alert_kb", &mtr_rss_alert_kb, NULL },
	[MTR_CFG_RSS_GROWTH_KBPS] = { "rss_growth_kbps", &mtr_rss_growth_kbps,
				      NULL },
	[MTR_CFG_LEAK_KEEP_MS] = { "leak_keep_ms", &mtr_leak_keep_ms,
				   mtr_leak_keep_valid },
};

static bool mtr_config_valid(enum mtr_config_key_id k, unsigned int v)
{
	return !mtr_config_keys[k].valid || mtr_config_keys[k].valid(v);
}

int mtr_config_check_params(void)
{
	unsigned int k;

	for (k = 0; k < MTR_CFG_NR; k++)
		if (!mtr_config_valid(k, *mtr_config_keys[k].var)) {
			pr_err(MTR_NAME ": %s %u is out of range\n",
			       mtr_config_keys[k].name,
			       *mtr_config_keys[k].var);
			return -EINVAL;
		}
	return 0;
}

int mtr_config_key_index(const char *name)
{
	unsigned int k;

	for (k = 0; k < MTR_CFG_NR; k++)
		if (!strcmp(name, mtr_config_keys[k].name))
			return k;
	return -1;
}

int mtr_config_group_index(const char *name)
{
	unsigned int g;

	for (g = 0; g < mtr_nr_groups; g++)
		if (!strcmp(name, mtr_groups[g]->name))
			return g;
	return -1;
}

void mtr_config_req_init(struct mtr_config_req *req)
{
	req->set = 0;
	memset(req->enable, -1, sizeof(req->enable));
}

int mtr_config_req_value(struct mtr_config_req *req, enum mtr_config_key_id k,
			 unsigned int v)
{
	if (!mtr_config_valid(k, v))
		return -ERANGE;
	req->value[k] = v;
	req->set |= 1U << k;
	return 0;
}

int mtr_config_req_group(struct mtr_config_req *req, unsigned int g, bool on)
{
	if (!on && mtr_groups[g]->always_on)
		return -EINVAL;
	req->enable[g] = on;
	return 0;
}

/* Caller holds mtr_config_lock; undoes what it did if a group fails. */
static int mtr_config_apply_groups(const struct mtr_config_req *req)
{
	bool was[MTR_MAX_HOOK_GROUPS];
	unsigned int i;
	int err = 0;

	for (i = 0; i < mtr_nr_groups && !err; i++) {
		was[i] = mtr_groups[i]->enabled;
		if (req->enable[i] >= 0)
			err = mtr_hook_group_set(mtr_groups[i], req->enable[i]);
	}
	if (!err)
		return 0;
	/* The failed group is unchanged; put back the ones before it. */
	for (i--; i-- > 0;)
		mtr_hook_group_set(mtr_groups[i], was[i]);
	return err;
}

int mtr_config_apply(const struct mtr_config_req *req)
{
	unsigned int k;
	int err;

	mutex_lock(&mtr_config_lock);
	err = mtr_config_apply_groups(req);
	for (k = 0; k < MTR_CFG_NR && !err; k++)
		if (req->set & (1U << k))
			WRITE_ONCE(*mtr_config_keys[k].var, req->value[k]);
	mutex_unlock(&mtr_config_lock);
	/* A shorter keep may expire ended sessions before the reaper's time. */
	if (!err && req->set & (1U << MTR_CFG_LEAK_KEEP_MS))
		mtr_leak_keep_changed();
	return err;
}
