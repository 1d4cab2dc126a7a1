/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's /metrics text (metrics.c), Prometheus exposition 0.0.4, and
 * the label escaping the relay's families (relay.c) share.
 */
#ifndef MEMTRACKD_METRICS_H
#define MEMTRACKD_METRICS_H

#include <stddef.h>

#include "buf.h"

struct mtd_state;

/* A label value with \ " and newline escaped, invalid UTF-8 as U+FFFD. */
void mtd_buf_label(struct mtd_buf *b, const char *s, size_t len);

struct mtd_expo_opts {
	const char *node;
	const char *source;
	unsigned int top_pids;
};

/* The whole /metrics text; 0 or -ENOMEM. */
int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtd_buf *b);

#endif /* MEMTRACKD_METRICS_H */
