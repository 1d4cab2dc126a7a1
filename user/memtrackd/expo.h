/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition writer (expo.c), format 0.0.4: families,
 * series, label values escaped, the values; or the same series handed to a
 * sink as data, for remote write.  Apart from what memtrackd exports
 * (metrics.h, metrics.c) because the daemon's own figures, the relay's
 * (relay.c) and remote write's (remote_write.c), are written with it too,
 * and none of them needs the state's families to do so.
 */
#ifndef MEMTRACKD_EXPO_H
#define MEMTRACKD_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/*
 * Series as data rather than text, for remote write: each finished series
 * is handed to put() with its labels, the metric name first as __name__,
 * values valid UTF-8 (U+FFFD for what is not); ns values in seconds.
 */
struct mtd_label {
	const char *name, *value;
};

struct mtd_series_sink {
	void (*put)(struct mtd_series_sink *k, const struct mtd_label *l,
		    size_t n, double v);
};

struct mtd_expo_opts {
	const char *node;		/* the node label's value; NULL: none */
	/* memtrack_node_info's: the node's name (the relay's and remote
	 * write's), uname's machine and release */
	const char *nodename, *machine, *release;
	const char *source;		/* "module" or "proc" */
	unsigned int top_pids;
	bool containers;		/* memtrack_container_* families */
	struct mtd_series_sink *sink;	/* NULL: text into the buffer */
};

/* A label value with \ " and newline escaped, invalid UTF-8 as U+FFFD. */
void mtd_buf_label(struct mtn_buf *b, const char *s, size_t len);

/* A family's HELP and TYPE lines (with a sink, the caller's scratch). */
void mtd_family(struct mtn_buf *b, const char *name, const char *type,
		const char *help);

/*
 * One sample line: begin (the name, and the node label if there is one),
 * labels, then the value (ns: nanoseconds, written in seconds).
 */
#define MTD_SERIES_MAX_LABELS	8

struct mtd_series {
	struct mtn_buf *b;
	bool labels;			/* a label written: braces to close */
	/* with a sink: the labels so far, their values in vals */
	struct mtd_series_sink *sink;
	size_t nlab, vlen;
	struct mtd_label lab[MTD_SERIES_MAX_LABELS];
	size_t voff[MTD_SERIES_MAX_LABELS];
	char vals[1024];
};

void mtd_series_begin(struct mtd_series *s, struct mtn_buf *b,
		      const char *name, const struct mtd_expo_opts *o);
void mtd_series_label(struct mtd_series *s, const char *key, const char *v,
		      size_t len);
void mtd_series_value(struct mtd_series *s, uint64_t v, bool ns);
/* The same for a signed value (a net growth, two's complement). */
void mtd_series_signed(struct mtd_series *s, int64_t v);

/*
 * Families with a series per peer, for the daemon's own figures (the
 * relay's aggregators, remote write's endpoints): each family's HELP and
 * TYPE, then for each of the npeers a series labelled key="its name".
 * peer(arg, i, f, &name) gives peer i's value in family f and its name.
 */
struct mtd_family_doc {
	const char *name, *type, *help;
};

typedef uint64_t (*mtd_peer_value)(const void *arg, unsigned int i,
				   unsigned int f, const char **name);
void mtd_peer_families(struct mtn_buf *b, const struct mtd_expo_opts *o,
		       const struct mtd_family_doc *fam, unsigned int nfam,
		       const char *key, unsigned int npeers,
		       mtd_peer_value peer, const void *arg);

/*
 * Labels written once a scrape for series that repeat them: a program has
 * a series in every family (28 with the module), a container in 5, with
 * the same labels each time, and escaping them anew for each series was
 * most of a scrape of a node of pods (200 containers: 4,200 series).
 * Entry i is ",k=\"v\",..." from off[i] to off[i + 1] of text.  Text output
 * only (off NULL with a sink, which takes labels one by one, or when
 * memory ran out: then each series writes its own).
 */
struct mtd_label_texts {
	struct mtn_buf text;
	size_t *off;
};

/*
 * Writing entries: begin (with room for n; false when there are to be none:
 * a sink, or no memory), then for each entry i its start in off[i] and its
 * labels added to s, then end; free in any case.  A series takes entry i's
 * labels with mtd_series_texts().
 */
bool mtd_texts_begin(struct mtd_label_texts *lt, size_t n,
		     const struct mtd_expo_opts *o, struct mtd_series *s);
void mtd_texts_end(struct mtd_label_texts *lt, size_t n);
void mtd_texts_free(struct mtd_label_texts *lt);
void mtd_series_texts(struct mtd_series *s, const struct mtd_label_texts *lt,
		      size_t i);

#endif /* MEMTRACKD_EXPO_H */
