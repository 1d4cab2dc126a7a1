/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster queries (query_parse.h) answered by a Prometheus-compatible
 * HTTP API (query_prom.c) instead of an aggregator: the series memtrackd
 * remote-writes (or Prometheus scrapes), with the node label, queried with
 * PromQL the tool builds, the answer in the aggregator's table shape
 * (query_client.h), so that memtrack-query and memtrack-top --cluster
 * print it the same way.  Errors: net's one convention (tcp.h's top
 * comment).
 */
#ifndef MEMTRACK_NET_QUERY_PROM_H
#define MEMTRACK_NET_QUERY_PROM_H

#include <stddef.h>

struct mtn_query_result;
struct mtn_prom;

/*
 * url: the API's base (http[s]://HOST[:PORT][/PREFIX], /api/v1/query is
 * added); a node is up while its latest memtrack_build_info sample is at
 * most down_after_ms old.  NULL with errno (EINVAL: not such a URL,
 * ENOMEM) and err set.
 */
struct mtn_prom *mtn_prom_new(const char *url, unsigned int down_after_ms,
			      char *err, size_t errlen);
void mtn_prom_free(struct mtn_prom *p);
/*
 * One query, every PromQL of it evaluated at the same instant, within
 * timeout_ms: 0 and *res (res->ok false if the query is refused), or
 * -errno with err set (no answer: connection, HTTP, JSON).
 */
int mtn_prom_query(struct mtn_prom *p, const char *query, int timeout_ms,
		   struct mtn_query_result *res, char *err, size_t errlen);

#endif /* MEMTRACK_NET_QUERY_PROM_H */
