/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster queries (query_parse.c), parsed the same way by the
 * aggregator, which answers them from its nodes' snapshots, and by the
 * query clients' Prometheus backend (query_prom.c), which turns them into
 * PromQL:
 *
 *   nodes
 *   sum FIELD[,FIELD...] [by comm|node|node,comm] [where COND [and COND]...]
 *   top N [by FIELD] [where COND [and COND]...]
 *   events NODE [LAST]
 *
 * FIELD: rss anon file shmem swap (bytes; rss = anon + file + shmem),
 * nproc (sum only); COND: comm=VALUE or node=VALUE.
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

struct mtd_query {
	enum { MTD_Q_NODES, MTD_Q_SUM, MTD_Q_TOP, MTD_Q_EVENTS } kind;
	enum mtd_query_field fields[MTD_QUERY_MAX_FIELDS];
	unsigned int nfields;
	bool by_node, by_comm;
	unsigned long n;		/* top N, events LAST (0: all) */
	const char *comm, *node;	/* where, NULL: any (point into text) */
};

/*
 * Parse text (cut into words in place: q points into it): 0, or -1 with
 * what is wrong in err.
 */
int mtd_query_parse(char *text, struct mtd_query *q, char *err,
		    size_t errlen);

#endif /* MEMTRACK_NET_QUERY_PARSE_H */
