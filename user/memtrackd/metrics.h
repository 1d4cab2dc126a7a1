/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's /metrics text (metrics.c), Prometheus exposition 0.0.4, and
 * the way families and series are written, which the relay's families
 * (relay.c) share.
 */
#ifndef MEMTRACKD_METRICS_H
#define MEMTRACKD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct mtd_state;

struct mtd_expo_opts {
	const char *node;		/* the node label's value; NULL: none */
	const char *source;
	unsigned int top_pids;
};

/* A label value with \ " and newline escaped, invalid UTF-8 as U+FFFD. */
void mtd_buf_label(struct mtd_buf *b, const char *s, size_t len);

/* A family's HELP and TYPE lines. */
void mtd_family(struct mtd_buf *b, const char *name, const char *type,
		const char *help);

/*
 * One sample line: begin (the name, and the node label if there is one),
 * labels, then the value (ns: nanoseconds, written in seconds).
 */
struct mtd_series {
	struct mtd_buf *b;
	bool labels;			/* a label written: braces to close */
};

void mtd_series_begin(struct mtd_series *s, struct mtd_buf *b,
		      const char *name, const struct mtd_expo_opts *o);
void mtd_series_label(struct mtd_series *s, const char *key, const char *v,
		      size_t len);
void mtd_series_value(struct mtd_series *s, uint64_t v, bool ns);

/* The whole /metrics text; 0 or -ENOMEM. */
int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtd_buf *b);

#endif /* MEMTRACKD_METRICS_H */
