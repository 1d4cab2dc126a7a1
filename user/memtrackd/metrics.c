// SPDX-License-Identifier: GPL-2.0
/*
 * /metrics in the Prometheus text exposition format 0.0.4: every family
 * with its HELP and TYPE lines, label values escaped.  Families a source
 * cannot give (the /proc source has no kmalloc counts) are left out rather
 * than shown as zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrack.h"
#include "metrics.h"
#include "state.h"

void mtd_buf_label(struct mtd_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n && s[i]) {
		int len = mt_utf8_seq(s + i, n - i);

		if (len < 0) {
			mtd_buf_printf(b, "\xef\xbf\xbd");	/* U+FFFD */
			i -= len;
		} else if (s[i] == '\\') {
			mtd_buf_printf(b, "\\\\");
			i++;
		} else if (s[i] == '"') {
			mtd_buf_printf(b, "\\\"");
			i++;
		} else if (s[i] == '\n') {
			mtd_buf_printf(b, "\\n");
			i++;
		} else {
			mtd_buf_printf(b, "%.*s", len, (const char *)s + i);
			i += len;
		}
	}
}

static void family(struct mtd_buf *b, const char *name, const char *type,
		   const char *help)
{
	mtd_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		       type);
}

/* name{node="..."  -- the caller adds more labels and the value */
static void series(struct mtd_buf *b, const char *name,
		   const struct mtd_expo_opts *o)
{
	mtd_buf_printf(b, "%s{node=\"", name);
	mtd_buf_label(b, o->node, strlen(o->node));
	mtd_buf_printf(b, "\"");
}

static void comm_label(struct mtd_buf *b, const char *comm)
{
	mtd_buf_printf(b, ",comm=\"");
	mtd_buf_label(b, comm, strnlen(comm, MEMTRACK_COMM_LEN));
	mtd_buf_printf(b, "\"");
}

/* Per-program gauges; only programs with live processes. */
enum gauge { G_PROCS, G_ANON, G_FILE, G_SHMEM, G_SWAP, NR_GAUGES };

static const struct {
	const char *name, *help;
} prog_gauges[NR_GAUGES] = {
	[G_PROCS] = { "memtrack_program_processes",
		      "Live processes of the program (comm)." },
	[G_ANON] = { "memtrack_program_rss_anon_bytes",
		     "Resident anonymous memory of the program's processes (RssAnon)." },
	[G_FILE] = { "memtrack_program_rss_file_bytes",
		     "Resident file-backed memory of the program's processes (RssFile)." },
	[G_SHMEM] = { "memtrack_program_rss_shmem_bytes",
		      "Resident shared memory of the program's processes (RssShmem)." },
	[G_SWAP] = { "memtrack_program_swap_bytes",
		     "Swapped-out memory of the program's processes (VmSwap)." },
};

static uint64_t prog_gauge(const struct mtd_program *pr, enum gauge g)
{
	switch (g) {
	case G_PROCS:	return pr->nproc;
	case G_ANON:	return pr->rss_anon;
	case G_FILE:	return pr->rss_file;
	case G_SHMEM:	return pr->rss_shmem;
	case G_SWAP:	return pr->swap;
	default:	return 0;
	}
}

static const struct {
	const char *name, *help;
	bool ns;			/* nanoseconds, exported in seconds */
} prog_ctrs[MTD_NR_CTR] = {
	[MTD_C_MIN_FLT] = { "memtrack_program_minor_faults_total",
			    "Minor page faults of the program's processes." },
	[MTD_C_MAJ_FLT] = { "memtrack_program_major_faults_total",
			    "Major page faults of the program's processes." },
	[MTD_C_PG_ALLOC] = { "memtrack_program_page_allocs_total",
			     "Pages allocated in the context of the program's processes." },
	[MTD_C_PG_FREE] = { "memtrack_program_page_frees_total",
			    "Pages freed in the context of the program's processes." },
	[MTD_C_KMALLOC] = { "memtrack_program_kmallocs_total",
			    "Kernel heap allocations made on behalf of the program." },
	[MTD_C_KMALLOC_BYTES] = { "memtrack_program_kmalloc_bytes_total",
				  "Kernel heap bytes allocated on behalf of the program." },
	[MTD_C_KFREE] = { "memtrack_program_kfrees_total",
			  "Kernel heap frees made on behalf of the program." },
	[MTD_C_PG_ALLOC_FAIL] = { "memtrack_program_page_alloc_failures_total",
				  "Failed page allocations of the program's processes." },
	[MTD_C_RECLAIM_STALLS] = { "memtrack_program_reclaim_stalls_total",
				   "Direct-reclaim stalls of the program's processes." },
	[MTD_C_RECLAIM_NS] = { "memtrack_program_reclaim_stall_seconds_total",
			       "Time the program's processes spent in direct reclaim.", true },
	[MTD_C_OOM_KILLS] = { "memtrack_program_oom_kills_total",
			      "Processes of the program chosen by the OOM killer." },
};

