// SPDX-License-Identifier: GPL-2.0
/*
 * The numbers of /proc/memtrack/summary as one struct: the proc file prints
 * from it and netlink GET_SUMMARY sends it, so the two cannot disagree on
 * what a number means.
 *
 * The per-CPU totals the hooks and the rings count into live here too, with
 * the one function that sums them: the summary is their only reader.
 */
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/cpumask.h>
#include <linux/string.h>
#include "mtr.h"

DEFINE_PER_CPU(struct mtr_totals, mtr_totals);
DEFINE_PER_CPU(struct mtr_totals, mtr_totals_task);
static u64 mtr_load_ns;

void mtr_summary_init(void)
{
	mtr_load_ns = ktime_get_ns();
}

static void mtr_totals_sum(struct mtr_totals *sum)
{
	const u64 *src;
	u64 *dst = (u64 *)sum;
	unsigned int cpu, i, k;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		/* the atomic totals and the task-context ones: u64s alike */
		const struct mtr_totals *part[] = {
			per_cpu_ptr(&mtr_totals, cpu),
			per_cpu_ptr(&mtr_totals_task, cpu),
		};

		for (k = 0; k < ARRAY_SIZE(part); k++) {
			src = (const u64 *)part[k];
			for (i = 0; i < sizeof(*sum) / sizeof(u64); i++)
				dst[i] += READ_ONCE(src[i]);
		}
	}
}

static void mtr_summary_totals(struct memtrack_summary *s,
			       const struct mtr_totals *t)
{
	s->page_alloc_failures = t->pg_alloc_fail;
	s->reclaim_scanned = t->reclaim_scanned;
	s->reclaim_reclaimed = t->reclaim_reclaimed;
	s->reclaim_dirty = t->reclaim_dirty;
	s->reclaim_writeback = t->reclaim_writeback;
	s->direct_reclaim_stalls = t->reclaim_stalls;
	s->direct_reclaim_ns = t->reclaim_ns;
	s->page_allocs = t->pg_alloc_events;
	s->page_frees = t->pg_free_events;
	s->kmallocs = t->kmalloc_events;
	s->kfrees = t->kfree_events;
	s->address_space_syscalls = t->mmap_events;
	s->forks = t->forks;
	s->exits = t->exits;
	s->oom_kills = t->oom_victims;
	s->records_generated = t->records_generated;
	s->records_lost = t->records_lost;
}

static void mtr_summary_tasks(struct memtrack_summary *s)
{
	struct mtr_table_stats st;

	mtr_table_stats(&st);
	s->processes = st.procs;
	s->processes_exited = st.procs_exited;
	s->threads = st.threads;
	s->threads_exited = st.threads_exited;
	s->untracked = st.untracked;
}

/* Fills *s, and *t when given (the summary also prints per-order splits). */
void mtr_summary_fill_totals(struct memtrack_summary *s, struct mtr_totals *t)
{
	struct mtr_totals local;

	if (!t)
		t = &local;
	memset(s, 0, sizeof(*s));
	s->abi_version = MEMTRACK_ABI_VERSION;
	s->nr_cpus = num_online_cpus();
	s->uptime_ns = ktime_get_ns() - mtr_load_ns;
	mtr_sysmem_fill(s);
	mtr_totals_sum(t);		/* once: every total from the same sum */
	mtr_summary_totals(s, t);
	mtr_summary_tasks(s);
}

void mtr_summary_fill(struct memtrack_summary *s)
{
	mtr_summary_fill_totals(s, NULL);
}
