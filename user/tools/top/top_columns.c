// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's columns (top_columns.h): the table of them, a row each,
 * and what reads it to draw a header or a row.  Sizes in KiB as top prints
 * them, rates per second over the last interval, RSS growth over the
 * window in KiB; a column per counter of the ABI's list (mt_counters[]).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include "top_coljson.h"
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
static void pid_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	size_t k;

	(void)c;
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

static void user_cell(const struct top_column *c, const struct top_row *r,
		      char *b, size_t n)
{
	(void)c;
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

static void comm_cell(const struct top_column *c, const struct top_row *r,
		      char *b, size_t n)
{
	unsigned int depth = r->depth < 8 ? r->depth : 8;
	size_t i, k = 0;

	(void)c;
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

/* The cell of a column of bytes, in KiB. */
static void kib_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	(void)n;
	mt_fmt_u64(b, (uint64_t)c->sort(c, r) >> 10);
}

static double rss_val(const struct top_column *c, const struct top_row *r)
{
	(void)c;
	return top_rss(&r->t);
}

#define MM_VAL(field)							\
static double field##_val(const struct top_column *c,			\
			  const struct top_row *r)			\
{									\
	(void)c;							\
	return r->t.mm.field;						\
}
MM_VAL(rss_anon)
MM_VAL(rss_file)
MM_VAL(rss_shmem)
MM_VAL(swap)
MM_VAL(vm_total)

/* By PID: the smallest first. */
static double pid_val(const struct top_column *c, const struct top_row *r)
{
	(void)c;
	return -(double)r->t.pid;
}

static double cpu_val(const struct top_column *c, const struct top_row *r)
{
	(void)c;
	return r->cpu_pct;
}

static double time_val(const struct top_column *c, const struct top_row *r)
{
	(void)c;
	return r->t.utime_ns + r->t.stime_ns;
}

static double growth_val(const struct top_column *c, const struct top_row *r)
{
	(void)c;
	return r->rss_growth;
}

/*
 * A counter's column: its rate per second over the last interval, in the
 * column's unit (events, KiB, ms; KiB net, signed).  The module's counters
 * of a process the reader may not see (not its own, no CAP_SYS_PTRACE: the
 * module's rule, README) are not zero: unknown, "-".
 */
static double ctr_val(const struct top_column *c, const struct top_row *r)
{
	double v = r->rate[c->ctr];

	switch (mt_counters[c->ctr].unit) {
	case MEMTRACK_UNIT_BYTES:
	case MEMTRACK_UNIT_NET_BYTES:
		return v / 1024;
	case MEMTRACK_UNIT_NS:
		return v / 1e6;
	default:
		return v;
	}
}

static bool ctr_known(const struct top_column *c, const struct top_row *r)
{
	return r->t.detailed || !mt_counter_needs_module(c->ctr);
}

static void ctr_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	double v;

	if (!ctr_known(c, r)) {
		put_str(b, n, "-", 1);
		return;
	}
	v = ctr_val(c, r);
	/* ms/s: a stall's tenths show; the others as whole numbers */
	if (v < 0) {
		b[0] = '-';
		put_fixed(b + 1, n - 1, -v, 0);
	} else {
		put_fixed(b, n, v,
			  mt_counters[c->ctr].unit == MEMTRACK_UNIT_NS);
	}
}

static void ctr_json(FILE *f, const struct top_column *c,
		     const struct top_row *r)
{
	if (ctr_known(c, r))
		fprintf(f, "%.1f", ctr_val(c, r));
	else
		fputs("null", f);
}

/* Not read (a thread, a sum, a process not ours to read): "-". */
static void pss_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	(void)c;
	if (r->has_smaps)
		mt_fmt_u64(b, r->pss >> 10);
	else
		put_str(b, n, "-", 1);
}

static void uss_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	(void)c;
	if (r->has_smaps)
		mt_fmt_u64(b, r->uss >> 10);
	else
		put_str(b, n, "-", 1);
}

