/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's detail pane of the selected process (top_detail.c):
 * Enter its memory (the split, the module's counters, a summary of its
 * maps, a small RSS history), l its open files (as ls -l /proc/PID/fd).
 * The pane follows the selection; the history starts again with each
 * process.  Everything but the history is read when the pane is drawn.
 */
#ifndef MEMTRACK_TOP_DETAIL_H
#define MEMTRACK_TOP_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include "top.h"

#define TOP_DETAIL_HISTORY	60	/* RSS samples kept */
#define TOP_DETAIL_WIDTH	256	/* a line, bytes */

enum top_detail_kind {
	TOP_DETAIL_NONE,
	TOP_DETAIL_MEMORY,		/* Enter */
	TOP_DETAIL_FILES,		/* l */
	TOP_DETAIL_LEAK,		/* s: memtrack-leak (top_leak.h) */
};

struct top_detail {
	enum top_detail_kind kind;
	pid_t pid;			/* whose history this is */
	uint64_t start_ns;
	uint64_t rss[TOP_DETAIL_HISTORY];
	size_t nrss;			/* oldest first */
};

/* Enter or l: open that kind, or close it if it is the one open. */
void top_detail_toggle(struct top_detail *d, enum top_detail_kind kind);
/* After each table refresh: r's RSS into the history (r NULL: none). */
void top_detail_sample(struct top_detail *d, const struct top_row *r);
/*
 * The pane's lines for r (at most max, TOP_DETAIL_WIDTH bytes each), the
 * first a title; the number written.  module: the row has the module's
 * counters.
 */
int top_detail_lines(const struct top_detail *d, const struct top_row *r,
		     bool module, char (*out)[TOP_DETAIL_WIDTH], int max);

#endif
