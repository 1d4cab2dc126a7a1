/* SPDX-License-Identifier: GPL-2.0 */
/* What the interactive view shows of the table (top_view.c). */
#ifndef MEMTRACK_TOP_VIEW_H
#define MEMTRACK_TOP_VIEW_H

#include <sys/types.h>
#include "top.h"

struct top_view_opts {
	char filter[64];		/* in the command, any case; "" all */
	bool by_user;
	uid_t uid;
	bool threads;			/* each process's threads under it */
	bool tree;			/* children under their parent */
	bool programs;			/* one row per command name, summed */
	bool cgroups;			/* one row per cgroup, summed */
	bool kthreads;			/* kernel threads too (K) */
	enum top_sort sort;
	bool reverse;
};

struct top_view {
	struct top_row *rows;
	size_t n, cap;
};

/* Threads are fetched for at most this many processes per refresh. */
#define TOP_VIEW_MAX_THREAD_PROCS	256

int top_view_build(struct top_view *v, struct top_table *tb,
		   const struct top_view_opts *o);
void top_view_free(struct top_view *v);

#endif
