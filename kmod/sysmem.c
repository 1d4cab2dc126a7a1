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
#include "memtrack.h"

static void mtr_show_kb(struct seq_file *m, const char *name, unsigned long pages)
{
	seq_printf(m, "%-16s %10lu kB\n", name, pages << (PAGE_SHIFT - 10));
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

void mtr_sysmem_show(struct seq_file *m)
{
	struct sysinfo si;

	si_meminfo(&si);
	seq_puts(m, "[system]\n");
	mtr_show_kb(m, "MemTotal:", si.totalram);
	mtr_show_kb(m, "MemFree:", si.freeram);
	mtr_show_kb(m, "Buffers:", si.bufferram);
	mtr_show_kb(m, "FilePages:", global_node_page_state(NR_FILE_PAGES));
	mtr_show_kb(m, "Active(anon):", global_node_page_state(NR_ACTIVE_ANON));
	mtr_show_kb(m, "Inactive(anon):", global_node_page_state(NR_INACTIVE_ANON));
	mtr_show_kb(m, "Active(file):", global_node_page_state(NR_ACTIVE_FILE));
	mtr_show_kb(m, "Inactive(file):", global_node_page_state(NR_INACTIVE_FILE));
	mtr_show_kb(m, "Unevictable:", global_node_page_state(NR_UNEVICTABLE));
	mtr_show_kb(m, "Dirty:", global_node_page_state(NR_FILE_DIRTY));
	mtr_show_kb(m, "Writeback:", global_node_page_state(NR_WRITEBACK));
	mtr_show_kb(m, "AnonPages:", global_node_page_state(NR_ANON_MAPPED));
	mtr_show_kb(m, "Mapped:", global_node_page_state(NR_FILE_MAPPED));
	mtr_show_kb(m, "Shmem:", global_node_page_state(NR_SHMEM));
	mtr_show_kb(m, "SReclaimable:",
		   global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B));
	mtr_show_kb(m, "SUnreclaim:",
		   global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B));
	mtr_show_kb(m, "PageTables:", global_node_page_state(NR_PAGETABLE));
	mtr_show_kb(m, "AnonHugePages:", global_node_page_state(NR_ANON_THPS));
	mtr_show_kb(m, "SwapFree:", get_nr_swap_pages());
	mtr_show_zones(m);
}
