// SPDX-License-Identifier: GPL-2.0
/* The query client (query_client.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "conn.h"
#include "tcp.h"
#include "frame_io.h"
#include "query_client.h"
#include "relay_proto.h"
#include "grow.h"

#define CLIENT_NAME	"memtrack-query"

struct mtn_query_client {
	struct mtn_conn *c;
};

struct mtn_query_client *mtn_query_connect(const char *addr, unsigned int port,
					   struct mtn_creds *creds,
					   int timeout_ms, char *err,
					   size_t errlen)
{
	int64_t deadline = mt_mono_ms() + timeout_ms;
	uint8_t hello[18 + sizeof(CLIENT_NAME) - 1] = { 0 }, *body;
	struct mtn_query_client *q;
	uint32_t len;
	uint8_t type;
	char why[320];
	int fd, r;

	fd = mtn_dial(addr, port, timeout_ms, why, sizeof(why));
	/* the socket's timeouts bound what conn.c does without a deadline */
	if (fd >= 0) {
		r = mtn_set_timeouts(fd, (int)(deadline - mt_mono_ms()));
		if (r) {
			close(fd);
			fd = r;
		}
	}
	if (fd < 0) {
		/* the resolver's sentence, else the errno's */
		snprintf(err, errlen, "connecting to %s port %u: %s", addr, port,
			 *why ? why : strerror(-fd));
		errno = -fd;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	q->c = mtn_conn_open(creds, fd, err, errlen);
	if (!q->c) {
		r = errno;
		free(q);
		errno = r;
		return NULL;
	}
	/* session 0: a query client, not a node */
	hello[17] = sizeof(CLIENT_NAME) - 1;
	memcpy(hello + 18, CLIENT_NAME, sizeof(CLIENT_NAME) - 1);
	r = mtn_frame_write(q->c, MTN_RELAY_HELLO, hello, sizeof(hello));
	if (!r)
		r = mtn_frame_read(q->c, &type, &body, &len, deadline, deadline,
				   0);
	if (!r) {
		free(body);
		if (type != MTN_RELAY_WELCOME)
			r = -EPROTO;
	}
	if (r) {
		/* TLS 1.3: a refused certificate shows up at the first read */
		const char *tls = mtn_conn_error(q->c);

		if (*tls)
			snprintf(err, errlen, "%s port %u: %s", addr, port, tls);
		else
			snprintf(err, errlen, "%s port %u: no WELCOME: %s%s",
				 addr, port, r == -EBADMSG ? "malformed frame" :
				 strerror(-r), r == -EBADMSG || r == -ECONNRESET ?
				 " (does the aggregator use another auth?)" : "");
		mtn_query_close(q);
		errno = -r;
		return NULL;
	}
	return q;
}

void mtn_query_close(struct mtn_query_client *q)
{
	if (!q)
		return;
	mtn_conn_close(q->c);
	free(q);
}

void mtn_query_result_free(struct mtn_query_result *res)
{
	size_t i;

	for (i = 0; i < res->ncols; i++)
		free(res->cols[i]);
	for (i = 0; i < res->ncols * res->nrows; i++)
		free(res->cells[i]);
	free(res->cols);
	free(res->numeric);
	free(res->cells);
	free(res->recs);
	memset(res, 0, sizeof(*res));
}

