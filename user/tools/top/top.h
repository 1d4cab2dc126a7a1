/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's process table (top_table.c): a row per process with its
 * rates and growth; batch output of it (top_batch.c).
 */
#ifndef MEMTRACK_TOP_H
#define MEMTRACK_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "libmemtrack.h"
#include "top_cgroup.h"

/*
 * The growth flag (a leak suspect): RSS's low point rose in each quarter of
 * the last growth window, and RSS rose over the window by at least the
 * minimum rate.  Low points, not every sample: a process that allocates
 * and frees in cycles (a sawtooth) or settles after its start is not
 * growing; one leaking under such cycles is.  A window of a minute, as a
 * process starting up, a cache warming or a VM booting grow for seconds.
 */
#define TOP_GROWTH_WINDOW	60.0		/* seconds */
#define TOP_GROWTH_MIN_RATE	1024.0		/* bytes/s */
#define TOP_QUARTERS		4

struct top_growth {
	double window;			/* seconds */
	double min_rate;		/* bytes/s */
};

struct top_row {
	struct memtrack_task t;
	char user[32];
	/* per second over the last interval; 0 on the first sample */
	double cpu_pct;
	/* each ABI counter's (mt_counters[]), in its unit (bytes, ns, events;
	 * signed for net growth) */
	double rate[MEMTRACK_NR_COUNTERS];
	/* RSS change since the window's first sample of the process (or its
	 * first sample), and whether it is a leak suspect (see above) */
	int64_t rss_growth;
	double growth_rate;		/* bytes/s over that time */
	bool growing;
	bool growth_new;		/* growing now, not at the last sample */
	bool kthread;			/* a kernel thread (K shows them) */
	/* interactive view: processes summed in a per-program row (0: a
	 * process), depth in the tree, a thread row */
	unsigned int group;
	unsigned int depth;
	bool thread;
	/* the tree's branches: the last of its siblings (a corner, not a
	 * tee), and bit k: the ancestor at depth k has siblings after it
	 * (a line down through level k) */
	bool tree_last;
	uint32_t tree_more;
	/* the process's cgroup: path under the cgroup2 root, memory.max */
	char cgroup[256];
	uint64_t cg_max;		/* TOP_NO_LIMIT: none */
	/* its container and pod (NULL: none), the table's until its next
	 * sample; a summed row's kind (enum top_group of top_view.h) */
	const struct mt_container *ct;
	uint8_t gkind;
	/* from smaps_rollup, read for shown rows only (top_smaps.c) */
	uint64_t pss, uss;
	bool has_smaps;
};

static inline uint64_t top_rss(const struct memtrack_task *t)
{
	return t->mm.rss_anon + t->mm.rss_file + t->mm.rss_shmem;
}

struct top_hist;

struct top_table {
	struct mt_source *src;
	struct mt_sysinfo si;
	struct top_row *rows;
	size_t n;
	double now;			/* CLOCK_MONOTONIC seconds of the sample */
	double wall;			/* its time since the epoch */
	struct top_growth growth;
	double interval;		/* since the previous sample; 0 first */
	struct top_hist *hist;		/* per process, sorted by pid */
	size_t nhist;
	struct top_hist *hist_next;	/* the next sample's, being filled */
	size_t cap;			/* of rows, hist and hist_next */
	struct top_cgroups cgroups;
	struct mt_containers *containers;	/* NULL: no memory for it */
	bool any_container;		/* a row of this sample is in one */
	uint64_t ctr_signed;		/* bit i: counter i is net growth */
};

/* growth: NULL for TOP_GROWTH_WINDOW and TOP_GROWTH_MIN_RATE */
void top_table_init(struct top_table *tb, struct mt_source *src,
		    const struct top_growth *growth);
void top_table_free(struct top_table *tb);
/* A new sample: rows of every live process with rates and growth. */
int top_table_refresh(struct top_table *tb);

/* Sorted by the column top_columns[col] (top_columns.h), as top_rows_sort. */
void top_table_sort(struct top_table *tb, int col, bool reverse);
/*
 * Kernel threads moved after the other rows, both parts in their order:
 * the number of the others (all rows if there is no memory to move them).
 */
size_t top_table_kthreads_last(struct top_table *tb);
/*
 * Largest first by the value of column col (its sort getter; -1, or a
 * column that does not sort: by pid), then by pid; for any array of rows.
 */
void top_rows_sort(struct top_row *rows, size_t n, int col, bool reverse);

/*
 * Batch output of one sample (top_batch.c): of the first listed rows (the
 * processes counted), the first nrows, the columns in cols (a set of
 * top_columns.h) in order's order (NULL: the table's); JSON also names
 * those of TOP_COL_JSON_ANY.
 */
struct top_layout;
void top_batch_text(FILE *f, const struct top_table *tb, const char *source,
		    uint64_t cols, const struct top_layout *order,
		    size_t listed, size_t nrows);
void top_batch_json(FILE *f, const struct top_table *tb, const char *source,
		    uint64_t cols, size_t listed, size_t nrows);

#endif
