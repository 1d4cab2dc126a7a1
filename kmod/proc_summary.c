// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/memtrack/summary: the whole picture for a person, in sections of
 * "Key: value" lines (the README documents each).
 */
#include <linux/seq_file.h>
#include <linux/timekeeping.h>
#include <linux/utsname.h>
#include <linux/string.h>
#include <linux/slab.h>
#include "mtr.h"

#define MTR_TOP 10

struct mtr_top_row {
	pid_t tgid;
	struct mtr_mm_snap mm;
	char comm[TASK_COMM_LEN];
};

static unsigned long mtr_rss(const struct mtr_mm_snap *s)
{
	return s->rss_anon + s->rss_file + s->rss_shmem;
}

/* Live processes with the largest RSS, largest first. */
static unsigned int mtr_top_by_rss(struct mtr_top_row *top)
{
	struct mtr_proc_view v;
	unsigned int n = 0, i;
	struct mtr_proc *p;

	rcu_read_lock();
	list_for_each_entry_rcu(p, &mtr_proc_list, node) {
		if (READ_ONCE(p->exit_ns))
			continue;
		mtr_proc_view(p, &v);
		if (!mtr_rss(&v.mm))
			continue;
		for (i = n; i > 0 && mtr_rss(&top[i - 1].mm) < mtr_rss(&v.mm); i--)
			if (i < MTR_TOP)
				top[i] = top[i - 1];
		if (i >= MTR_TOP)
			continue;
		top[i].tgid = p->tgid;
		top[i].mm = v.mm;
		memcpy(top[i].comm, v.comm, sizeof(top[i].comm));
		if (n < MTR_TOP)
			n++;
	}
	rcu_read_unlock();
	return n;
}

static void mtr_show_top(struct seq_file *m)
{
	struct mtr_top_row *top;
	unsigned int n, i;

	seq_puts(m, "\n[top processes by rss] (kB)\n");
	seq_printf(m, "%8s %-16s %10s %10s %10s %10s\n",
		   "pid", "comm", "rss", "anon", "file", "shmem");
	top = kcalloc(MTR_TOP, sizeof(*top), GFP_KERNEL);
	if (!top)
		return;
	n = mtr_top_by_rss(top);
	for (i = 0; i < n; i++) {
		seq_printf(m, "%8d ", top[i].tgid);
		seq_escape(m, top[i].comm, " \t\n\\");
		seq_printf(m, "%*s %10lu %10lu %10lu %10lu\n",
			   (int)(16 - min_t(size_t, 16, strlen(top[i].comm))), "",
			   mtr_rss(&top[i].mm) << (PAGE_SHIFT - 10),
			   top[i].mm.rss_anon << (PAGE_SHIFT - 10),
			   top[i].mm.rss_file << (PAGE_SHIFT - 10),
			   top[i].mm.rss_shmem << (PAGE_SHIFT - 10));
	}
	kfree(top);
}

static void mtr_show_oom(struct seq_file *m, const struct memtrack_summary *s)
{
	struct mtr_oom_victim v[MTR_OOM_RING];
	unsigned int n, i;

	seq_printf(m, "\n[oom]\nOomKills: %llu\n", s->oom_kills);
	n = mtr_oom_victims(v, MTR_OOM_RING);
	for (i = 0; i < n; i++) {
		seq_printf(m, "Victim: pid=%d tgid=%d uid=%u rss_kb=%lu trigger=%d age_s=%llu comm=",
			   v[i].pid, v[i].tgid, v[i].uid,
			   v[i].rss_pages << (PAGE_SHIFT - 10), v[i].trigger_pid,
			   (ktime_get_ns() - v[i].time_ns) / NSEC_PER_SEC);
		seq_escape(m, v[i].comm, " \t\n\\");
		seq_putc(m, '\n');
	}
}

static void mtr_show_module(struct seq_file *m, const struct memtrack_summary *s)
{
	struct mtr_table_stats st;
	const struct mtr_hook_group *g;
	unsigned int i;

	seq_printf(m, "\n[tasks]\nProcesses: %u\nProcessesExited: %u\nThreads: %u\nThreadsExited: %u\nUntracked: %llu\n",
		   s->processes, s->processes_exited, s->threads,
		   s->threads_exited, s->untracked);
	seq_puts(m, "\n[module]\n");
	mutex_lock(&mtr_config_lock);
	for (i = 0; i < mtr_nr_groups; i++) {
		g = mtr_groups[i];
		seq_printf(m, "Hooks(%s): %s %u/%u\n", g->name,
			   g->enabled ? "on" : "off",
			   mtr_hook_group_attached(g), mtr_hook_group_size(g));
	}
	mutex_unlock(&mtr_config_lock);
	seq_printf(m, "SyscallProbesMissed: %lu\n", mtr_mmap_missed());
	seq_printf(m, "RetentionMs: %u\n", READ_ONCE(mtr_retention_ms));
	mtr_table_stats(&st);
	seq_printf(m, "MemoryUsed: %zu kB\n",
		   (st.bytes + num_possible_cpus() * 2 * sizeof(struct mtr_totals)) >> 10);
}

static void mtr_show_alloc(struct seq_file *m, const struct memtrack_summary *s,
			   const struct mtr_totals *t)
{
	unsigned int i;

	seq_printf(m, "\n[allocation]\nPageAllocFailures: %llu\nPageAllocFailuresByOrder:",
		   s->page_alloc_failures);
	for (i = 0; i < MTR_MAX_ORDER_SLOTS; i++)
		if (t->pg_alloc_fail_order[i])
			seq_printf(m, " %u:%llu", i, t->pg_alloc_fail_order[i]);
	seq_puts(m, "\n");
}

static void mtr_show_events(struct seq_file *m, const struct memtrack_summary *s)
{
	seq_printf(m, "\n[reclaim]\nScanned: %llu\nReclaimed: %llu\nDirty: %llu\nWriteback: %llu\nDirectReclaimStalls: %llu\nDirectReclaimUs: %llu\n",
		   s->reclaim_scanned, s->reclaim_reclaimed, s->reclaim_dirty,
		   s->reclaim_writeback, s->direct_reclaim_stalls,
		   s->direct_reclaim_ns / NSEC_PER_USEC);

	seq_printf(m, "\n[events since load]\nPageAllocs: %llu\nPageFrees: %llu\nKmallocs: %llu\nKfrees: %llu\nAddressSpaceSyscalls: %llu\nForks: %llu\nExits: %llu\n",
		   s->page_allocs, s->page_frees, s->kmallocs, s->kfrees,
		   s->address_space_syscalls, s->forks, s->exits);
	/* Over all readers: generated = delivered + lost + pending. */
	seq_printf(m, "RecordsGenerated: %llu\nRecordsLost: %llu\n",
		   s->records_generated, s->records_lost);
}

/* Every number of the summary comes from one struct memtrack_summary. */
int mtr_summary_show(struct seq_file *m, void *v)
{
	struct memtrack_summary *s;
	struct mtr_totals *t;

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!s || !t)
		goto out;
	mtr_summary_fill_totals(s, t);
	seq_printf(m, "memtrack %s abi %d kernel %s up_s %llu\n\n",
		   THIS_MODULE->version, s->abi_version,
		   init_utsname()->release, s->uptime_ns / NSEC_PER_SEC);
	mtr_sysmem_show(m, s);
	mtr_show_alloc(m, s, t);
	mtr_show_events(m, s);
	mtr_show_oom(m, s);
	mtr_show_module(m, s);
	mtr_show_top(m);
out:
	kfree(s);
	kfree(t);
	return s && t ? 0 : -ENOMEM;
}
