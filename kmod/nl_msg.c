// SPDX-License-Identifier: GPL-2.0
/*
 * The headers of the family's messages (replies, dump parts, events) and
 * its multicasts, for the files that carry out its commands.
 *
 * Apart from netlink.c so that the commands need not name the family that
 * names them: netlink.c hands its family over here before registering it,
 * and every arrow between the netlink files points one way.
 */
#include "netlink.h"

static const struct genl_family *mtr_nl_family;

/* Before the family is registered: no command runs before this. */
void mtr_nl_msg_init(const struct genl_family *family)
{
	mtr_nl_family = family;
}

void *mtr_nl_reply_put(struct sk_buff *msg, struct genl_info *info, u8 cmd)
{
	return genlmsg_put_reply(msg, info, mtr_nl_family, 0, cmd);
}

void *mtr_nl_dump_put(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   mtr_nl_family, NLM_F_MULTI, cmd);
}

void *mtr_nl_event_put(struct sk_buff *msg, u8 cmd)
{
	return genlmsg_put(msg, 0, 0, mtr_nl_family, 0, cmd);
}

void mtr_nl_multicast(struct sk_buff *msg, unsigned int group)
{
	genlmsg_multicast(mtr_nl_family, msg, 0, group, GFP_KERNEL);
}

bool mtr_nl_has_listeners(unsigned int group)
{
	return genl_has_listeners(mtr_nl_family, &init_net, group);
}
