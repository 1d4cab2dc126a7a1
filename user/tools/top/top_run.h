/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-top -b's loop (top_run.c). */
#ifndef MEMTRACK_TOP_RUN_H
#define MEMTRACK_TOP_RUN_H

#include "top_columns.h"
#include "top_opts.h"

/*
 * Samples of src printed as o says, the columns of layout (toprc's, else
 * the default) in its order: the exit status, 1 when a sample fails.
 */
int top_run_batch(struct mt_source *src, const struct top_opts *o,
		  const struct top_layout *layout);
/* Samples of the cluster; a failed answer ends it (exit 1). */
int top_run_cluster_batch(const struct top_opts *o);

#endif
