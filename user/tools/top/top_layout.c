// SPDX-License-Identifier: GPL-2.0
/*
 * Sets of memtrack-top's columns and their text (top_columns.h): what
 * show allows, what fits a terminal's width, a layout's order, a column
 * found by its name or title; the header and a row as a line.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "top_columns.h"
#include "top_text.h"

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

int top_column_index(const char *name)
{
	size_t i;

	for (i = 0; i < top_nr_columns; i++)
		if (!strcmp(top_columns[i].name, name))
			return (int)i;
	return -1;
}

/* s is title, any case, its leading "%" or trailing "/s" left off or not. */
static bool title_is(const char *title, const char *s)
{
	size_t n = strlen(title);

	if (!strcasecmp(title, s))
		return true;
	if (title[0] == '%' && !strcasecmp(title + 1, s))
		return true;
	return n > 2 && !strcmp(title + n - 2, "/s") &&
	       strlen(s) == n - 2 && !strncasecmp(title, s, n - 2);
}

int top_column_find(const char *s)
{
	int i = top_column_index(s);
	size_t k;

	if (i >= 0)
		return i;
	for (k = 0; k < top_nr_columns; k++)
		if (title_is(top_columns[k].title, s))
			return (int)k;
	return -1;
}

int top_column_sort_find(const char *s)
{
	int i = top_column_find(s);

	return i >= 0 && top_columns[i].sort ? i : -1;
}

void top_column_key(const struct top_column *c, char *buf, size_t len)
{
	const char *t = c->title + (c->title[0] == '%');
	size_t n = strlen(t), i;

	if (n > 2 && !strcmp(t + n - 2, "/s"))
		n -= 2;
	for (i = 0; i < n && i + 1 < len; i++)
		buf[i] = (char)tolower((unsigned char)t[i]);
	if (len)
		buf[i] = '\0';
}

void top_sort_keys_print(FILE *f)
{
	char key[32];
	const char *note;
	size_t i;

	fprintf(f, "%-12s %-13s %s\n", "KEY", "COLUMN", "NOTE");
	for (i = 0; i < top_nr_columns; i++) {
		const struct top_column *c = &top_columns[i];

		if (!c->sort)
			continue;
		top_column_key(c, key, sizeof(key));
		note = c->needs & TOP_SHOW_NEVER ? "CPU time, in no column" :
		       c->needs & TOP_SHOW_MODULE ? "needs the memtrack module" :
		       !strcmp(c->name, "rss") ? "the default" : "";
		/* no trailing blanks where there is no note */
		fprintf(f, "%-12s %-*s%s\n", key, *note ? 14 : 0,
			c->needs & TOP_SHOW_NEVER ? "-" : c->title, note);
	}
}

void top_layout_default(struct top_layout *l)
{
	size_t i;

	l->n = 0;
	for (i = 0; i < top_nr_columns; i++)
		if (top_columns[i].flags & TOP_COL_DEFAULT)
			l->col[l->n++] = (uint8_t)i;
}

uint64_t top_layout_mask(const struct top_layout *l)
{
	uint64_t set = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		set |= 1ULL << l->col[i];
	return set;
}

void top_layout_with(const struct top_layout *l, int col,
		     struct top_layout *out)
{
	size_t i, at;

	*out = *l;
	if (col < 0 || (top_layout_mask(l) & (1ULL << col)) ||
	    l->n >= TOP_MAX_COLUMNS)
		return;
	/* before the first of the layout's that comes after it in the table */
	for (at = 0; at < l->n && l->col[at] < col; at++)
		;
	for (i = l->n; i > at; i--)
		out->col[i] = out->col[i - 1];
	out->col[at] = (uint8_t)col;
	out->n++;
}

uint64_t top_columns_shown(const struct top_layout *l, unsigned int show,
			   int col)
{
	return (top_layout_mask(l) | top_column_bit(col)) &
	       top_columns_all(show);
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
		top_columns[i].cell(&top_columns[i], r, cell, sizeof(cell));
		at = put(buf, len, at, top_columns[i].width, cell);
	}
	return trim(buf, len, at);
}

