// SPDX-License-Identifier: GPL-2.0
/*
 * gzip for /metrics: libmicrohttpd has no content coding of its own, so
 * the body is compressed here with zlib's deflate in gzip framing, and
 * http.c adds Content-Encoding.  Fastest level: the text repeats itself
 * (~10x smaller even so), and the daemon on every node should stay cheap
 * at each scrape.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "gzip.h"

#define GZIP_WINDOW_BITS	(15 + 16)	/* 32 KiB window, gzip header */

/* A qvalue: "0", "0.0", "0.000" refuse; anything else accepts. */
static bool q_nonzero(const char *q, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (q[i] != '0' && q[i] != '.')
			return true;
	return false;
}

/*
 * Accept-Encoding: codings separated by commas, each with optional
 * parameters (";q=0.5"); "gzip" or "x-gzip" with a nonzero q accepts,
 * or "*" if gzip is not named.
 */
bool mtd_gzip_accepted(const char *v)
{
	int gzip = -1, star = -1;	/* -1 not named, 0 refused, 1 taken */

	while (v && *v) {
		size_t n, i;
		const char *end = strchr(v, ','), *p;
		bool ok = true;

		if (!end)
			end = v + strlen(v);
		while (v < end && isspace((unsigned char)*v))
			v++;
		for (n = 0; v + n < end && v[n] != ';' &&
		     !isspace((unsigned char)v[n]); n++)
			;
		/* parameters: only q matters */
		for (p = v + n; p < end; p++) {
			if (*p != ';')
				continue;
			p++;
			while (p < end && isspace((unsigned char)*p))
				p++;
			if (end - p >= 2 && tolower((unsigned char)p[0]) == 'q' &&
			    p[1] == '=') {
				for (i = 2; p + i < end && p[i] != ';' &&
				     !isspace((unsigned char)p[i]); i++)
					;
				ok = q_nonzero(p + 2, i - 2);
			}
		}
		if ((n == 4 && !strncasecmp(v, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(v, "x-gzip", 6)))
			gzip = ok;
		else if (n == 1 && *v == '*')
			star = ok;
		v = *end ? end + 1 : end;
	}
	return gzip >= 0 ? gzip : star > 0;
}

void *mtd_gzip(const void *in, size_t len, size_t *outlen)
{
	z_stream z = { 0 };
	void *out;
	uLong cap;

	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, GZIP_WINDOW_BITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&z, len);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	/* deflateBound's room: one call finishes */
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*outlen = z.total_out;
	deflateEnd(&z);
	return out;
}
