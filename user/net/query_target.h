/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which aggregator a query client asks and with what credentials:
 * memtrack-query and memtrack-top --cluster find them the same way.
 */
#ifndef MEMTRACK_NET_QUERY_TARGET_H
#define MEMTRACK_NET_QUERY_TARGET_H

#include <stddef.h>

struct mtd_creds;

struct mtd_query_target {
	char addr[256];			/* address or host name */
	unsigned int port;
	struct mtd_creds *creds;	/* client credentials (conn.h) */
};

/*
 * server (NULL: the first of the config's aggregators, else its
 * [aggregate] address) and the config's authentication keys; cfgpath NULL:
 * the default config if it is readable.  0, or on failure -2 (bad config or
 * server: the user's mistake) or -1 (credentials unreadable), err set.
 */
int mtd_query_target(const char *cfgpath, const char *server,
		     struct mtd_query_target *t, char *err, size_t errlen);

#endif /* MEMTRACK_NET_QUERY_TARGET_H */
