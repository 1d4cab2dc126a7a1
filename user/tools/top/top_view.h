/* SPDX-License-Identifier: GPL-2.0 */
/* What the interactive view shows of the table (top_view.c). */
#ifndef MEMTRACK_TOP_VIEW_H
#define MEMTRACK_TOP_VIEW_H

#include <sys/types.h>
#include "top.h"

/* One row per what: the rows sharing it summed. */
enum top_group {
	TOP_GROUP_NONE,			/* a row per process */
	TOP_GROUP_PROGRAM,		/* per command name */
	TOP_GROUP_CGROUP,
	TOP_GROUP_CONTAINER,		/* and one for the host's processes */
	TOP_GROUP_POD,			/* and one for those in none */
	TOP_GROUP_NAMESPACE,		/* (a filter's key only) */
};

struct top_view_opts {
	/*
	 * In the command, any case; "" all.  "pod=TEXT", "namespace=TEXT"
	 * (or "ns="), "container=TEXT": in that name instead.
	 */
	char filter[64];
	bool by_user;
	uid_t uid;
	/* -p: only these processes, sorted (kernel threads too); 0: all */
	const pid_t *pids;
	size_t npids;
	bool threads;			/* each process's threads under it */
	bool tree;			/* children under their parent */
	enum top_group group;
	bool kthreads;			/* kernel threads too (K) */
	int sort;			/* a column of top_columns.h */
	bool reverse;
};

struct top_view {
	struct top_row *rows;
	size_t n, cap;
};

/* Threads are fetched for at most this many processes per refresh. */
#define TOP_VIEW_MAX_THREAD_PROCS	256

/* Does r pass the filter (top_view_opts' filter)? */
bool top_filter_match(const struct top_row *r, const char *filter);
/* The text in a filter, of "KEY=TEXT" or not; "" for none. */
const char *top_filter_text(const char *filter);

int top_view_build(struct top_view *v, struct top_table *tb,
		   const struct top_view_opts *o);
void top_view_free(struct top_view *v);

#endif
