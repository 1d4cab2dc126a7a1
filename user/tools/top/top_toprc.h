/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's settings file (top_toprc.c), written by F2 and read at
 * start, as htop's htoprc: $XDG_CONFIG_HOME/memtrack/toprc (else
 * ~/.config/memtrack/toprc), INI (inih):
 *
 *   [memtrack-top]
 *   columns = PID,USER,COMMAND,RSS,ANON,GROWTH,FLAG
 *   sort = RSS
 *   delay = 2
 *
 * columns: the column titles in their order (or names); sort: a column's title (or
 * TIME); delay: seconds, 0.1..3600.  -d and -o on the command line win.
 */
#ifndef MEMTRACK_TOP_TOPRC_H
#define MEMTRACK_TOP_TOPRC_H

#include <stdbool.h>
#include <stddef.h>
#include "top.h"
#include "top_columns.h"

struct top_toprc {
	struct top_layout layout;	/* default: every column */
	int sort;			/* a column that sorts */
	bool has_sort;
	double delay;
	bool has_delay;
};

/* The file's path into buf: -1 if neither XDG_CONFIG_HOME nor HOME is set. */
int top_toprc_path(char *buf, size_t len);
/*
 * Read path into rc (defaults first; a missing file, or one we may not
 * read, leaves them): 0, or -1 with "PATH:LINE: why" in err, rc as it was.
 */
int top_toprc_load(const char *path, struct top_toprc *rc, char *err,
		   size_t errlen);
/* Write rc to path (its directory made if missing): 0, or -errno. */
int top_toprc_save(const char *path, const struct top_toprc *rc);
/* A sort key's name in the file (a column's title, or TIME); NULL if none. */
const char *top_sort_title(int sort);
/* The column that sorts named title (top_column_find()): 0, or -1. */
int top_sort_from_title(const char *title, int *sort);

#endif
