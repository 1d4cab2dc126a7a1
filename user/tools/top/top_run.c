// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top -b's loop (top_run.h): a sample each delay, filtered,
 * grouped and sorted as the interactive view would show it, printed by
 * top_batch.c (text or JSON lines) until -n samples or the reader is gone;
 * with --cluster, the aggregator's answers instead.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "top_cluster.h"
#include "top_cluster_view.h"
#include "top_columns.h"
#include "top_run.h"
#include "top_smaps.h"

static void sleep_for(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec };

	ts.tv_nsec = (long)((sec - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int top_run_cluster_batch(const struct top_opts *o)
{
	struct top_cluster *c;
	struct top_cluster_snap s;
	char err[512];
	int timeout_ms = o->delay > 5 ? (int)(o->delay * 1000) : 5000;
	long i;
	int rc = 0;

	c = top_cluster_new(o->cluster, NULL, o->rows ? (size_t)o->rows : 100,
			    err, sizeof(err));
	if (!c) {
		warnx("--cluster: %s", err);
		return 1;
	}
	for (i = 0; !o->iterations || i < o->iterations; i++) {
		if (i)
			sleep_for(o->delay);
		if (top_cluster_fetch(c, timeout_ms, &s)) {
			warnx("%s: %s",
				top_cluster_name(c), s.error);
			rc = 1;
			break;
		}
		if (o->json)
			top_cluster_batch_json(stdout, &s, top_cluster_name(c));
		else
			top_cluster_batch_text(stdout, &s, top_cluster_name(c));
		top_cluster_snap_free(&s);
		if (fflush(stdout) == EOF)
			break;
	}
	top_cluster_free(c);
	return rc;
}

/*
 * A sample filtered or grouped as the interactive view would show it: the
 * view's rows printed in the table's place.
 */
static int batch_view(struct top_table *tb, const struct top_opts *o,
		      uint64_t cols, const struct top_layout *layout)
{
	struct top_view_opts vo = {
		.kthreads = o->kthreads, .group = o->group, .sort = o->sort,
		.pids = o->pids, .npids = o->npids, .by_user = o->by_user,
		.uid = o->uid,
	};
	struct top_view v = { 0 };
	struct top_row *rows = tb->rows;
	size_t n = tb->n, nrows;
	int err;

	if (o->filter)
		snprintf(vo.filter, sizeof(vo.filter), "%s", o->filter);
	err = top_view_build(&v, tb, &vo);
	if (err)
		goto out;
	nrows = o->rows && (size_t)o->rows < v.n ? (size_t)o->rows : v.n;
	tb->rows = v.rows;
	tb->n = v.n;
	if (o->smaps)
		top_rows_smaps(tb->rows, nrows);
	if (o->json)
		top_batch_json(stdout, tb, mt_source_name(tb->src), cols, v.n,
			       nrows);
	else
		top_batch_text(stdout, tb, mt_source_name(tb->src), cols,
			       layout, v.n, nrows);
	tb->rows = rows;
	tb->n = n;
out:
	top_view_free(&v);
	return err;
}

int top_run_batch(struct mt_source *src, const struct top_opts *o,
		  const struct top_layout *toprc)
{
	struct top_layout order, *layout = &order;
	struct top_table tb;
	uint64_t cols;
	size_t rows, listed;
	long i;
	int err = 0;

	top_layout_with(toprc, o->sort, &order);
	top_table_init(&tb, src, &o->growth);
	for (i = 0; !o->iterations || i < o->iterations; i++) {
		if (i)
			sleep_for(o->delay);
		err = top_table_refresh(&tb);
		if (err) {
			warnx("%s", mt_errmsg());
			break;
		}
		/* the layout's columns (toprc's), the sort's among them */
		cols = top_columns_shown(layout, top_table_show(&tb, o->smaps),
					 o->sort);
		if (o->filter || o->group || o->npids || o->by_user) {
			err = batch_view(&tb, o, cols, layout);
			if (err) {
				warnx("%s", strerror(-err));
				break;
			}
			if (fflush(stdout) == EOF)
				break;
			continue;
		}
		top_table_sort(&tb, o->sort, false);
		/* the interactive view's default: kernel threads hidden */
		listed = o->kthreads ? tb.n : top_table_kthreads_last(&tb);
		rows = o->rows && (size_t)o->rows < listed ? (size_t)o->rows :
		       listed;
		/* the printed rows only: each file is a walk of page tables */
		if (o->smaps)
			top_rows_smaps(tb.rows, rows);
		if (o->json)
			top_batch_json(stdout, &tb, mt_source_name(src), cols,
				       listed, rows);
		else
			top_batch_text(stdout, &tb, mt_source_name(src), cols,
				       layout, listed, rows);
		if (fflush(stdout) == EOF)
			break;		/* reader gone: nothing to print to */
	}
	top_table_free(&tb);
	return err ? 1 : 0;
}