/* One field up to sep or the end of the line, unescaped; NULL if bad. */
static char *field(const char **p, const char *end, bool *last)
{
	const char *s = *p;
	char *out, *o;

	while (*p < end && **p != '\t' && **p != '\n')
		(*p)++;
	if (*p == end)
		return NULL;
	*last = **p == '\n';
	out = malloc(*p - s + 1);
	if (!out)
		return NULL;
	for (o = out; s < *p; s++) {
		if (*s == '\\' && *p - s >= 4) {
			*o++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	(*p)++;
	return out;
}

static int parse_table(const char *p, const char *end,
		       struct mtn_query_result *res)
{
	size_t cap = 0;
	bool last = false;

	while (!last) {
		char *c = field(&p, end, &last), *colon;
		void *n1, *n2;

		if (!c)
			return -EBADMSG;
		colon = strrchr(c, ':');
		n1 = realloc(res->cols, (res->ncols + 1) * sizeof(*res->cols));
		if (n1)
			res->cols = n1;
		n2 = realloc(res->numeric, (res->ncols + 1) * sizeof(bool));
		if (n2)
			res->numeric = n2;
		if (!colon || !n1 || !n2) {
			free(c);
			return colon ? -ENOMEM : -EBADMSG;
		}
		*colon = 0;
		res->numeric[res->ncols] = colon[1] == 'n';
		res->cols[res->ncols++] = c;
	}
	while (p < end) {
		size_t i;

		if (mt_grow((void **)&res->cells, &cap, res->nrows + 1,
			    res->ncols * sizeof(char *), 64))
			return -ENOMEM;
		for (i = 0; i < res->ncols; i++) {
			char *c = field(&p, end, &last);

			if (!c || last != (i + 1 == res->ncols)) {
				free(c);
				/* free the row's cells so far */
				while (i--)
					free(res->cells[res->nrows * res->ncols + i]);
				return -EBADMSG;
			}
			res->cells[res->nrows * res->ncols + i] = c;
		}
		res->nrows++;
	}
	return 0;
}

int mtn_query_result_table(const char *body, size_t len,
			   struct mtn_query_result *res)
{
	int r;

	memset(res, 0, sizeof(*res));
	res->ok = true;
	r = parse_table(body, body + len, res);
	if (r)
		mtn_query_result_free(res);
	return r;
}

int mtn_query_run(struct mtn_query_client *q, const char *query,
		  int timeout_ms, struct mtn_query_result *res, char *err,
		  size_t errlen)
{
	int64_t deadline = mt_mono_ms() + timeout_ms;
	size_t qlen = strlen(query);
	uint8_t type, *body = NULL;
	uint32_t len;
	int r;

	memset(res, 0, sizeof(*res));
	if (!qlen || qlen > MTN_RELAY_MAX_QUERY) {
		res->ok = false;
		snprintf(res->error, sizeof(res->error),
			 "a query has 1..%d bytes", MTN_RELAY_MAX_QUERY);
		return 0;
	}
	r = mtn_set_timeouts(mtn_conn_fd(q->c), timeout_ms);
	if (!r)
		r = mtn_frame_write(q->c, MTN_RELAY_QUERY, query, qlen);
	if (!r)
		r = mtn_frame_read(q->c, &type, &body, &len, deadline, deadline,
				   0);
	if (!r && type != MTN_RELAY_RESULT)
		r = -EPROTO;
	if (r) {
		snprintf(err, errlen, "query: %s", r == -EBADMSG ?
			 "malformed frame" : strerror(-r));
		free(body);
		return r;
	}
	if (body[0]) {
		snprintf(res->error, sizeof(res->error), "%.*s",
			 (int)(len - 2), (const char *)body + 2);
	} else if (body[1] == MTN_RESULT_RECORDS) {
		res->ok = res->records = true;
		res->recs_len = len - 2;
		res->recs = malloc(len - 2 + 1);
		if (!res->recs)
			r = -ENOMEM;
		else
			memcpy(res->recs, body + 2, len - 2);
	} else {
		res->ok = true;
		r = parse_table((const char *)body + 2, (const char *)body + len,
				res);
	}
	free(body);
	if (r) {
		snprintf(err, errlen, "query: %s", r == -EBADMSG ?
			 "malformed result" : strerror(-r));
		mtn_query_result_free(res);
	}
	return r;
}

const char *mtn_query_cell(const struct mtn_query_result *res, size_t row,
			   const char *col)
{
	size_t i;

	for (i = 0; i < res->ncols; i++)
		if (!strcmp(res->cols[i], col))
			return res->cells[row * res->ncols + i];
	return NULL;
}
