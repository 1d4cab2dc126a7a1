// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's columns: sizes in KiB as top prints them, rates per second
 * over the last interval, RSS growth over the window in KiB.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "top_columns.h"

/* A per-program row has no pid: it shows how many processes it sums. */
static void pid_cell(const struct top_row *r, char *b, size_t n)
{
	if (r->group)
		snprintf(b, n, "%ux", r->group);
	else
		snprintf(b, n, "%d", r->t.pid);
}

static void user_cell(const struct top_row *r, char *b, size_t n)
{
	snprintf(b, n, "%.8s", r->user);
}

/* A comm may hold spaces; a column of text may not. */
static void comm_cell(const struct top_row *r, char *b, size_t n)
{
	unsigned int depth = r->depth < 8 ? r->depth : 8;
	size_t i;

	/* Tree depth as indentation, a thread under its process. */
	snprintf(b, n, "%*s%s%s", (int)depth * 2, "",
		 r->thread ? "`" : "", r->t.comm);
	for (i = depth * 2; b[i]; i++)
		if (b[i] == ' ' || b[i] == '\t')
			b[i] = '_';
}

#define KIB_CELL(name, expr)						\
static void name##_cell(const struct top_row *r, char *b, size_t n)	\
{									\
	snprintf(b, n, "%" PRIu64, (uint64_t)(expr) >> 10);		\
}
KIB_CELL(rss, top_rss(&r->t))
KIB_CELL(anon, r->t.mm.rss_anon)
KIB_CELL(file, r->t.mm.rss_file)
KIB_CELL(shmem, r->t.mm.rss_shmem)
KIB_CELL(swap, r->t.mm.swap)
KIB_CELL(virt, r->t.mm.vm_total)

#define RATE_CELL(name, field)						\
static void name##_cell(const struct top_row *r, char *b, size_t n)	\
{									\
	snprintf(b, n, "%.0f", r->field);				\
}
RATE_CELL(minflt, minflt_rate)
RATE_CELL(majflt, majflt_rate)
RATE_CELL(pgalloc, pgalloc_rate)
RATE_CELL(kmalloc, kmalloc_rate)

/* The end of a long path says most: keep it. */
static void cgroup_cell(const struct top_row *r, char *b, size_t n)
{
	size_t len = strlen(r->cgroup);

	if (len > 20)
		snprintf(b, n, "..%s", r->cgroup + len - 18);
	else
		snprintf(b, n, "%s", r->cgroup);
}

static void limit_cell(const struct top_row *r, char *b, size_t n)
{
	if (r->cg_max)
		snprintf(b, n, "%" PRIu64, r->cg_max >> 10);
	else
		snprintf(b, n, "-");
}

static void cpu_cell(const struct top_row *r, char *b, size_t n)
{
	snprintf(b, n, "%.1f", r->cpu_pct);
}

static void growth_cell(const struct top_row *r, char *b, size_t n)
{
	snprintf(b, n, "%+" PRId64, r->rss_growth / 1024);
}

/* Human-sized rate: K, M or G per second. */
void top_growth_flag(const struct top_row *r, char *b, size_t n)
{
	double v = r->growth_rate / 1024;
	const char *unit = "K";

	if (!r->growing) {
		snprintf(b, n, "-");
		return;
	}
	if (v >= 1024) {
		v /= 1024;
		unit = "M";
	}
	if (v >= 1024) {
		v /= 1024;
		unit = "G";
	}
	snprintf(b, n, "LEAK?+%.1f%s/s", v, unit);
}

const struct top_column top_columns[] = {
	{ "PID", 7, false, TOP_SORT_PID, pid_cell },
	{ "USER", -8, false, TOP_SORT_NONE, user_cell },
	{ "COMMAND", -15, false, TOP_SORT_NONE, comm_cell },
	{ "CGROUP", -20, false, TOP_SORT_NONE, cgroup_cell },
	{ "%CPU", 5, false, TOP_SORT_CPU, cpu_cell },
	{ "RSS", 9, false, TOP_SORT_RSS, rss_cell },
	{ "ANON", 9, false, TOP_SORT_ANON, anon_cell },
	{ "FILE", 8, false, TOP_SORT_FILE, file_cell },
	{ "SHMEM", 8, false, TOP_SORT_SHMEM, shmem_cell },
	{ "SWAP", 8, false, TOP_SORT_SWAP, swap_cell },
	{ "VIRT", 10, false, TOP_SORT_VIRT, virt_cell },
	{ "LIMIT", 8, false, TOP_SORT_NONE, limit_cell },
	{ "MINFLT/s", 8, false, TOP_SORT_MINFLT, minflt_cell },
	{ "MAJFLT/s", 8, false, TOP_SORT_MAJFLT, majflt_cell },
	{ "PGALLOC/s", 9, true, TOP_SORT_PGALLOC, pgalloc_cell },
	{ "KMALLOC/s", 9, true, TOP_SORT_KMALLOC, kmalloc_cell },
	{ "GROWTH", 8, false, TOP_SORT_GROWTH, growth_cell },
	{ "FLAG", -16, false, TOP_SORT_NONE, top_growth_flag },
};
const size_t top_nr_columns = sizeof(top_columns) / sizeof(top_columns[0]);

static int put(char *buf, size_t len, int at, int width, const char *s)
{
	int w = width < 0 ? -width : width;
	/* A cell never pushes the columns after it: cut to the width. */
	int n = snprintf(buf + at, at < (int)len ? len - at : 0, "%s%*.*s",
			 at ? " " : "", width < 0 ? -w : w, w, s);

	return at + n;
}

/* The last column is left-aligned: no padding after it. */
static int trim(char *buf, size_t len, int at)
{
	if (at >= (int)len)
		at = len - 1;
	while (at > 0 && buf[at - 1] == ' ')
		buf[--at] = '\0';
	return at;
}

int top_format_header(char *buf, size_t len, bool module)
{
	int at = 0;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < top_nr_columns; i++)
		if (module || !top_columns[i].module_only)
			at = put(buf, len, at, top_columns[i].width,
				 top_columns[i].title);
	return trim(buf, len, at);
}

int top_format_row(const struct top_row *r, char *buf, size_t len,
		   bool module)
{
	char cell[64];
	int at = 0;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < top_nr_columns; i++) {
		if (!module && top_columns[i].module_only)
			continue;
		top_columns[i].cell(r, cell, sizeof(cell));
		at = put(buf, len, at, top_columns[i].width, cell);
	}
	return trim(buf, len, at);
}
