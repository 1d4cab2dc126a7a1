// SPDX-License-Identifier: GPL-2.0
/* GENL_REQ_ATTR_CHECK() reports a missing attribute in the extack (6.0+). */
#include <net/genetlink.h>

static bool __used check(struct genl_info *info)
{
	return GENL_REQ_ATTR_CHECK(info, 1);
}
