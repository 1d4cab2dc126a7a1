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
 * container has namespace, pod and container "".
 */
#ifndef MEMTRACK_NET_QUERY_PARSE_H
#define MEMTRACK_NET_QUERY_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#define MTD_QUERY_MAX_TOP	10000
#define MTD_QUERY_MAX_FIELDS	6

enum mtd_query_field {
	MTD_QF_RSS, MTD_QF_ANON, MTD_QF_FILE, MTD_QF_SHMEM, MTD_QF_SWAP,
	MTD_QF_NPROC, MTD_QF_COUNT
};

extern const char *const mtd_query_fields[MTD_QF_COUNT];

/* What a sum groups by and a condition names, in the result's order. */
enum mtd_query_key {
	MTD_QK_NODE, MTD_QK_NS, MTD_QK_POD, MTD_QK_CONTAINER, MTD_QK_COMM,
	MTD_QK_COUNT
};

/* "node", "namespace", "pod", "container", "comm": the labels' names */
extern const char *const mtd_query_keys[MTD_QK_COUNT];

struct mtd_query {
	enum { MTD_Q_NODES, MTD_Q_SUM, MTD_Q_TOP, MTD_Q_EVENTS } kind;
	enum mtd_query_field fields[MTD_QUERY_MAX_FIELDS];
	unsigned int nfields;
	bool by[MTD_QK_COUNT];		/* sum's groups */
	unsigned long n;		/* top N, events LAST (0: all) */
	/* where KEY=VALUE, NULL: any (point into text); events' node */
	const char *where[MTD_QK_COUNT];
};

/* Grouped by any key, or by none (one row)? */
bool mtd_query_grouped(const struct mtd_query *q);

/*
 * Parse text (cut into words in place: q points into it): 0, or -1 with
 * what is wrong in err.
 */
int mtd_query_parse(char *text, struct mtd_query *q, char *err,
		    size_t errlen);

#endif /* MEMTRACK_NET_QUERY_PARSE_H */
