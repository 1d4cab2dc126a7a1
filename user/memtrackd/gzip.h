/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gzip for /metrics (gzip.c): whether a client's Accept-Encoding takes it,
 * and the compression (zlib).  Prometheus asks for it on every scrape.
 */
#ifndef MEMTRACKD_GZIP_H
#define MEMTRACKD_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/* Does this Accept-Encoding value (NULL: none) accept gzip (RFC 9110)? */
bool mtd_gzip_accepted(const char *accept_encoding);

/* A gzip member of in's len bytes, malloc'ed, its size in *outlen; NULL. */
void *mtd_gzip(const void *in, size_t len, size_t *outlen);

#endif /* MEMTRACKD_GZIP_H */
