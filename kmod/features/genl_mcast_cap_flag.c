// SPDX-License-Identifier: GPL-2.0
/* Multicast groups restricted by GENL_MCAST_CAP_SYS_ADMIN (6.8, 6.1.y). */
#include <net/genetlink.h>

static const struct genl_multicast_group __used grp = {
	.name = "x",
	.flags = GENL_MCAST_CAP_SYS_ADMIN,
};
