/* SPDX-License-Identifier: GPL-2.0 */
/* The events pane's lines (top_events.c). */
#ifndef MEMTRACK_TOP_EVENTS_H
#define MEMTRACK_TOP_EVENTS_H

#include <stdarg.h>
#include "top.h"

#define TOP_EVENTS_KEEP	64

struct top_events {
	/* subscribed through it (so that a module reload is survived: the
	 * source joins again); NULL without the module */
	struct mt_source *src;
	char status[96];		/* why there are no module events */
	char lines[TOP_EVENTS_KEEP][160];
	unsigned int next, n;		/* ring: newest at next - 1 */
};

void top_events_open(struct top_events *ev, struct mt_source *src);
/* OOM kills, reclaim stalls and RSS alerts the module sent meanwhile. */
void top_events_read(struct top_events *ev);
/* Processes of the table whose growth flag has just come on. */
void top_events_growth(struct top_events *ev, const struct top_table *tb);
/* The i-th newest line (0: newest), NULL past the end. */
const char *top_events_line(const struct top_events *ev, unsigned int i);

#endif
