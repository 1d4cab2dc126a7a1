// SPDX-License-Identifier: GPL-2.0
/* A dump's parsed attributes sit in a struct genl_info (6.6+). */
#include <net/genetlink.h>

static struct nlattr **__used check(struct netlink_callback *cb)
{
	return genl_info_dump(cb)->attrs;
}
