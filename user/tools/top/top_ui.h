/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-top's interactive view (top_ui.c and the files of top_ui_int.h). */
#ifndef MEMTRACK_TOP_UI_H
#define MEMTRACK_TOP_UI_H

#include "top.h"
#include "top_columns.h"

struct top_ui_opts {
	double delay;			/* seconds between samples */
	int sort;			/* a column of top_columns.h */
	bool smaps;			/* PSS and USS from the start */
	bool mono;			/* -C or NO_COLOR: no colours */
	bool kthreads;			/* kernel threads shown from the start */
	const char *filter;		/* -F: the filter at start; NULL none */
	const pid_t *pids;		/* -p: only these, sorted; npids 0 all */
	size_t npids;
	bool by_user;			/* -u: only uid's processes at start */
	uid_t uid;
	const char *user;		/* its name as given */
	unsigned int group;		/* --group: enum top_group at start */
	/* the aggregator of --cluster (start in the cluster view), NULL:
	 * the config's, asked only when A is pressed */
	const char *cluster;
	struct top_growth growth;	/* the flag's settings */
	struct top_layout layout;	/* the columns, in their order */
	const char *toprc;		/* where F2 saves; NULL: nowhere */
};

/* The interactive view until q or a quit signal; the exit status. */
int top_ui_run(struct mt_source *src, const struct top_ui_opts *o);

#endif
