/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The query side of the aggregator protocol (relay_proto.h), for
 * memtrack-query and memtrack-top --cluster: connect, authenticate (conn.h),
 * send one query, get its result parsed into rows, never waiting longer
 * than the timeout the caller gave, however slow the aggregator.  Errors:
 * net's one convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_QUERY_CLIENT_H
#define MEMTRACK_NET_QUERY_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mtn_creds;

struct mtn_query_result {
	bool ok;			/* false: error says what the query lacks */
	char error[512];
	bool records;			/* a records result, not a table */
	/* table: ncols columns, nrows rows, cells[row * ncols + col] */
	size_t ncols, nrows;
	char **cols;
	bool *numeric;			/* per column: cells are decimal */
	char **cells;			/* unescaped, NUL-terminated */
	/* records: module records back to back, oldest first */
	uint8_t *recs;
	size_t recs_len;
};

struct mtn_query_client;

/*
 * Connect to addr (a numeric IPv4/IPv6 address or a host name) port,
 * authenticate with creds (client credentials,
 * mtn_creds_load(server=false)) and say HELLO, all within timeout_ms.
 * NULL on failure, with errno set and err saying why (after "connecting
 * to ADDR port PORT: ", mtn_dial()'s sentence or the errno's).
 */
struct mtn_query_client *mtn_query_connect(const char *addr, unsigned int port,
					   struct mtn_creds *creds,
					   int timeout_ms, char *err,
					   size_t errlen);
/*
 * One query, answered within timeout_ms: 0 and *res (res->ok false if the
 * aggregator refused the query), or -errno with err set (the connection is
 * then unusable: close it).  Free res with mtn_query_result_free.
 */
int mtn_query_run(struct mtn_query_client *q, const char *query,
		  int timeout_ms, struct mtn_query_result *res, char *err,
		  size_t errlen);
void mtn_query_close(struct mtn_query_client *q);
/*
 * A table in the RESULT body's form (relay_proto.h: a "name:s|n" header
 * line, then rows, fields tab-separated, escaped) into *res, ok: 0, or
 * -EBADMSG/-ENOMEM.  The Prometheus backend (query_prom.c) answers in it.
 */
int mtn_query_result_table(const char *body, size_t len,
			   struct mtn_query_result *res);
void mtn_query_result_free(struct mtn_query_result *res);

/* A cell by column name, NULL if there is no such column. */
const char *mtn_query_cell(const struct mtn_query_result *res, size_t row,
			   const char *col);

#endif /* MEMTRACK_NET_QUERY_CLIENT_H */
