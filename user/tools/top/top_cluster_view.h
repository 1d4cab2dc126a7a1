/* SPDX-License-Identifier: GPL-2.0 */
/* How the cluster view's rows look (top_cluster_view.c). */
#ifndef MEMTRACK_TOP_CLUSTER_VIEW_H
#define MEMTRACK_TOP_CLUSTER_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include "top_cluster.h"

/* programs: the per-program rows (key p), else the processes. */
int top_cluster_format_header(char *buf, size_t len, bool programs);
int top_cluster_format_proc(const struct top_cluster_proc *p, char *buf,
			    size_t len);
int top_cluster_format_prog(const struct top_cluster_prog *p, char *buf,
			    size_t len);
/* The status line: nodes up and down, the answer's age, or why none. */
void top_cluster_status(const struct top_cluster_snap *s, const char *name,
			double now, char *buf, size_t len);

/*
 * -b: a header line, the processes, then the programs; --json: a "cluster"
 * object, then a line per process ("task") and per program ("program").
 */
void top_cluster_batch_text(FILE *f, const struct top_cluster_snap *s,
			    const char *name);
void top_cluster_batch_json(FILE *f, const struct top_cluster_snap *s,
			    const char *name);

#endif
