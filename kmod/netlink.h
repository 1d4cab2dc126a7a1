/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "memtrack", between netlink.c (policies, the
 * ops table, registration) and the files that carry out its commands
 * (nl_*.c).  Calls point one way: netlink.c names the commands, and the
 * commands build their messages with nl_msg.c, which netlink.c tells at
 * registration which family they belong to.
 */
#ifndef MEMTRACK_NETLINK_H
#define MEMTRACK_NETLINK_H

#include <net/genetlink.h>
#include <uapi/linux/memtrack.h>

enum mtr_mcgrp {
	MTR_MCGRP_EVENTS,
};

/* nl_msg.c: message headers and multicasts of the family. */
void mtr_nl_msg_init(const struct genl_family *family);
void *mtr_nl_reply_put(struct sk_buff *msg, struct genl_info *info, u8 cmd);
void *mtr_nl_dump_put(struct sk_buff *skb, struct netlink_callback *cb,
		      u8 cmd);
void *mtr_nl_event_put(struct sk_buff *msg, u8 cmd);
void mtr_nl_multicast(struct sk_buff *msg, unsigned int group);
bool mtr_nl_has_listeners(unsigned int group);

/* nl_tasks.c: GET_TASK, GET_TASKS, GET_THREADS. */
int mtr_nl_get_task(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_dump_tasks(struct sk_buff *skb, struct netlink_callback *cb);
int mtr_nl_threads_start(struct netlink_callback *cb);
int mtr_nl_dump_threads(struct sk_buff *skb, struct netlink_callback *cb);

/* nl_summary.c: GET_SUMMARY. */
int mtr_nl_get_summary(struct sk_buff *skb, struct genl_info *info);

/* nl_config.c: GET_CONFIG, SET_CONFIG; the policy of a HOOKS group nest. */
extern const struct nla_policy mtr_nl_group_policy[MEMTRACK_HOOK_ATTR_MAX + 1];
int mtr_nl_get_config(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_set_config(struct sk_buff *skb, struct genl_info *info);

/* nl_relay.c: records to the "events" multicast group. */
int mtr_nl_relay_init(void);
void mtr_nl_relay_exit(void);

/* nl_leak.c: the leak tracer's commands and the policies of their nests. */
extern const struct nla_policy mtr_nl_probe_policy[MEMTRACK_PROBE_ATTR_MAX + 1];
extern const struct nla_policy mtr_nl_unwind_policy[MEMTRACK_UNWIND_ATTR_MAX + 1];
int mtr_nl_leak_attach(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_leak_arm(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_leak_detach(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_leak_unwind(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_leak_stats(struct sk_buff *skb, struct genl_info *info);
int mtr_nl_leak_stacks_start(struct netlink_callback *cb);
int mtr_nl_leak_stacks(struct sk_buff *skb, struct netlink_callback *cb);
int mtr_nl_leak_stacks_done(struct netlink_callback *cb);
int mtr_nl_leak_blocks_start(struct netlink_callback *cb);
int mtr_nl_leak_blocks(struct sk_buff *skb, struct netlink_callback *cb);

#endif /* MEMTRACK_NETLINK_H */
