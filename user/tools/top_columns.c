// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's columns: sizes in KiB as top prints them, rates per second
 * over the last interval, RSS growth over the window in KiB.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "top_columns.h"
#include "top_text.h"
#include "top_view.h"

/*
 * The cells of every row of every refresh: with 10,000 processes snprintf()
 * was most of a refresh's CPU, so numbers are written by hand
 * (mt_fmt_u64()).  b has room for any number (the callers' cells are 64
 * bytes).
 */

/* v with d (0 or 1) decimals, rounded to nearest like printf's %.*f. */
static void put_fixed(char *b, size_t n, double v, int d)
{
	uint64_t x;
	size_t k;

	if (!(v >= 0 && v < 1e15)) {
		snprintf(b, n, "%.*f", d, v);
		return;
	}
	x = (uint64_t)rint(d ? v * 10 : v);
	if (!d) {
		mt_fmt_u64(b, x);
		return;
	}
	k = mt_fmt_u64(b, x / 10);
	b[k++] = '.';
	b[k++] = '0' + x % 10;
	b[k] = '\0';
}

/* At most max characters of s. */
static void put_str(char *b, size_t n, const char *s, size_t max)
{
	size_t i;

	if (max > n - 1)
		max = n - 1;
	for (i = 0; i < max && s[i]; i++)
		b[i] = s[i];
	b[i] = '\0';
}

/* A per-program row has no pid: it shows how many processes it sums. */
static void pid_cell(const struct top_row *r, char *b, size_t n)
{
	size_t k;

	(void)n;
	if (r->group) {
		k = mt_fmt_u64(b, r->group);
		b[k++] = 'x';
		b[k] = '\0';
	} else if (r->t.pid >= 0) {
		mt_fmt_u64(b, r->t.pid);
	} else {
		b[0] = '-';
		mt_fmt_u64(b + 1, -(int64_t)r->t.pid);
	}
}

static void user_cell(const struct top_row *r, char *b, size_t n)
{
	put_str(b, n, r->user, 8);
}

/* A comm may hold spaces; a column of text may not. */
bool top_columns_utf8;

/* s at b + *k, if it fits before the terminating NUL. */
static void add_str(char *b, size_t n, size_t *k, const char *s)
{
	size_t len = strlen(s);

	if (*k + len < n) {
		memcpy(b + *k, s, len);
		*k += len;
	}
}

/*
 * A process's branches in the tree view, as ps --forest and htop draw
 * them: a line down through each level whose ancestor has siblings after
 * it, then a tee or, for the last child, a corner.  Past TREE_LEVELS
 * levels only the deepest ones are drawn, after an ellipsis, so that the
 * name stays in the column at any depth.
 */
#define TREE_LEVELS	4

static void tree_prefix(const struct top_row *r, char *b, size_t n, size_t *k)
{
	bool u = top_columns_utf8;
	unsigned int lvl = 1;

	if (r->depth > TREE_LEVELS) {
		add_str(b, n, k, u ? "\u2026" : "~");
		lvl = r->depth - 2;
	}
	for (; lvl < r->depth; lvl++)
		add_str(b, n, k, lvl < 32 && (r->tree_more & (1U << lvl)) ?
			(u ? "\u2502 " : "| ") : "  ");
	add_str(b, n, k, r->tree_last ? (u ? "\u2514\u2500" : "`-") :
		(u ? "\u251c\u2500" : "|-"));
}

static void comm_cell(const struct top_row *r, char *b, size_t n)
{
	unsigned int depth = r->depth < 8 ? r->depth : 8;
	size_t i, k = 0;

	/* a thread indented under its process; a process's tree branches */
	if (r->thread) {
		for (i = 0; i < depth * 2; i++)
			b[k++] = ' ';
		b[k++] = '`';
	} else if (r->depth) {
		tree_prefix(r, b, n, &k);
	}
	for (i = 0; i < sizeof(r->t.comm) && r->t.comm[i] && k < n - 1; i++)
		b[k++] = r->t.comm[i] == ' ' || r->t.comm[i] == '\t' ?
			 '_' : r->t.comm[i];
	b[k] = '\0';
}

