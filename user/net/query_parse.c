// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster queries' words (query_parse.h): a query that does not parse
 * gets a message naming what is wrong.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_parse.h"

#define MAX_TOKENS	32

const char *const mtn_query_fields[MTN_QF_COUNT] = {
	"rss", "anon", "file", "shmem", "swap", "nproc"
};

/* where a parse error goes */
struct perr {
	char *msg;
	size_t len;
};

static void fail(struct perr *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct perr *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->msg, b->len, fmt, ap);
	va_end(ap);
}

static int field_of(const char *s, bool nproc_ok)
{
	int i;

	for (i = 0; i < MTN_QF_COUNT; i++)
		if (!strcmp(s, mtn_query_fields[i]))
			return i == MTN_QF_NPROC && !nproc_ok ? -ENOENT : i;
	return -ENOENT;
}

static int parse_number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

const char *const mtn_query_keys[MTN_QK_COUNT] = {
	"node", "namespace", "pod", "container", "comm"
};

bool mtn_query_grouped(const struct mtn_query *q)
{
	int k;

	for (k = 0; k < MTN_QK_COUNT; k++)
		if (q->by[k])
			return true;
	return false;
}

/* The key s starts with (its length in *len, up to '=' or ','), or -ENOENT. */
static int key_of(const char *s, size_t *len)
{
	int i;

	*len = strcspn(s, "=,");
	for (i = 0; i < MTN_QK_COUNT; i++)
		if (strlen(mtn_query_keys[i]) == *len &&
		    !strncmp(s, mtn_query_keys[i], *len))
			return i;
	return -ENOENT;
}

/* by KEY[,KEY...]: each once. */
static int parse_by(const char *s, struct mtn_query *q, struct perr *b)
{
	size_t len;

	while (*s) {
		int k = key_of(s, &len);

		if (k < 0 || (s[len] && s[len] != ',') ||
		    (s[len] == ',' && !s[len + 1])) {
			fail(b, "sum: by node, namespace, pod, container or comm (several with commas)");
			return -EINVAL;
		}
		if (q->by[k]) {
			fail(b, "sum: \"%s\" given twice after by",
			     mtn_query_keys[k]);
			return -EINVAL;
		}
		q->by[k] = true;
		s += len + (s[len] == ',');
	}
	return 0;
}

/* where COND [and COND]...: tokens from t[i]. */
static int parse_where(char **t, int nt, int i, struct mtn_query *q,
		       struct perr *b)
{
	if (i == nt)
		return 0;
	if (strcmp(t[i], "where") || i + 1 == nt) {
		fail(b, "expected \"where COND\" at \"%s\"", t[i]);
		return -EINVAL;
	}
	for (i++; i < nt; i++) {
		const char **dst;
		size_t len;
		int k = key_of(t[i], &len);

		if (k < 0 || t[i][len] != '=') {
			fail(b, "bad condition \"%s\" (node, namespace, pod, container or comm=VALUE)",
			     t[i]);
			return -EINVAL;
		}
		dst = &q->where[k];
		if (*dst || !t[i][len + 1]) {
			fail(b, "\"%s\": empty or given twice", t[i]);
			return -EINVAL;
		}
		*dst = t[i] + len + 1;
		if (i + 1 < nt && (strcmp(t[i + 1], "and") || i + 2 == nt)) {
			fail(b, "expected \"and COND\" at \"%s\"", t[i + 1]);
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

static int parse_sum(char **t, int nt, struct mtn_query *q, struct perr *b)
{
	char *save = NULL, *f;
	int i = 2;

	if (nt < 2) {
		fail(b, "sum: which field? (rss anon file shmem swap nproc)");
		return -EINVAL;
	}
	for (f = strtok_r(t[1], ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		int k = field_of(f, true);

		if (k < 0 || q->nfields == MTN_QUERY_MAX_FIELDS) {
			fail(b, "sum: unknown field \"%s\" (rss anon file shmem swap nproc)",
			     f);
			return -EINVAL;
		}
		q->fields[q->nfields++] = k;
	}
	if (!q->nfields) {
		fail(b, "sum: which field?");
		return -EINVAL;
	}
	if (i < nt && !strcmp(t[i], "by")) {
		if (i + 1 == nt) {
			fail(b, "sum: by node, namespace, pod, container or comm (several with commas)");
			return -EINVAL;
		}
		if (parse_by(t[i + 1], q, b))
			return -EINVAL;
		i += 2;
	}
	return parse_where(t, nt, i, q, b);
}

static int parse_top(char **t, int nt, struct mtn_query *q, struct perr *b)
{
	int i = 2;

	if (nt < 2 || parse_number(t[1], MTN_QUERY_MAX_TOP, &q->n) || !q->n) {
		fail(b, "top: N must be 1..%d", MTN_QUERY_MAX_TOP);
		return -EINVAL;
	}
	q->fields[0] = MTN_QF_RSS;
	q->nfields = 1;
	if (i < nt && !strcmp(t[i], "by")) {
		int k = i + 1 < nt ? field_of(t[i + 1], false) : -ENOENT;

		if (k < 0) {
			fail(b, "top: by rss, anon, file, shmem or swap");
			return -EINVAL;
		}
		q->fields[0] = k;
		i += 2;
	}
	return parse_where(t, nt, i, q, b);
}

static int parse(char *text, struct mtn_query *q, struct perr *b)
{
	char *t[MAX_TOKENS], *save = NULL, *tok;
	int nt = 0;

	memset(q, 0, sizeof(*q));
	for (tok = strtok_r(text, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (nt == MAX_TOKENS) {
			fail(b, "query too long (%d words at most)", MAX_TOKENS);
			return -EINVAL;
		}
		t[nt++] = tok;
	}
	if (!nt) {
		fail(b, "empty query");
		return -EINVAL;
	}
	if (!strcmp(t[0], "nodes")) {
		q->kind = MTN_Q_NODES;
		if (nt == 1)
			return 0;
		fail(b, "nodes takes nothing more");
		return -EINVAL;
	}
	if (!strcmp(t[0], "sum")) {
		q->kind = MTN_Q_SUM;
		return parse_sum(t, nt, q, b);
	}
	if (!strcmp(t[0], "top")) {
		q->kind = MTN_Q_TOP;
		return parse_top(t, nt, q, b);
	}
	if (!strcmp(t[0], "events")) {
		q->kind = MTN_Q_EVENTS;
		if (nt >= 2 && nt <= 3 &&
		    (nt == 2 || !parse_number(t[2], 1000000, &q->n))) {
			q->where[MTN_QK_NODE] = t[1];
			return 0;
		}
		fail(b, "usage: events NODE [LAST]");
		return -EINVAL;
	}
	fail(b, "unknown query \"%.64s\" (nodes, sum, top, events)", t[0]);
	return -EINVAL;
}

int mtn_query_parse(char *text, struct mtn_query *q, char *err,
		    size_t errlen)
{
	struct perr b = { err, errlen };

	return parse(text, q, &b);
}
