// SPDX-License-Identifier: GPL-2.0
/*
 * GET_CONFIG and SET_CONFIG: the settings of /proc/memtrack/config as
 * attributes.  A request is turned into a struct mtr_config_req and applied
 * by config.c, the one way to change a setting.
 *
 * Apart from the family (netlink.c): parsing and replying are this
 * command's own; the policy of a hook group nest is here, with its parser.
 */
#include <linux/capability.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include "mtr.h"
#include "netlink.h"

#define MTR_GROUP_NAME_MAX	16

/* One HOOKS group nest; parsed here, named by the family's policy. */
const struct nla_policy mtr_nl_group_policy[MEMTRACK_HOOK_ATTR_MAX + 1] = {
	[MEMTRACK_HOOK_ATTR_NAME] = { .type = NLA_NUL_STRING,
				      .len = MTR_GROUP_NAME_MAX - 1 },
	[MEMTRACK_HOOK_ATTR_ENABLED] = NLA_POLICY_RANGE(NLA_U8, 0, 1),
};

/* Caller holds mtr_config_lock. */
static int mtr_put_group(struct sk_buff *msg, const struct mtr_hook_group *g)
{
	struct nlattr *nest;

	nest = nla_nest_start(msg, MEMTRACK_HOOK_ATTR_GROUP);
	if (!nest ||
	    nla_put_string(msg, MEMTRACK_HOOK_ATTR_NAME, g->name) ||
	    nla_put_u8(msg, MEMTRACK_HOOK_ATTR_ENABLED, g->enabled) ||
	    nla_put_u32(msg, MEMTRACK_HOOK_ATTR_ATTACHED,
			mtr_hook_group_attached(g)) ||
	    nla_put_u32(msg, MEMTRACK_HOOK_ATTR_TOTAL, mtr_hook_group_size(g)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* Caller holds mtr_config_lock. */
static int mtr_put_config(struct sk_buff *msg)
{
	struct nlattr *hooks;
	unsigned int i;

	if (nla_put_u32(msg, MEMTRACK_ATTR_RETENTION_MS,
			READ_ONCE(mtr_retention_ms)))
		return -EMSGSIZE;
	hooks = nla_nest_start(msg, MEMTRACK_ATTR_HOOKS);
	if (!hooks)
		return -EMSGSIZE;
	for (i = 0; i < mtr_nr_groups; i++)
		if (mtr_put_group(msg, mtr_groups[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, hooks);
	return 0;
}

int mtr_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = mtr_nl_reply_put(msg, info, MEMTRACK_CMD_GET_CONFIG);
	if (!hdr) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	mutex_lock(&mtr_config_lock);
	err = mtr_put_config(msg);
	mutex_unlock(&mtr_config_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int mtr_parse_group(const struct nlattr *nest, struct mtr_config_req *req,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[MEMTRACK_HOOK_ATTR_MAX + 1];
	int err, g;

	err = nla_parse_nested(tb, MEMTRACK_HOOK_ATTR_MAX, nest,
			       mtr_nl_group_policy, extack);
	if (err)
		return err;
	if (!tb[MEMTRACK_HOOK_ATTR_NAME] || !tb[MEMTRACK_HOOK_ATTR_ENABLED]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "group needs NAME and ENABLED");
		return -EINVAL;
	}
	g = mtr_config_group_index(nla_data(tb[MEMTRACK_HOOK_ATTR_NAME]));
	if (g < 0) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MEMTRACK_HOOK_ATTR_NAME],
				    "unknown hook group");
		return -EINVAL;
	}
	err = mtr_config_req_group(req, g,
				   nla_get_u8(tb[MEMTRACK_HOOK_ATTR_ENABLED]));
	if (err)
		NL_SET_ERR_MSG_ATTR(extack, tb[MEMTRACK_HOOK_ATTR_ENABLED],
				    "this hook group cannot be switched off");
	return err;
}

/*
 * A request names only what it changes: an absent attribute leaves its
 * setting as it is.  Everything is checked before anything changes.
 */
static int mtr_parse_config(struct genl_info *info, struct mtr_config_req *req)
{
	struct nlattr *hooks = info->attrs[MEMTRACK_ATTR_HOOKS];
	struct nlattr *rt = info->attrs[MEMTRACK_ATTR_RETENTION_MS];
	struct nlattr *nest;
	int rem, err;

	mtr_config_req_init(req);
	if (!rt && !hooks) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		return -EINVAL;
	}
	if (rt) {
		err = mtr_config_req_value(req, MTR_CFG_RETENTION_MS,
					   nla_get_u32(rt));
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack, rt, "out of range");
			return err;
		}
	}
	if (!hooks)
		return 0;
	nla_for_each_nested(nest, hooks, rem) {
		err = mtr_parse_group(nest, req, info->extack);
		if (err)
			return err;
	}
	return 0;
}

int mtr_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct mtr_config_req req;
	int err;

	/* Of the socket's opener and the sender, as GENL_ADMIN_PERM asks */
	if (!netlink_capable(skb, MTR_CONFIG_CAP))
		return -EPERM;
	err = mtr_parse_config(info, &req);
	if (err)
		return err;
	err = mtr_config_apply(&req);
	if (err)
		NL_SET_ERR_MSG(info->extack, "attaching a hook group failed");
	return err;
}
