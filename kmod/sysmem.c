// SPDX-License-Identifier: GPL-2.0
/*
 * System-wide memory for the summary: the node counters /proc/meminfo is
 * built from, and each zone's size, free pages and watermarks.
 */
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/vmstat.h>
#include <linux/swap.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include "mtr.h"
#include "compat.h"

static u64 mtr_bytes(unsigned long pages)
{
	return (u64)pages << PAGE_SHIFT;
}

static void mtr_show_kb(struct seq_file *m, const char *name, u64 bytes)
{
	seq_printf(m, "%-16s %10llu kB\n", name, bytes >> 10);
}

static void mtr_show_zones(struct seq_file *m)
{
	struct zone *z;
	int nid, i;

	seq_puts(m, "\n[zones] (pages)\n");
	seq_puts(m, "node zone         present    managed       free        min        low       high\n");
	for_each_online_node(nid) {
		for (i = 0; i < MAX_NR_ZONES; i++) {
			z = &NODE_DATA(nid)->node_zones[i];
			if (!populated_zone(z))
				continue;
			seq_printf(m, "%4d %-8s %10lu %10lu %10lu %10lu %10lu %10lu\n",
				   nid, z->name, z->present_pages,
				   zone_managed_pages(z),
				   zone_page_state(z, NR_FREE_PAGES),
				   min_wmark_pages(z), low_wmark_pages(z),
				   high_wmark_pages(z));
		}
	}
}

/* Bytes, from the counters /proc/meminfo is built from. */
void mtr_sysmem_fill(struct memtrack_summary *s)
{
	struct sysinfo si;

	si_meminfo(&si);
	s->mem_total = mtr_bytes(si.totalram);
	s->mem_free = mtr_bytes(si.freeram);
	s->file_pages = mtr_bytes(global_node_page_state(NR_FILE_PAGES));
	s->active_anon = mtr_bytes(global_node_page_state(NR_ACTIVE_ANON));
	s->inactive_anon = mtr_bytes(global_node_page_state(NR_INACTIVE_ANON));
	s->active_file = mtr_bytes(global_node_page_state(NR_ACTIVE_FILE));
	s->inactive_file = mtr_bytes(global_node_page_state(NR_INACTIVE_FILE));
	s->unevictable = mtr_bytes(global_node_page_state(NR_UNEVICTABLE));
	s->dirty = mtr_bytes(global_node_page_state(NR_FILE_DIRTY));
	s->writeback = mtr_bytes(global_node_page_state(NR_WRITEBACK));
	s->anon_pages = mtr_bytes(global_node_page_state(NR_ANON_MAPPED));
	s->mapped = mtr_bytes(global_node_page_state(NR_FILE_MAPPED));
	s->shmem = mtr_bytes(global_node_page_state(NR_SHMEM));
	s->slab_reclaimable =
		mtr_bytes(global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B));
	s->slab_unreclaimable =
		mtr_bytes(global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B));
	s->page_tables = mtr_bytes(mtr_page_tables());
	s->anon_huge = mtr_bytes(mtr_anon_thp_pages());
	s->swap_free = mtr_bytes(get_nr_swap_pages());
}

/*
 * Buffers is not in struct memtrack_summary (it is part of FilePages there),
 * so it alone is read here.
 */
void mtr_sysmem_show(struct seq_file *m, const struct memtrack_summary *s)
{
	struct sysinfo si;

	si_meminfo(&si);
	seq_puts(m, "[system]\n");
	mtr_show_kb(m, "MemTotal:", s->mem_total);
	mtr_show_kb(m, "MemFree:", s->mem_free);
	mtr_show_kb(m, "Buffers:", mtr_bytes(si.bufferram));
	mtr_show_kb(m, "FilePages:", s->file_pages);
	mtr_show_kb(m, "Active(anon):", s->active_anon);
	mtr_show_kb(m, "Inactive(anon):", s->inactive_anon);
	mtr_show_kb(m, "Active(file):", s->active_file);
	mtr_show_kb(m, "Inactive(file):", s->inactive_file);
	mtr_show_kb(m, "Unevictable:", s->unevictable);
	mtr_show_kb(m, "Dirty:", s->dirty);
	mtr_show_kb(m, "Writeback:", s->writeback);
	mtr_show_kb(m, "AnonPages:", s->anon_pages);
	mtr_show_kb(m, "Mapped:", s->mapped);
	mtr_show_kb(m, "Shmem:", s->shmem);
	mtr_show_kb(m, "SReclaimable:", s->slab_reclaimable);
	mtr_show_kb(m, "SUnreclaim:", s->slab_unreclaimable);
	mtr_show_kb(m, "PageTables:", s->page_tables);
	mtr_show_kb(m, "AnonHugePages:", s->anon_huge);
	mtr_show_kb(m, "SwapFree:", s->swap_free);
	mtr_show_zones(m);
}
