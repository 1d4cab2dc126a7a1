/* SPDX-License-Identifier: GPL-2.0 */
/* memtrackd's HTTP endpoint (http.c): GET /metrics. */
#ifndef MEMTRACKD_HTTP_H
#define MEMTRACKD_HTTP_H

#include "buf.h"

struct mtd_http;

typedef int (*mtd_scrape_fn)(void *arg, struct mtd_buf *out);

/* Serve on the bound, listening socket fd (taken over). */
struct mtd_http *mtd_http_start(int fd, mtd_scrape_fn fn, void *arg);
void mtd_http_stop(struct mtd_http *h);

#endif /* MEMTRACKD_HTTP_H */