static const struct {
	const char *type;
} mems[MTD_NR_MEM] = {
	[MTD_M_TOTAL] = { "total" },
	[MTD_M_FREE] = { "free" },
	[MTD_M_AVAILABLE] = { "available" },
	[MTD_M_FILE] = { "file" },
	[MTD_M_ANON] = { "anon" },
	[MTD_M_SHMEM] = { "shmem" },
	[MTD_M_MAPPED] = { "mapped" },
	[MTD_M_DIRTY] = { "dirty" },
	[MTD_M_WRITEBACK] = { "writeback" },
	[MTD_M_SLAB_RECLAIMABLE] = { "slab_reclaimable" },
	[MTD_M_SLAB_UNRECLAIMABLE] = { "slab_unreclaimable" },
	[MTD_M_PAGE_TABLES] = { "page_tables" },
	[MTD_M_SWAP_TOTAL] = { "swap_total" },
	[MTD_M_SWAP_FREE] = { "swap_free" },
};

static const struct {
	const char *name, *help;
	bool ns;
} sys_ctrs[MTD_NR_SYSCTR] = {
	[MTD_S_PG_ALLOC] = { "memtrack_page_allocs_total", "Pages allocated." },
	[MTD_S_PG_FREE] = { "memtrack_page_frees_total", "Pages freed." },
	[MTD_S_KMALLOC] = { "memtrack_kmallocs_total", "Kernel heap allocations." },
	[MTD_S_KFREE] = { "memtrack_kfrees_total", "Kernel heap frees." },
	[MTD_S_PG_ALLOC_FAIL] = { "memtrack_page_alloc_failures_total",
				  "Failed page allocations." },
	[MTD_S_RECLAIM_STALLS] = { "memtrack_reclaim_stalls_total",
				   "Direct-reclaim stalls." },
	[MTD_S_RECLAIM_NS] = { "memtrack_reclaim_stall_seconds_total",
			       "Time spent in direct reclaim.", true },
	[MTD_S_OOM_KILLS] = { "memtrack_oom_kills_total", "OOM killer victims." },
	[MTD_S_PG_FAULT] = { "memtrack_page_faults_total", "Page faults." },
	[MTD_S_PG_MAJFAULT] = { "memtrack_major_page_faults_total",
				"Major page faults." },
};

static void value(struct mtd_buf *b, uint64_t v, bool ns)
{
	if (ns)
		mtd_buf_printf(b, "} %llu.%09llu\n",
			       (unsigned long long)(v / 1000000000ULL),
			       (unsigned long long)(v % 1000000000ULL));
	else
		mtd_buf_printf(b, "} %llu\n", (unsigned long long)v);
}

static void programs(const struct mtd_state *st, const struct mtd_expo_opts *o,
		     struct mtd_buf *b)
{
	size_t i;
	int g, c;

	for (g = 0; g < NR_GAUGES; g++) {
		family(b, prog_gauges[g].name, "gauge", prog_gauges[g].help);
		for (i = 0; i < st->nprogs; i++) {
			const struct mtd_program *pr = &st->progs[st->order[i]];

			if (!pr->nproc)
				continue;
			series(b, prog_gauges[g].name, o);
			comm_label(b, pr->comm);
			value(b, prog_gauge(pr, g), false);
		}
	}
	for (c = 0; c < MTD_NR_CTR; c++) {
		if (!(st->cur.ctr_have & (1U << c)))
			continue;
		family(b, prog_ctrs[c].name, "counter", prog_ctrs[c].help);
		for (i = 0; i < st->nprogs; i++) {
			const struct mtd_program *pr = &st->progs[st->order[i]];

			series(b, prog_ctrs[c].name, o);
			comm_label(b, pr->comm);
			value(b, pr->retired[c] + pr->live[c], prog_ctrs[c].ns);
		}
	}
}