/* The end of a long path says most: keep it. */
static void cgroup_cell(const struct top_column *c, const struct top_row *r,
			char *b, size_t n)
{
	size_t len = strlen(r->cgroup);

	(void)c;
	if (len > 20) {
		b[0] = b[1] = '.';
		put_str(b + 2, n - 2, r->cgroup + len - 18, 18);
	} else {
		put_str(b, n, r->cgroup, len);
	}
}

/* The container's name; "-" outside one, and in a per-pod row. */
static void container_cell(const struct top_column *col,
			   const struct top_row *r, char *b, size_t n)
{
	const struct mt_container *c = r->ct;

	(void)col;
	if (c && c->id[0] && r->gkind != TOP_GROUP_POD)
		put_str(b, n, c->name, strlen(c->name));
	else
		put_str(b, n, "-", 1);
}

/* NAMESPACE/POD as kubectl names it; the pod's UID until names are known. */
static void pod_cell(const struct top_column *col, const struct top_row *r,
		     char *b, size_t n)
{
	const struct mt_container *c = r->ct;
	size_t k;

	(void)col;
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

static void limit_cell(const struct top_column *c, const struct top_row *r,
		       char *b, size_t n)
{
	(void)c;
	if (r->cg_max != TOP_NO_LIMIT)
		mt_fmt_u64(b, r->cg_max >> 10);
	else
		put_str(b, n, "-", 1);
}

static void cpu_cell(const struct top_column *c, const struct top_row *r,
		     char *b, size_t n)
{
	(void)c;
	put_fixed(b, n, r->cpu_pct, 1);
}

static void growth_cell(const struct top_column *c, const struct top_row *r,
			char *b, size_t n)
{
	int64_t k = r->rss_growth / 1024;

	(void)c;
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

static void flag_cell(const struct top_column *c, const struct top_row *r,
		      char *b, size_t n)
{
	(void)c;
	top_growth_flag(r, b, n);
}

/*
 * The columns but the counters', in the table's order; the counters'
 * come after LIMIT.  rank: what a narrow terminal keeps, 0 always (with
 * the sort column), then 1, 2, ... as long as they fit: at 80 columns PID
 * USER COMMAND RSS ANON GROWTH FLAG, so that a leak suspect shows on any
 * terminal.
 */
#define D	TOP_COL_DEFAULT
static const struct top_column fixed_before[] = {
	{ "pid", "PID", 7, 0, D, 0, -1, pid_cell, pid_val, top_json_pid },
	{ "user", "USER", -8, 0, D, 1, -1, user_cell, NULL, top_json_user },
	{ "comm", "COMMAND", -15, 0, D, 0, -1, comm_cell, NULL,
	  top_json_comm },
	{ "cgroup", "CGROUP", -20, 0, D, 17, -1, cgroup_cell, NULL,
	  top_json_cgroup },
	{ "container", "CONTAINER", -14, TOP_SHOW_CONTAINERS,
	  D | TOP_COL_JSON_ANY, 4, -1, container_cell, NULL,
	  top_json_container },
	{ "pod", "POD", -24, TOP_SHOW_CONTAINERS, D | TOP_COL_JSON_ANY, 11, -1,
	  pod_cell, NULL, top_json_pod },
	{ "cpu_pct", "%CPU", 5, 0, D, 3, -1, cpu_cell, cpu_val, top_json_cpu },
	{ "rss", "RSS", 9, 0, D, 0, -1, kib_cell, rss_val, top_json_int },
	{ "rss_anon", "ANON", 9, 0, D, 2, -1, kib_cell, rss_anon_val,
	  top_json_int },
	{ "rss_file", "FILE", 8, 0, D, 5, -1, kib_cell, rss_file_val,
	  top_json_int },
	{ "rss_shmem", "SHMEM", 8, 0, D, 7, -1, kib_cell, rss_shmem_val,
	  top_json_int },
	{ "pss", "PSS", 9, TOP_SHOW_SMAPS, D, 3, -1, pss_cell, NULL,
	  top_json_pss },
	{ "uss", "USS", 9, TOP_SHOW_SMAPS, D, 3, -1, uss_cell, NULL,
	  top_json_uss },
	{ "swap", "SWAP", 8, 0, D, 4, -1, kib_cell, swap_val, top_json_int },
	{ "vm_total", "VIRT", 10, 0, D, 15, -1, kib_cell, vm_total_val,
	  top_json_int },
	{ "cgroup_max", "LIMIT", 8, 0, D, 16, -1, limit_cell, NULL,
	  top_json_limit },
};

static const struct top_column fixed_after[] = {
	{ "rss_growth", "GROWTH", 8, 0, D, 0, -1, growth_cell, growth_val,
	  top_json_growth },
	{ "flag", "FLAG", -16, 0, D, 0, -1, flag_cell, NULL, top_json_flag },
	/* a sort key, not a column: CPU time (-o time, toprc's sort) */
	{ "time", "TIME", 8, TOP_SHOW_NEVER, 0, 99, -1, NULL, time_val,
	  top_json_int },
};
#undef D

/*
 * The counters shown by default, with their rank; every other counter's
 * column is there to be added (F2, toprc, -o), after the rest in rank.
 */
static const struct {
	const char *name;
	int rank;
} default_counters[] = {
	{ "min_flt", 6 }, { "maj_flt", 10 }, { "pg_alloc", 8 },
	{ "kmalloc_calls", 9 },
};
#define COUNTER_RANK	18

#define NR_COLUMNS	(MT_ARRAY_SIZE(fixed_before) + MEMTRACK_NR_COUNTERS + \
			 MT_ARRAY_SIZE(fixed_after))
_Static_assert(NR_COLUMNS <= TOP_MAX_COLUMNS,
	       "a column set is a 64-bit mask, a layout holds them all");

static struct top_column table[NR_COLUMNS];
/* a counter's name: its title in lower case, "/s" as "_rate" */
static char ctr_names[MEMTRACK_NR_COUNTERS][32];

const struct top_column *const top_columns = table;
const size_t top_nr_columns = NR_COLUMNS;

/* "MINFLT/s" -> "minflt_rate", as -b --json has named it. */
static void counter_key(const char *title, char *buf, size_t len)
{
	size_t i, k = 0, n = strlen(title);
	bool rate = n > 2 && !strcmp(title + n - 2, "/s");

	if (rate)
		n -= 2;
	for (i = 0; i < n && k + 1 < len; i++)
		buf[k++] = isalnum((unsigned char)title[i]) ?
			   tolower((unsigned char)title[i]) : '_';
	buf[k] = '\0';
	if (rate)
		snprintf(buf + k, len - k, "_rate");
}

static struct top_column counter_column(unsigned int i)
{
	const struct mt_counter *m = &mt_counters[i];
	struct top_column c = {
		.title = m->title, .needs = 0, .rank = COUNTER_RANK,
		.ctr = (int)i, .cell = ctr_cell, .sort = ctr_val,
		.json = ctr_json,
	};
	size_t k;

	counter_key(m->title, ctr_names[i], sizeof(ctr_names[i]));
	c.name = ctr_names[i];
	c.width = strlen(m->title) > 8 ? (int)strlen(m->title) : 8;
	if (mt_counter_needs_module(i))
		c.needs = TOP_SHOW_MODULE;
	for (k = 0; k < MT_ARRAY_SIZE(default_counters); k++)
		if (!strcmp(m->name, default_counters[k].name)) {
			c.flags = TOP_COL_DEFAULT;
			c.rank = default_counters[k].rank;
		}
	return c;
}

/* The table, before main(): the counters' rows from mt_counters[]. */
__attribute__((constructor)) static void columns_init(void)
{
	size_t k = 0, i;

	for (i = 0; i < MT_ARRAY_SIZE(fixed_before); i++)
		table[k++] = fixed_before[i];
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		table[k++] = counter_column(i);
	for (i = 0; i < MT_ARRAY_SIZE(fixed_after); i++)
		table[k++] = fixed_after[i];
}
