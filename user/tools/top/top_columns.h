/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's columns (top_columns.c): one row of a table per column,
 * and everything that shows, sorts, names or saves a column reads that
 * row: the table's drawing, the sort, -o, the F6 menu, F2's setup, toprc,
 * the batch text and -b --json.  The counters' columns are made from
 * libmemtrack's mt_counters[] (the ABI's one list), one per counter.
 */
#ifndef MEMTRACK_TOP_COLUMNS_H
#define MEMTRACK_TOP_COLUMNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "top.h"

/* Columns shown only sometimes: with the module, when asked for. */
#define TOP_SHOW_MODULE	1U		/* the module's event counters */
#define TOP_SHOW_SMAPS	2U		/* PSS and USS (top_smaps.c) */
#define TOP_SHOW_CONTAINERS 4U		/* CONTAINER and POD: a row is in one */
#define TOP_SHOW_NEVER	8U		/* a sort key no column shows (TIME) */

/* What a sample of tb allows (TOP_SHOW_*), PSS and USS if smaps. */
unsigned int top_table_show(const struct top_table *tb, bool smaps);

/* struct top_column's flags */
#define TOP_COL_DEFAULT	1U		/* in the layout by default */
#define TOP_COL_JSON_ANY 2U		/* in JSON whatever needs says */

struct top_column {
	const char *name;		/* -o's key, JSON's, toprc's */
	const char *title;		/* the header's; toprc's, -o's too */
	int width;			/* negative: left-aligned */
	unsigned int needs;		/* TOP_SHOW_*: shown only then; 0 always */
	unsigned int flags;		/* TOP_COL_* */
	int rank;			/* kept on narrow terminals: 0 first */
	int ctr;			/* the ABI counter it shows; -1 none */
	/* The cell's text, at most len - 1 characters. */
	void (*cell)(const struct top_column *c, const struct top_row *r,
		     char *buf, size_t len);
	/* The value it sorts by (largest first); NULL: it does not sort. */
	double (*sort)(const struct top_column *c, const struct top_row *r);
	/* Its JSON value (after "name":). */
	void (*json)(FILE *f, const struct top_column *c,
		     const struct top_row *r);
};

/* 64 at most: a set of columns is a uint64_t, bit i top_columns[i]. */
#define TOP_MAX_COLUMNS	64

extern const struct top_column *const top_columns;
extern const size_t top_nr_columns;

/*
 * The columns a user chose, in their order (toprc, F2): indexes into
 * top_columns; by default those flagged TOP_COL_DEFAULT, in the table's
 * order.
 */
struct top_layout {
	size_t n;
	uint8_t col[TOP_MAX_COLUMNS];
};

void top_layout_default(struct top_layout *l);
uint64_t top_layout_mask(const struct top_layout *l);
/*
 * The index of the column named s: its name, or its title in any case,
 * with its leading "%" or trailing "/s" left off or not; -1 if none.
 */
int top_column_find(const char *s);
/* The same for a column that sorts; -1 if none (or it does not sort). */
int top_column_sort_find(const char *s);
/* The index of the column named name (exactly); -1 if none. */
int top_column_index(const char *name);
/*
 * A column's key for -o: its title in lower case, its leading "%" and
 * trailing "/s" left off (PGALLOC/s: pgalloc), which top_column_find()
 * finds it by.
 */
void top_column_key(const struct top_column *c, char *buf, size_t len);
/*
 * -o help: every key that sorts, its column and a note, a line each after
 * a header (as htop's --sort-key help; the bash completion reads it).
 */
void top_sort_keys_print(FILE *f);

/*
 * Sets of columns, bit i for top_columns[i]: all of those show allows
 * (TOP_SHOW_*); of the set all, those that fit whole in width cells (a
 * narrow terminal drops a column rather than cut its digits): those in
 * must first, then rank 0, then by rank, the first kept whatever its
 * width; the column col (-1: none).
 */
uint64_t top_columns_all(unsigned int show);
uint64_t top_columns_fit(uint64_t all, uint64_t must, int width);
static inline uint64_t top_column_bit(int col)
{
	return col >= 0 ? 1ULL << col : 0;
}
/*
 * l with column col (the sort's) if it lacks it, where it comes in the
 * table: -o and the sort keys show a hidden column.
 */
void top_layout_with(const struct top_layout *l, int col,
		     struct top_layout *out);
/* The columns shown of a layout: those show allows, and col's (the sort's). */
uint64_t top_columns_shown(const struct top_layout *l, unsigned int show,
			   int col);
/* The screen cells of the columns in cols, whole (the last untrimmed). */
int top_columns_cells(uint64_t cols, const struct top_layout *order);
/* The header or one row as text, the columns in cols, in order's order
 * (NULL: the table's). */
int top_format_header(char *buf, size_t len, uint64_t cols,
		      const struct top_layout *order);
int top_format_row(const struct top_row *r, char *buf, size_t len,
		   uint64_t cols, const struct top_layout *order);
/* Draw the tree's branches with UTF-8 box drawing (else ASCII). */
extern bool top_columns_utf8;
/* "LEAK? +1.5M/s" for a growing process, "-" otherwise. */
void top_growth_flag(const struct top_row *r, char *buf, size_t len);

#endif