static int cmp_rss_desc(const void *a, const void *b)
{
	const struct mtd_proc *x = *(const struct mtd_proc *const *)a;
	const struct mtd_proc *y = *(const struct mtd_proc *const *)b;
	uint64_t rx = x->rss_anon + x->rss_file + x->rss_shmem;
	uint64_t ry = y->rss_anon + y->rss_file + y->rss_shmem;

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The top-N processes by RSS, one series each: bounded by N. */
static int top_pids(const struct mtd_state *st, const struct mtd_expo_opts *o,
		    struct mtd_buf *b)
{
	const struct mtd_proc **v;
	size_t i, n = 0;

	v = malloc((st->cur.nr ? st->cur.nr : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < st->cur.nr; i++)
		if (!st->cur.procs[i].exited)
			v[n++] = &st->cur.procs[i];
	qsort(v, n, sizeof(*v), cmp_rss_desc);
	if (n > o->top_pids)
		n = o->top_pids;
	family(b, "memtrack_process_rss_bytes", "gauge",
	       "Resident memory of the largest processes (top_pids of them).");
	for (i = 0; i < n; i++) {
		series(b, "memtrack_process_rss_bytes", o);
		mtd_buf_printf(b, ",pid=\"%d\"", v[i]->pid);
		comm_label(b, v[i]->comm);
		value(b, v[i]->rss_anon + v[i]->rss_file + v[i]->rss_shmem,
		      false);
	}
	family(b, "memtrack_process_swap_bytes", "gauge",
	       "Swapped-out memory of the largest processes (top_pids of them).");
	for (i = 0; i < n; i++) {
		series(b, "memtrack_process_swap_bytes", o);
		mtd_buf_printf(b, ",pid=\"%d\"", v[i]->pid);
		comm_label(b, v[i]->comm);
		value(b, v[i]->swap, false);
	}
	free(v);
	return 0;
}

int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtd_buf *b)
{
	const struct mtd_sample *s = &st->cur;
	size_t i;
	int k;

	family(b, "memtrack_info", "gauge",
	       "Always 1; the labels say where the figures come from.");
	series(b, "memtrack_info", o);
	mtd_buf_printf(b, ",source=\"%s\"", o->source);
	value(b, 1, false);

	programs(st, o, b);

	if (s->mem_have) {
		family(b, "memtrack_memory_bytes", "gauge",
		       "System memory by type, as in /proc/meminfo.");
		for (k = 0; k < MTD_NR_MEM; k++) {
			if (!(s->mem_have & (1U << k)))
				continue;
			series(b, "memtrack_memory_bytes", o);
			mtd_buf_printf(b, ",type=\"%s\"", mems[k].type);
			value(b, s->mem[k], false);
		}
	}
	for (k = 0; k < MTD_NR_SYSCTR; k++) {
		if (!(s->sys_have & (1U << k)))
			continue;
		family(b, sys_ctrs[k].name, "counter", sys_ctrs[k].help);
		series(b, sys_ctrs[k].name, o);
		value(b, s->sys[k], sys_ctrs[k].ns);
	}
	if (st->events) {
		family(b, "memtrack_rss_growth_alerts_total", "counter",
		       "RSS growth alerts of the module (rss_alert_kb, rss_growth_kbps).");
		series(b, "memtrack_rss_growth_alerts_total", o);
		value(b, st->growth_alerts, false);
		family(b, "memtrack_program_rss_growth_alerts_total", "counter",
		       "RSS growth alerts of the program's processes.");
		for (i = 0; i < st->nprogs; i++) {
			const struct mtd_program *pr = &st->progs[st->order[i]];

			series(b, "memtrack_program_rss_growth_alerts_total", o);
			comm_label(b, pr->comm);
			value(b, pr->growth_alerts, false);
		}
		family(b, "memtrack_event_overruns_total", "counter",
		       "Times the daemon's event socket overflowed (records lost, number unknown).");
		series(b, "memtrack_event_overruns_total", o);
		value(b, st->overruns, false);
	}
	if (o->top_pids && top_pids(st, o, b))
		return -ENOMEM;
	return b->oom ? -ENOMEM : 0;
}
