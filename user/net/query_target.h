/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which aggregator a query client asks and with what credentials:
 * memtrack-query and memtrack-top --cluster find them the same way.
 * Errors: net's one convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_QUERY_TARGET_H
#define MEMTRACK_NET_QUERY_TARGET_H

#include <stddef.h>

struct mtn_creds;

struct mtn_query_target {
	char addr[256];			/* address or host name */
	unsigned int port;
	struct mtn_creds *creds;	/* client credentials (conn.h) */
};

/*
 * server (NULL: the first of the config's aggregators, else its
 * [aggregate] address) and the config's authentication keys; cfgpath NULL:
 * the default config if it is readable.  0, or on failure a negative errno
 * with err set: the config's (mtn_config_load(): -EINVAL, -ENOENT, ...)
 * or -EINVAL for a bad server, the user's mistake; -ENOKEY if the
 * credentials cannot be loaded (err says why).
 */
int mtn_query_target(const char *cfgpath, const char *server,
		     struct mtn_query_target *t, char *err, size_t errlen);

#endif /* MEMTRACK_NET_QUERY_TARGET_H */
