// SPDX-License-Identifier: GPL-2.0
/* A proc entry's data pointer comes from pde_data() (5.17+; was PDE_DATA). */
#include <linux/proc_fs.h>

static void *__used check(const struct inode *inode)
{
	return pde_data(inode);
}