#define KIB_CELL(name, expr)						\
static void name##_cell(const struct top_row *r, char *b, size_t n)	\
{									\
	(void)n;							\
	mt_fmt_u64(b, (uint64_t)(expr) >> 10);				\
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
	put_fixed(b, n, r->field, 0);					\
}
RATE_CELL(minflt, minflt_rate)
RATE_CELL(majflt, majflt_rate)

/*
 * The module's event counters of a process the reader may not see (not its
 * own, no CAP_SYS_PTRACE: the module's rule, README) are not zero: unknown.
 */
#define EVENT_CELL(name, field)						\
static void name##_cell(const struct top_row *r, char *b, size_t n)	\
{									\
	if (r->t.detailed)						\
		put_fixed(b, n, r->field, 0);				\
	else								\
		put_str(b, n, "-", 1);					\
}
EVENT_CELL(pgalloc, pgalloc_rate)
EVENT_CELL(kmalloc, kmalloc_rate)

/* Not read (a thread, a sum, a process not ours to read): "-". */
#define SMAPS_CELL(name)						\
static void name##_cell(const struct top_row *r, char *b, size_t n)	\
{									\
	if (r->has_smaps)						\
		mt_fmt_u64(b, r->name >> 10);				\
	else								\
		put_str(b, n, "-", 1);					\
}
SMAPS_CELL(pss)
SMAPS_CELL(uss)

/* The end of a long path says most: keep it. */
static void cgroup_cell(const struct top_row *r, char *b, size_t n)
{
	size_t len = strlen(r->cgroup);

	if (len > 20) {
		b[0] = b[1] = '.';
		put_str(b + 2, n - 2, r->cgroup + len - 18, 18);
	} else {
		put_str(b, n, r->cgroup, len);
	}
}

/* The container's name; "-" outside one, and in a per-pod row. */
static void container_cell(const struct top_row *r, char *b, size_t n)
{
	const struct mt_container *c = r->ct;

	if (c && c->id[0] && r->gkind != TOP_GROUP_POD)
		put_str(b, n, c->name, strlen(c->name));
	else
		put_str(b, n, "-", 1);
}

/* NAMESPACE/POD as kubectl names it; the pod's UID until names are known. */
static void pod_cell(const struct top_row *r, char *b, size_t n)
{
	const struct mt_container *c = r->ct;
	size_t k;

	if (c && c->pod[0]) {
		/* by hand: snprintf() was a good part of a refresh's rows */
		put_str(b, n, c->ns, strlen(c->ns));
		k = strlen(b);
		if (k + 1 < n) {
			b[k++] = '/';
			put_str(b + k, n - k, c->pod, strlen(c->pod));
		}
	} else if (c && c->pod_uid[0]) {
		put_str(b, n, c->pod_uid, strlen(c->pod_uid));
	} else {
		put_str(b, n, "-", 1);
	}
}

static void limit_cell(const struct top_row *r, char *b, size_t n)
{
	if (r->cg_max != TOP_NO_LIMIT)
		mt_fmt_u64(b, r->cg_max >> 10);
	else
		put_str(b, n, "-", 1);
}

static void cpu_cell(const struct top_row *r, char *b, size_t n)
{
	put_fixed(b, n, r->cpu_pct, 1);
}

static void growth_cell(const struct top_row *r, char *b, size_t n)
{
	int64_t k = r->rss_growth / 1024;

	(void)n;
	b[0] = k < 0 ? '-' : '+';
	mt_fmt_u64(b + 1, k < 0 ? -(uint64_t)k : (uint64_t)k);
}

