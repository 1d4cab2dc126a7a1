// SPDX-License-Identifier: GPL-2.0
/*
 * GET_SUMMARY: struct memtrack_summary, the numbers of
 * /proc/memtrack/summary (summary.c fills both).
 *
 * Apart from the family (netlink.c) like every command, so that netlink.c
 * is only its policies, ops and registration.
 */
#include "mtr.h"
#include "netlink.h"

int mtr_nl_get_summary(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct nlattr *nla;
	void *hdr;

	msg = genlmsg_new(nla_total_size(sizeof(u32)) +
			  nla_total_size_64bit(sizeof(struct memtrack_summary)),
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = mtr_nl_reply_put(msg, info, MEMTRACK_CMD_GET_SUMMARY);
	if (!hdr || nla_put_u32(msg, MEMTRACK_ATTR_ABI_VERSION,
				MEMTRACK_ABI_VERSION))
		goto fail;
	nla = nla_reserve_64bit(msg, MEMTRACK_ATTR_SUMMARY,
				sizeof(struct memtrack_summary),
				MEMTRACK_ATTR_PAD);
	if (!nla)
		goto fail;
	mtr_summary_fill(nla_data(nla));
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
fail:
	nlmsg_free(msg);
	return -EMSGSIZE;
}
