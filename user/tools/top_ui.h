/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_TOP_UI_H
#define MEMTRACK_TOP_UI_H

#include "top.h"

/*
 * The interactive view until q or a quit signal; the exit status.  cluster:
 * the aggregator of --cluster (start in the cluster view), NULL: the
 * config's, asked only when c is pressed.  growth: the flag's settings.
 */
int top_ui_run(struct mt_source *src, double delay, enum top_sort sort,
	       bool smaps, const char *cluster, const struct top_growth *growth);

#endif
