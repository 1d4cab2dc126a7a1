// SPDX-License-Identifier: GPL-2.0
/*
 * Uprobe handlers get a per-hit __u64 *data shared by the entry and return
 * handler (6.13+).
 */
#include <linux/uprobes.h>

static int handler(struct uprobe_consumer *uc, struct pt_regs *regs,
		   __u64 *data)
{
	return 0;
}

static int ret_handler(struct uprobe_consumer *uc, unsigned long func,
		       struct pt_regs *regs, __u64 *data)
{
	return 0;
}

static struct uprobe_consumer __used uc = {
	.handler = handler,
	.ret_handler = ret_handler,
};
