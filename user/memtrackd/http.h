/* SPDX-License-Identifier: GPL-2.0 */
/* memtrackd's HTTP endpoint (http.c): GET /metrics, and / linking to it. */
#ifndef MEMTRACKD_HTTP_H
#define MEMTRACKD_HTTP_H

#include "buf.h"

/* Listening sockets served: the addresses of one listen host name. */
#define MTD_HTTP_MAX_SOCKETS	8

struct mtd_http;

typedef int (*mtd_scrape_fn)(void *arg, struct mtn_buf *out);

/*
 * Serve on the bound, listening sockets fds (nfds of them, at most
 * MTD_HTTP_MAX_SOCKETS; taken over), a thread each.
 */
struct mtd_http *mtd_http_start(const int *fds, int nfds, mtd_scrape_fn fn,
				void *arg);
void mtd_http_stop(struct mtd_http *h);

#endif /* MEMTRACKD_HTTP_H */
