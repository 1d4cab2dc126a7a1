// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/memtrack/tasks (one row per process) and /proc/memtrack/threads (one
 * row per thread): a header naming the columns, then space-separated values.
 * Memory sizes are bytes; comm is escaped like /proc/mounts (\ooo octal).
 * Rows of processes the reader may not trace show '-' for event counters.
 */
#include <linux/seq_file.h>
#include <linux/proc_fs.h>
#include <linux/fs.h>
#include <linux/cred.h>
#include <linux/user_namespace.h>
#include "mtr.h"
#include "compat.h"

static void mtr_row_header(struct seq_file *m)
{
	unsigned int i;

	seq_puts(m, "pid tgid uid state threads comm rss_anon rss_file rss_shmem swap rss_peak vm_total vm_data vm_stack vm_exec pgtables");
	for (i = 0; i < MTR_NR_COUNTERS; i++)
		seq_printf(m, " %s", mtr_counter_names[i]);
	seq_puts(m, " fail_gfp oom_victim");
	seq_puts(m, " ppid cgroup_id utime_ns stime_ns start_ns\n");
}

static void mtr_row(struct seq_file *m, pid_t pid, pid_t tgid,
		   const struct mtr_proc_view *v, u32 fail_gfp, bool oom)
{
	const struct mtr_mm_snap *s = &v->mm;
	unsigned int i;

	seq_printf(m, "%d %d %u %c %u ", pid, tgid,
		   from_kuid_munged(current_user_ns(), v->uid),
		   v->exited ? 'X' : 'R', v->nr_threads);
	seq_escape(m, v->comm, " \t\n\\");
	seq_printf(m, " %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu",
		   s->rss_anon << PAGE_SHIFT, s->rss_file << PAGE_SHIFT,
		   s->rss_shmem << PAGE_SHIFT, s->swap << PAGE_SHIFT,
		   s->rss_peak << PAGE_SHIFT, s->vm_total << PAGE_SHIFT,
		   s->vm_data << PAGE_SHIFT, s->vm_stack << PAGE_SHIFT,
		   s->vm_exec << PAGE_SHIFT, s->pgtables_bytes);
	for (i = 0; i < MTR_NR_COUNTERS; i++) {
		if (v->detailed || i == MTR_C_MIN_FLT || i == MTR_C_MAJ_FLT)
			seq_printf(m, " %lld", (s64)v->c[i]);
		else
			seq_puts(m, " -");
	}
	if (v->detailed)
		seq_printf(m, " %#x %d", fail_gfp, oom);
	else
		seq_puts(m, " - -");
	seq_printf(m, " %d %llu %llu %llu %llu\n", v->stat.ppid,
		   v->stat.cgroup_id, v->stat.utime_ns, v->stat.stime_ns,
		   v->stat.start_ns);
}

/* Both files walk an RCU list: its head is the proc entry's data. */
static void *mtr_list_start(struct seq_file *m, loff_t *pos)
	__acquires(RCU)
{
	rcu_read_lock();
	return mtr_seq_list_start_head_rcu(mtr_pde_data(file_inode(m->file)),
					   *pos);
}

static void *mtr_list_next(struct seq_file *m, void *v, loff_t *pos)
{
	return mtr_seq_list_next_rcu(v, mtr_pde_data(file_inode(m->file)),
				     pos);
}

static void mtr_list_stop(struct seq_file *m, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int mtr_tasks_show(struct seq_file *m, void *v)
{
	struct mtr_proc_view view;
	struct mtr_proc *p;

	if (v == &mtr_proc_list) {
		mtr_row_header(m);
		return 0;
	}
	p = list_entry(v, struct mtr_proc, node);
	mtr_proc_view(p, &view);
	mtr_row(m, p->tgid, p->tgid, &view, READ_ONCE(p->fail_gfp),
	       READ_ONCE(p->oom_victim));
	return 0;
}

const struct seq_operations mtr_tasks_seq_ops = {
	.start = mtr_list_start,
	.next = mtr_list_next,
	.stop = mtr_list_stop,
	.show = mtr_tasks_show,
};

static int mtr_threads_show(struct seq_file *m, void *v)
{
	struct mtr_proc_view view;
	struct mtr_thread *t;

	if (v == &mtr_thread_list) {
		mtr_row_header(m);
		return 0;
	}
	t = list_entry(v, struct mtr_thread, node);
	mtr_thread_view(t, &view);
	mtr_row(m, t->tid, t->proc->tgid, &view, READ_ONCE(t->fail_gfp),
	       READ_ONCE(t->proc->oom_victim));
	return 0;
}

const struct seq_operations mtr_threads_seq_ops = {
	.start = mtr_list_start,
	.next = mtr_list_next,
	.stop = mtr_list_stop,
	.show = mtr_threads_show,
};
