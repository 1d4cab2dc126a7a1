/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster queries (query_parse.c), parsed the same way by the
 * aggregator, which answers them from its nodes' snapshots, and by the
 * query clients' Prometheus backend (query_prom.c), which turns them into
 * PromQL:
 *
 *   nodes
 *   sum FIELD[,FIELD...] [by KEY[,KEY...]] [where COND [and COND]...]
 *   top N [by FIELD] [where COND [and COND]...]
 *   events NODE [LAST]
 *
 * FIELD: rss anon file shmem swap (bytes; rss = anon + file + shmem),
 * nproc (sum only); KEY: node namespace pod container comm (each once, the
 * result's columns in that order); COND: KEY=VALUE.  A program outside a
 * container has namespace, pod and container "".  Errors: net's one
 * convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_QUERY_PARSE_H
#define MEMTRACK_NET_QUERY_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#define MTN_QUERY_MAX_TOP	10000
#define MTN_QUERY_MAX_FIELDS	6

enum mtn_query_field {
	MTN_QF_RSS, MTN_QF_ANON, MTN_QF_FILE, MTN_QF_SHMEM, MTN_QF_SWAP,
	MTN_QF_NPROC, MTN_QF_COUNT
};

extern const char *const mtn_query_fields[MTN_QF_COUNT];

/* What a sum groups by and a condition names, in the result's order. */
enum mtn_query_key {
	MTN_QK_NODE, MTN_QK_NS, MTN_QK_POD, MTN_QK_CONTAINER, MTN_QK_COMM,
	MTN_QK_COUNT
};

/* "node", "namespace", "pod", "container", "comm": the labels' names */
extern const char *const mtn_query_keys[MTN_QK_COUNT];

struct mtn_query {
	enum { MTN_Q_NODES, MTN_Q_SUM, MTN_Q_TOP, MTN_Q_EVENTS } kind;
	enum mtn_query_field fields[MTN_QUERY_MAX_FIELDS];
	unsigned int nfields;
	bool by[MTN_QK_COUNT];		/* sum's groups */
	unsigned long n;		/* top N, events LAST (0: all) */
	/* where KEY=VALUE, NULL: any (point into text); events' node */
	const char *where[MTN_QK_COUNT];
};

/* Grouped by any key, or by none (one row)? */
bool mtn_query_grouped(const struct mtn_query *q);

/*
 * Parse text (cut into words in place: q points into it): 0, or -EINVAL
 * with what is wrong in err.
 */
int mtn_query_parse(char *text, struct mtn_query *q, char *err,
		    size_t errlen);

#endif /* MEMTRACK_NET_QUERY_PARSE_H */
