// SPDX-License-Identifier: GPL-2.0
/*
 * NR_PAGETABLE is a node counter (5.11+); before, a zone counter, which
 * global_node_page_state() would read as another node counter's index.
 */
#include <linux/mm.h>
#include <linux/vmstat.h>

#pragma GCC diagnostic error "-Wenum-conversion"

static unsigned long __used check(void)
{
	return global_node_page_state(NR_PAGETABLE);
}
