// SPDX-License-Identifier: GPL-2.0
/*
 * NR_ANON_THPS counts base pages (5.13+, which added
 * vmstat_item_print_in_thp() with it); before, it counted huge pages.
 */
#include <linux/mmzone.h>

static bool __used check(void)
{
	return vmstat_item_print_in_thp(NR_ANON_THPS);
}
