// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast groups restricted by a cap_sys_admin bit: the form 5.10.y's
 * backport of the multicast permission fix took.
 */
#include <net/genetlink.h>

static const struct genl_multicast_group __used grp = {
	.name = "x",
	.cap_sys_admin = 1,
};
