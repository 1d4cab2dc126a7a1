// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "memtrack": its policies, its ops table and
 * its registration, and nothing else.  The commands are carried out by
 * nl_tasks.c (task rows), nl_summary.c, nl_config.c and nl_leak.c (the
 * leak tracer); nl_relay.c relays records to the "events" multicast group.
 *
 * A new family: every op is strictly validated against the policies below,
 * so handlers only check what a policy cannot say (required attributes, hook
 * group names).  A nest that a handler parses has its policy beside its
 * parser; the family's policy names it.
 */
#include <net/genetlink.h>
#include "mtr.h"
#include "compat.h"
#include "netlink.h"

static const struct nla_policy mtr_hooks_policy[MEMTRACK_HOOK_ATTR_MAX + 1] = {
	[MEMTRACK_HOOK_ATTR_GROUP] = NLA_POLICY_NESTED(mtr_nl_group_policy),
};

/* Policy ranges are s16 unless given as a struct (not const before 6.2). */
static struct netlink_range_validation mtr_retention_range = {
	.min = 0,
	.max = MEMTRACK_RETENTION_MS_MAX,
};

/* Leak tracer: LEAK_PROBES holds PROBE nests of PATH, OFFSET, API. */
static const struct nla_policy mtr_probes_policy[MEMTRACK_PROBE_ATTR_MAX + 1] = {
	[MEMTRACK_PROBE_ATTR_PROBE] = NLA_POLICY_NESTED(mtr_nl_probe_policy),
};

/* Reply-only attributes have no entry: strict validation refuses them. */
static const struct nla_policy mtr_policy[MEMTRACK_ATTR_MAX + 1] = {
	[MEMTRACK_ATTR_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MEMTRACK_ATTR_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MEMTRACK_ATTR_COMM] = { .type = NLA_NUL_STRING,
				 .len = MEMTRACK_COMM_LEN - 1 },
	[MEMTRACK_ATTR_THREAD] = { .type = NLA_FLAG },
	[MEMTRACK_ATTR_RETENTION_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mtr_retention_range),
	[MEMTRACK_ATTR_HOOKS] = NLA_POLICY_NESTED(mtr_hooks_policy),
	[MEMTRACK_ATTR_LEAK_PROBES] = NLA_POLICY_NESTED(mtr_probes_policy),
	[MEMTRACK_ATTR_LEAK_FLAGS] =
		NLA_POLICY_MASK(NLA_U32, MEMTRACK_LEAK_F_ALL),
	[MEMTRACK_ATTR_MIN_AGE_MS] = { .type = NLA_U32 },
	[MEMTRACK_ATTR_LEAK_ALL] = { .type = NLA_FLAG },
	[MEMTRACK_ATTR_LEAK_UNWIND] = NLA_POLICY_NESTED(mtr_nl_unwind_policy),
};

static const struct genl_ops mtr_genl_ops[] = {
	{
		.cmd = MEMTRACK_CMD_GET_SUMMARY,
		.doit = mtr_nl_get_summary,
	},
	{
		.cmd = MEMTRACK_CMD_GET_TASK,
		.doit = mtr_nl_get_task,
	},
	{
		.cmd = MEMTRACK_CMD_GET_TASKS,
		.dumpit = mtr_nl_dump_tasks,
	},
	{
		.cmd = MEMTRACK_CMD_GET_THREADS,
		.start = mtr_nl_threads_start,
		.dumpit = mtr_nl_dump_threads,
	},
	{
		.cmd = MEMTRACK_CMD_GET_CONFIG,
		.doit = mtr_nl_get_config,
	},
	/* MTR_CONFIG_CAP, checked by the handler: no flag says CAP_SYS_ADMIN */
	{
		.cmd = MEMTRACK_CMD_SET_CONFIG,
		.doit = mtr_nl_set_config,
	},
	/* Leak commands check ptrace-like permission themselves. */
	{
		.cmd = MEMTRACK_CMD_LEAK_ATTACH,
		.doit = mtr_nl_leak_attach,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_ARM,
		.doit = mtr_nl_leak_arm,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_DETACH,
		.doit = mtr_nl_leak_detach,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_STACKS,
		.start = mtr_nl_leak_stacks_start,
		.dumpit = mtr_nl_leak_stacks,
		.done = mtr_nl_leak_stacks_done,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_STATS,
		.doit = mtr_nl_leak_stats,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_UNWIND,
		.doit = mtr_nl_leak_unwind,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_BLOCKS,
		.start = mtr_nl_leak_blocks_start,
		.dumpit = mtr_nl_leak_blocks,
		.done = mtr_nl_leak_stacks_done,
	},
};

/* Records show what other users' processes do: root only, like tracefs. */
static const struct genl_multicast_group mtr_genl_mcgrps[] = {
	[MTR_MCGRP_EVENTS] = { .name = MEMTRACK_GENL_MCGRP_EVENTS,
			       MTR_GENL_MCGRP_CAP_SYS_ADMIN },
};

static struct genl_family mtr_genl_family __ro_after_init = {
	.name = MEMTRACK_GENL_NAME,
	.version = MEMTRACK_GENL_VERSION,
	.maxattr = MEMTRACK_ATTR_MAX,
	.policy = mtr_policy,
	.module = THIS_MODULE,
	.parallel_ops = true,
	.ops = mtr_genl_ops,
	.n_ops = ARRAY_SIZE(mtr_genl_ops),
	.mcgrps = mtr_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mtr_genl_mcgrps),
};

int mtr_netlink_init(void)
{
	int err;

	if (WARN_ON(mtr_nr_groups > MTR_MAX_HOOK_GROUPS))
		return -EINVAL;
	mtr_nl_msg_init(&mtr_genl_family);
	err = genl_register_family(&mtr_genl_family);
	if (err)
		return err;
	err = mtr_nl_relay_init();
	if (err)
		genl_unregister_family(&mtr_genl_family);
	return err;
}

/* The relay stops first: it must not multicast on an unregistered family. */
void mtr_netlink_exit(void)
{
	mtr_nl_relay_exit();
	genl_unregister_family(&mtr_genl_family);
}
