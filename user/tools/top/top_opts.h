/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-top's command line (top_opts.c). */
#ifndef MEMTRACK_TOP_OPTS_H
#define MEMTRACK_TOP_OPTS_H

#include <stdbool.h>
#include <sys/types.h>
#include "top.h"
#include "top_view.h"

struct top_opts {
	bool batch, json, proc, smaps, mono;
	bool kthreads;			/* --kernel-threads: listed from the start */
	bool delay_set, sort_set;	/* -d, -o given: they beat toprc */
	long iterations;		/* 0: for ever */
	long rows;			/* --top; 0: all */
	double delay;
	int sort;			/* a column of top_columns.h */
	const char *sort_key;		/* -o's text, as typed */
	const char *cluster;		/* --cluster */
	struct top_growth growth;	/* --growth-window, --growth-min-rate */
	const char *filter;		/* -F */
	enum top_group group;		/* --group */
	pid_t *pids;			/* -p, sorted; NULL: all */
	size_t npids;
	bool by_user;			/* -u */
	uid_t uid;
	const char *user;
};

/*
 * argv into o: 0, or the exit status (2) after saying why (-h and -V
 * exit).
 */
int top_opts_parse(int argc, char **argv, struct top_opts *o);

#endif
