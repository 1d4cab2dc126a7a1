// SPDX-License-Identifier: GPL-2.0
/* The /proc/memtrack directory. */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include "mtr.h"

static struct proc_dir_entry *mtr_proc_dir;

int mtr_proc_init(void)
{
	mtr_proc_dir = proc_mkdir(MTR_NAME, NULL);
	if (!mtr_proc_dir)
		return -ENOMEM;
	if (!proc_create_single("summary", 0444, mtr_proc_dir, mtr_summary_show) ||
	    !proc_create_seq_data("tasks", 0444, mtr_proc_dir, &mtr_tasks_seq_ops,
				  &mtr_proc_list) ||
	    !proc_create_seq_data("threads", 0444, mtr_proc_dir,
				  &mtr_threads_seq_ops, &mtr_thread_list) ||
	    !proc_create("config", 0644, mtr_proc_dir, &mtr_config_ops)) {
		proc_remove(mtr_proc_dir);
		return -ENOMEM;
	}
	return 0;
}

/* Waits for readers and writers in progress; later calls fail. */
void mtr_proc_exit(void)
{
	proc_remove(mtr_proc_dir);
}
