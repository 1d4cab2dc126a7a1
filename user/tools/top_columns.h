/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-top's columns, shared by the batch and the interactive views. */
#ifndef MEMTRACK_TOP_COLUMNS_H
#define MEMTRACK_TOP_COLUMNS_H

#include <stddef.h>
#include <stdint.h>
#include "top.h"

/* Columns shown only sometimes: with the module, when asked for. */
#define TOP_SHOW_MODULE	1U		/* the module's event counters */
#define TOP_SHOW_SMAPS	2U		/* PSS and USS (top_smaps.c) */
#define TOP_SHOW_CONTAINERS 4U		/* CONTAINER and POD: a row is in one */

/* What a sample of tb allows (TOP_SHOW_*), PSS and USS if smaps. */
unsigned int top_table_show(const struct top_table *tb, bool smaps);

struct top_column {
	const char *title;
	int width;			/* negative: left-aligned */
	unsigned int needs;		/* TOP_SHOW_*: shown only then; 0 always */
	enum top_sort sort;		/* what sorting by it means */
	/* The cell's text, at most len - 1 characters. */
	void (*cell)(const struct top_row *r, char *buf, size_t len);
	int rank;			/* kept on narrow terminals: 0 first */
};

extern const struct top_column top_columns[];
extern const size_t top_nr_columns;

#define TOP_MAX_COLUMNS	32

/*
 * The columns a user chose, in their order (toprc, F2): indexes into
 * top_columns; by default all, in the table's order.
 */
struct top_layout {
	size_t n;
	uint8_t col[TOP_MAX_COLUMNS];
};

void top_layout_default(struct top_layout *l);
uint64_t top_layout_mask(const struct top_layout *l);
/* top_columns' index of the column titled title (any case), or -1. */
int top_column_index(const char *title);

/*
 * Sets of columns, bit i for top_columns[i]: all of those show allows
 * (TOP_SHOW_*); of the set all, those that fit whole in width cells (a
 * narrow terminal drops a column rather than cut its digits): those in
 * must first, then rank 0, then by rank, the first kept whatever its
 * width; the one titled title and the one sorting by sort (either may be
 * NULL / TOP_SORT_NONE).
 */
uint64_t top_columns_all(unsigned int show);
uint64_t top_columns_fit(uint64_t all, uint64_t must, int width);
uint64_t top_column_bits(const char *title, enum top_sort sort);
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
