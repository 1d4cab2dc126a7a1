// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP endpoint (libmicrohttpd): GET or HEAD /metrics, gzipped when the
 * client accepts it (gzip.c), and a landing page on / linking to it, as
 * node_exporter has; 404 for any other path, 405 for any other method.
 * One internal thread per listening socket (a host name may have several
 * addresses) serves its connections in turn; the scrape function takes
 * the daemon's lock, so scrapes never run concurrently.  Connections are
 * capped and idle ones time out, so a slow or hostile client cannot hold
 * the daemon.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <microhttpd.h>

#include "gzip.h"
#include "http.h"
#include "log.h"

#define MTD_HTTP_MAX_CONNECTIONS	32
#define MTD_HTTP_TIMEOUT_S		10
#define MTD_HTTP_CONN_MEMORY		(32 * 1024)

#define EXPOSITION_TYPE	"text/plain; version=0.0.4; charset=utf-8"

#define LANDING_PAGE \
	"<!DOCTYPE html>\n" \
	"<html><head><meta charset=\"utf-8\"><title>memtrackd</title></head>\n" \
	"<body><h1>memtrackd</h1>\n" \
	"<p>memtrack's node exporter, version " MEMTRACK_VERSION ".</p>\n" \
	"<p><a href=\"/metrics\">Metrics</a></p>\n" \
	"</body></html>\n"

struct mtd_http {
	struct MHD_Daemon *d[MTD_HTTP_MAX_SOCKETS];
	int nd;
	mtd_scrape_fn fn;
	void *arg;
};

/* A fixed text; type NULL: plain text. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     const char *type, const char *text,
			     const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				type ? type : "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct mtd_http *h = cls;
	struct mtn_buf b = { 0 };
	struct MHD_Response *r;
	enum MHD_Result ret;

	bool landing = !strcmp(url, "/"), gzip;
	void *body;
	size_t len;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (!landing && strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, NULL, "not found\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, NULL,
			     "method not allowed\n", "GET, HEAD");
	if (landing)
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     LANDING_PAGE, NULL);
	if (h->fn(h->arg, &b)) {
		free(b.p);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
			     "cannot read memory figures now\n", NULL);
	}
	body = b.p;
	len = b.len;
	gzip = mtd_gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
				 MHD_HTTP_HEADER_ACCEPT_ENCODING));
	if (gzip) {
		body = mtd_gzip(b.p, b.len, &len);
		free(b.p);
		if (!body)
			return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     NULL, "out of memory\n", NULL);
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				EXPOSITION_TYPE);
	/* caches must not give one client's coding to another */
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static void http_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	mtn_log(LOG_INFO, "http: %s", msg);
}

struct mtd_http *mtd_http_start(const int *fds, int nfds, mtd_scrape_fn fn,
				void *arg)
{
	struct mtd_http *h = calloc(1, sizeof(*h));

	if (!h || nfds > MTD_HTTP_MAX_SOCKETS) {
		free(h);
		return NULL;
	}
	h->fn = fn;
	h->arg = arg;
	for (h->nd = 0; h->nd < nfds; h->nd++) {
		h->d[h->nd] = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
					       MHD_USE_POLL | MHD_USE_ERROR_LOG,
					       0, NULL, NULL, handle, h,
					       MHD_OPTION_EXTERNAL_LOGGER,
					       http_log, NULL,
					       MHD_OPTION_LISTEN_SOCKET,
					       fds[h->nd],
					       MHD_OPTION_CONNECTION_LIMIT,
					       (unsigned int)MTD_HTTP_MAX_CONNECTIONS,
					       MHD_OPTION_CONNECTION_TIMEOUT,
					       (unsigned int)MTD_HTTP_TIMEOUT_S,
					       MHD_OPTION_CONNECTION_MEMORY_LIMIT,
					       (size_t)MTD_HTTP_CONN_MEMORY,
					       MHD_OPTION_END);
		if (!h->d[h->nd]) {
			mtd_http_stop(h);
			return NULL;
		}
	}
	return h;
}

void mtd_http_stop(struct mtd_http *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < h->nd; i++)
		MHD_stop_daemon(h->d[i]);
	free(h);
}