/* Human-sized rate: K, M or G per second. */
void top_growth_flag(const struct top_row *r, char *b, size_t n)
{
	double v = r->growth_rate / 1024;
	const char *unit = "K";

	if (!r->growing) {
		put_str(b, n, "-", 1);
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

/*
 * rank: what a narrow terminal keeps, 0 always (with the sort column),
 * then 1, 2, ... as long as they fit: at 80 columns PID USER COMMAND RSS
 * ANON GROWTH FLAG, so that a leak suspect shows on any terminal.
 */
const struct top_column top_columns[] = {
	{ "PID", 7, 0, TOP_SORT_PID, pid_cell, 0 },
	{ "USER", -8, 0, TOP_SORT_NONE, user_cell, 1 },
	{ "COMMAND", -15, 0, TOP_SORT_NONE, comm_cell, 0 },
	{ "CGROUP", -20, 0, TOP_SORT_NONE, cgroup_cell, 17 },
	{ "CONTAINER", -14, TOP_SHOW_CONTAINERS, TOP_SORT_NONE, container_cell, 4 },
	{ "POD", -24, TOP_SHOW_CONTAINERS, TOP_SORT_NONE, pod_cell, 11 },
	{ "%CPU", 5, 0, TOP_SORT_CPU, cpu_cell, 3 },
	{ "RSS", 9, 0, TOP_SORT_RSS, rss_cell, 0 },
	{ "ANON", 9, 0, TOP_SORT_ANON, anon_cell, 2 },
	{ "FILE", 8, 0, TOP_SORT_FILE, file_cell, 5 },
	{ "SHMEM", 8, 0, TOP_SORT_SHMEM, shmem_cell, 7 },
	{ "PSS", 9, TOP_SHOW_SMAPS, TOP_SORT_NONE, pss_cell, 3 },
	{ "USS", 9, TOP_SHOW_SMAPS, TOP_SORT_NONE, uss_cell, 3 },
	{ "SWAP", 8, 0, TOP_SORT_SWAP, swap_cell, 4 },
	{ "VIRT", 10, 0, TOP_SORT_VIRT, virt_cell, 15 },
	{ "LIMIT", 8, 0, TOP_SORT_NONE, limit_cell, 16 },
	{ "MINFLT/s", 8, 0, TOP_SORT_MINFLT, minflt_cell, 6 },
	{ "MAJFLT/s", 8, 0, TOP_SORT_MAJFLT, majflt_cell, 10 },
	{ "PGALLOC/s", 9, TOP_SHOW_MODULE, TOP_SORT_PGALLOC, pgalloc_cell, 8 },
	{ "KMALLOC/s", 9, TOP_SHOW_MODULE, TOP_SORT_KMALLOC, kmalloc_cell, 9 },
	{ "GROWTH", 8, 0, TOP_SORT_GROWTH, growth_cell, 0 },
	{ "FLAG", -16, 0, TOP_SORT_NONE, top_growth_flag, 0 },
};
_Static_assert(sizeof(top_columns) / sizeof(top_columns[0]) <=
	       TOP_MAX_COLUMNS, "a column set is a 64-bit mask, a layout holds them all");
const size_t top_nr_columns = sizeof(top_columns) / sizeof(top_columns[0]);

/* One character at at, if it fits before the terminating NUL. */
static void put_char(char *buf, size_t len, size_t at, char c)
{
	if (at + 1 < len)
		buf[at] = c;
}

/*
 * A cell never pushes the columns after it: cut to the width.  What does not
 * fit in buf is cut too, and the returned end is then past len, as with
 * snprintf().
 */
static int put(char *buf, size_t len, int at, int width, const char *s)
{
	size_t w = width < 0 ? -width : width, n, i, k = at;
	size_t cols;

	/* the width in screen cells: a comm's "ö" is one, "🐘" and "日"
	 * two (never half of one), box drawing one */
	n = top_text_fit(s, w, &cols);
	w += n - cols;		/* padding counts cells, the cell bytes */
	if (k + 1 + w < len) {		/* the usual case: it fits */
		if (at)
			buf[k++] = ' ';
		if (width >= 0) {
			memset(buf + k, ' ', w - n);
			memcpy(buf + k + w - n, s, n);
		} else {
			memcpy(buf + k, s, n);
			memset(buf + k + n, ' ', w - n);
		}
		buf[k + w] = '\0';
		return k + w;
	}
	if (at)
		put_char(buf, len, k++, ' ');
	for (i = 0; width >= 0 && i < w - n; i++)
		put_char(buf, len, k++, ' ');
	for (i = 0; i < n; i++)
		put_char(buf, len, k++, s[i]);
	for (i = 0; width < 0 && i < w - n; i++)
		put_char(buf, len, k++, ' ');
	buf[k < len ? k : len - 1] = '\0';
	return k;
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

unsigned int top_table_show(const struct top_table *tb, bool smaps)
{
	return (tb->si.module ? TOP_SHOW_MODULE : 0) |
	       (smaps ? TOP_SHOW_SMAPS : 0) |
	       (tb->any_container ? TOP_SHOW_CONTAINERS : 0);
}

static bool shown(const struct top_column *c, unsigned int show)
{
	return (c->needs & show) == c->needs;
}

uint64_t top_columns_all(unsigned int show)
{
	uint64_t set = 0;
	size_t i;

	for (i = 0; i < top_nr_columns; i++)
		if (shown(&top_columns[i], show))
			set |= 1ULL << i;
	return set;
}

static int column_width(size_t i)
{
	return abs(top_columns[i].width);
}

uint64_t top_column_bits(const char *title, enum top_sort sort)
{
	uint64_t set = 0;
	size_t i;

	for (i = 0; i < top_nr_columns; i++)
		if ((title && !strcmp(top_columns[i].title, title)) ||
		    (sort != TOP_SORT_NONE && top_columns[i].sort == sort))
			set |= 1ULL << i;
	return set;
}

int top_column_index(const char *title)
{
	size_t i;

	for (i = 0; i < top_nr_columns; i++)
		if (!strcasecmp(top_columns[i].title, title))
			return (int)i;
	return -1;
}

void top_layout_default(struct top_layout *l)
{
	for (l->n = 0; l->n < top_nr_columns; l->n++)
		l->col[l->n] = (uint8_t)l->n;
}

uint64_t top_layout_mask(const struct top_layout *l)
{
	uint64_t set = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		set |= 1ULL << l->col[i];
	return set;
}

/* Column i into set if it fits in width beside what is there (the first
 * always): a column is shown whole or not at all, never its digits cut. */
static void add_if_fits(uint64_t *set, int *used, size_t i, int width)
{
	int w = (*used ? 1 : 0) + column_width(i);

	if (*set & (1ULL << i) || (*used && *used + w > width))
		return;
	*set |= 1ULL << i;
	*used += w;
}

uint64_t top_columns_fit(uint64_t all, uint64_t must, int width)
{
	uint64_t set = 0;
	int used = 0, rank, max_rank = 0;
	size_t i;

	/* the ones asked for first, then rank 0, each if it fits */
	for (i = 0; i < top_nr_columns; i++) {
		if (!(all & (1ULL << i)))
			continue;
		if (top_columns[i].rank > max_rank)
			max_rank = top_columns[i].rank;
		if (must & (1ULL << i))
			add_if_fits(&set, &used, i, width);
	}
	for (i = 0; i < top_nr_columns; i++)
		if ((all & (1ULL << i)) && top_columns[i].rank == 0)
			add_if_fits(&set, &used, i, width);
	/* then the rest by rank, each one that still fits */
	for (rank = 1; rank <= max_rank; rank++)
		for (i = 0; i < top_nr_columns; i++) {
			int w = 1 + column_width(i);

			if (!(all & ~set & (1ULL << i)) ||
			    top_columns[i].rank != rank || used + w > width)
				continue;
			set |= 1ULL << i;
			used += w;
		}
	return set;
}

/* The k-th column to show: of order, or of the table if order is NULL. */
static size_t nth(const struct top_layout *order, size_t k)
{
	return order ? order->col[k] : k;
}

int top_columns_cells(uint64_t cols, const struct top_layout *order)
{
	size_t k, n = order ? order->n : top_nr_columns, i;
	int cells = 0;

	for (k = 0; k < n; k++) {
		i = nth(order, k);
		if (cols & (1ULL << i))
			cells += (cells ? 1 : 0) + column_width(i);
	}
	return cells;
}

int top_format_header(char *buf, size_t len, uint64_t cols,
		      const struct top_layout *order)
{
	size_t k, n = order ? order->n : top_nr_columns, i;
	int at = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		i = nth(order, k);
		if (cols & (1ULL << i))
			at = put(buf, len, at, top_columns[i].width,
				 top_columns[i].title);
	}
	return trim(buf, len, at);
}

int top_format_row(const struct top_row *r, char *buf, size_t len,
		   uint64_t cols, const struct top_layout *order)
{
	size_t k, n = order ? order->n : top_nr_columns, i;
	char cell[64];
	int at = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		i = nth(order, k);
		if (!(cols & (1ULL << i)))
			continue;
		top_columns[i].cell(r, cell, sizeof(cell));
		at = put(buf, len, at, top_columns[i].width, cell);
	}
	return trim(buf, len, at);
}
