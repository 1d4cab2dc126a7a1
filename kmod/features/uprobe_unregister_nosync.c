// SPDX-License-Identifier: GPL-2.0
/*
 * Uprobes return a struct uprobe * and unregister in two steps (6.12): a
 * nosync removal per probe, then one wait for running handlers.
 */
#include <linux/uprobes.h>

static bool filter(struct uprobe_consumer *uc, struct mm_struct *mm)
{
	return true;
}

static struct uprobe_consumer uc = { .filter = filter };

static void __used check(struct inode *inode)
{
	struct uprobe *u = uprobe_register(inode, 0, 0, &uc);

	if (!IS_ERR(u))
		uprobe_unregister_nosync(u, &uc);
	uprobe_unregister_sync();
}
