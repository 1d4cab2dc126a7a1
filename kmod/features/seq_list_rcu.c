// SPDX-License-Identifier: GPL-2.0
/* seq_file walks RCU lists with seq_list_*_rcu() (5.17+). */
#include <linux/seq_file.h>

static void *__used check(struct list_head *head, void *v, loff_t *pos)
{
	if (!v)
		return seq_list_start_head_rcu(head, *pos);
	return seq_list_next_rcu(v, head, pos);
}
