// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * The aggregator's queries (RESULT bodies as relay_proto.h describes):
 *
 *   nodes
 *   sum FIELD[,FIELD...] [by KEY[,KEY...]] [where COND [and COND]...]
 *   top N [by FIELD] [where COND [and COND]...]
 *   events NODE [LAST]
 *
 * FIELD: rss anon file shmem swap (bytes; rss = anon + file + shmem),
 * nproc (sum only); KEY: node namespace pod container comm; COND:
 * KEY=VALUE (query_parse.c reads them; query_prom.c asks Prometheus the
 * same).  A node's programs and processes outside containers have
 * namespace, pod and container "".  sum and top read the
 * latest snapshot of the nodes that are up: a down node's figures are
 * stale, and `nodes` says which are down.  Rows come sorted by the first
 * field, largest first.  A query that does not parse gets an error
 * RESULT naming what is wrong, and the connection stays open.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/memtrack.h>

#include "libmemtrack.h"
#include "agg.h"
#include "frame_io.h"
#include "query_parse.h"

static void fail(struct mtn_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An error RESULT in place of what b holds. */
static void fail(struct mtn_buf *b, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->len = 0;
	mtn_buf_append(b, "\1\0", 2);
	mtn_buf_append(b, msg, strlen(msg));
}

/* ---- results ---- */

static void put_num(struct mtn_buf *b, uint64_t v, char sep)
{
	mtn_buf_printf(b, "%llu%c", (unsigned long long)v, sep);
}

static uint64_t figure(const struct agg_row *r, enum mtn_query_field f)
{
	switch (f) {
	case MTN_QF_RSS:
		return r->anon + r->file + r->shmem;
	case MTN_QF_ANON:
		return r->anon;
	case MTN_QF_FILE:
		return r->file;
	case MTN_QF_SHMEM:
		return r->shmem;
	case MTN_QF_SWAP:
		return r->swap;
	default:
		return r->nproc;
	}
}

/* Does the row pass the where clause's conditions but node's? */
static bool matches(const struct mtn_query *q, const struct agg_snapshot *s,
		    const struct agg_row *r)
{
	static const int where_of[AGG_NR_WHERE] = {
		[AGG_NS] = MTN_QK_NS, [AGG_POD] = MTN_QK_POD,
		[AGG_CONTAINER] = MTN_QK_CONTAINER,
	};
	int w;

	if (q->where[MTN_QK_COMM] && strcmp(q->where[MTN_QK_COMM], r->comm))
		return false;
	for (w = 0; w < AGG_NR_WHERE; w++)
		if (q->where[where_of[w]] &&
		    strcmp(q->where[where_of[w]], agg_row_where(s, r, w)))
			return false;
	return true;
}

static bool node_up(struct agg *a, const struct agg_node *n, int64_t now)
{
	return n->last_seen_ms && now - n->last_seen_ms <= a->cfg->down_after_ms;
}

/* The nodes, a stable copy of the table's pointers. */
static struct agg_node **nodes_of(struct agg *a, size_t *nn)
{
	struct agg_node **v;

	pthread_mutex_lock(&a->lock);
	*nn = a->nnodes;
	v = malloc((*nn + 1) * sizeof(*v));
	if (v)
		memcpy(v, a->nodes, *nn * sizeof(*v));
	pthread_mutex_unlock(&a->lock);
	return v;
}

static void q_nodes(struct agg *a, struct mtn_buf *b)
{
	int64_t now = mt_mono_ms();
	struct agg_node **v;
	size_t nn, i;

	v = nodes_of(a, &nn);
	if (!v) {
		mtn_buf_oom(b);
		return;
	}
	mtn_buf_printf(b, "node:s\tstate:s\tlast_seen_ms_ago:n\tlast_seen_unix_ms:n\t"
		       "connections:n\tsession:s\tfirst_seq:n\tlast_seq:n\t"
		       "received:n\tgaps:n\tsessions:n\tprocesses:n\t"
		       "records_kept:n\trecords_dropped:n\n");
	for (i = 0; i < nn; i++) {
		struct agg_node *n = v[i];

		pthread_mutex_lock(&n->lock);
		mtn_result_put_str(b, n->name, '\t');
		mtn_result_put_str(b, node_up(a, n, now) ? "up" : "down", '\t');
		put_num(b, now - n->last_seen_ms, '\t');
		put_num(b, n->last_seen_real_ms, '\t');
		put_num(b, n->conns, '\t');
		mtn_buf_printf(b, "%016llx\t", (unsigned long long)n->session);
		put_num(b, n->first_seq, '\t');
		put_num(b, n->first_seq ? n->want - 1 : 0, '\t');
		put_num(b, n->received, '\t');
		put_num(b, n->gaps, '\t');
		put_num(b, n->sessions, '\t');
		put_num(b, n->snap.nprocs, '\t');
		put_num(b, n->rec_count, '\t');
		put_num(b, n->recs_dropped, '\n');
		pthread_mutex_unlock(&n->lock);
	}
	free(v);
}

/* ---- sum: groups in an open-addressing table keyed by what it groups by ---- */

struct group {
	const char *node;		/* NULL: not grouped by node */
	/* "": not grouped by it (or outside a container) */
	char where[AGG_NR_WHERE][256];
	char comm[MEMTRACK_COMM_LEN];
	uint64_t v[MTN_QF_COUNT];
	bool used;
};

struct groups {
	struct group *g;
	size_t cap, n;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

static uint64_t hash_of(const struct group *k)
{
	uint64_t h = hash_str(1469598103934665603ULL, k->node);
	int w;

	for (w = 0; w < AGG_NR_WHERE; w++)
		h = hash_str(h, k->where[w]);
	return hash_str(h, k->comm);
}

static bool same_group(const struct group *a, const struct group *b)
{
	int w;

	if (a->node != b->node || strcmp(a->comm, b->comm))
		return false;
	for (w = 0; w < AGG_NR_WHERE; w++)
		if (strcmp(a->where[w], b->where[w]))
			return false;
	return true;
}

static int groups_grow(struct groups *gs)
{
	struct groups ng = { NULL, gs->cap ? gs->cap * 2 : 1024, gs->n };
	size_t i;

	ng.g = calloc(ng.cap, sizeof(*ng.g));
	if (!ng.g)
		return -ENOMEM;
	for (i = 0; i < gs->cap; i++) {
		struct group *o = &gs->g[i];
		size_t k;

		if (!o->used)
			continue;
		k = hash_of(o) & (ng.cap - 1);
		while (ng.g[k].used)
			k = (k + 1) & (ng.cap - 1);
		ng.g[k] = *o;
	}
	free(gs->g);
	*gs = ng;
	return 0;
}

/* The group of key (its figures ignored), made if new. */
static struct group *group_of(struct groups *gs, const struct group *key)
{
	size_t k;

	if ((gs->n + 1) * 2 > gs->cap && groups_grow(gs))
		return NULL;
	k = hash_of(key) & (gs->cap - 1);
	for (;; k = (k + 1) & (gs->cap - 1)) {
		struct group *g = &gs->g[k];

		if (!g->used) {
			*g = *key;
			memset(g->v, 0, sizeof(g->v));
			g->used = true;
			gs->n++;
			return g;
		}
		if (same_group(g, key))
			return g;
	}
}

/* The group key of row r of node n: what q groups by, the rest "". */
static void key_of(const struct mtn_query *q, const struct agg_node *n,
		   const struct agg_row *r, struct group *key)
{
	static const int by_of[AGG_NR_WHERE] = {
		[AGG_NS] = MTN_QK_NS, [AGG_POD] = MTN_QK_POD,
		[AGG_CONTAINER] = MTN_QK_CONTAINER,
	};
	int w;

	key->node = q->by[MTN_QK_NODE] ? n->name : NULL;
	for (w = 0; w < AGG_NR_WHERE; w++)
		snprintf(key->where[w], sizeof(key->where[w]), "%s",
			 q->by[by_of[w]] ? agg_row_where(&n->snap, r, w) : "");
	snprintf(key->comm, sizeof(key->comm), "%s",
		 q->by[MTN_QK_COMM] ? r->comm : "");
}

static int by_field_desc(const void *x, const void *y, void *arg)
{
	const struct group *a = x, *b = y;
	const enum mtn_query_field *f = arg;
	uint64_t va = a->v[*f], vb = b->v[*f];
	int c = a->node && b->node ? strcmp(a->node, b->node) : 0, w;

	if (va != vb)
		return va < vb ? 1 : -1;
	for (w = 0; w < AGG_NR_WHERE && !c; w++)
		c = strcmp(a->where[w], b->where[w]);
	return c ? c : strcmp(a->comm, b->comm);
}

static void q_sum(struct agg *a, const struct mtn_query *q, struct mtn_buf *b)
{
	static const struct group none;
	int64_t now = mt_mono_ms();
	struct groups gs = { 0 };
	struct agg_node **v;
	struct group key;
	size_t nn, i, j, out = 0;
	int k;

	v = nodes_of(a, &nn);
	if (!v)
		goto oom;
	/* no group at all: one row even when nothing matches */
	if (!mtn_query_grouped(q) && !group_of(&gs, &none))
		goto oom;
	for (i = 0; i < nn; i++) {
		struct agg_node *n = v[i];
		const char *node = q->where[MTN_QK_NODE];

		if (node && strcmp(node, n->name))
			continue;
		pthread_mutex_lock(&n->lock);
		for (j = 0; node_up(a, n, now) && j < n->snap.nprogs; j++) {
			const struct agg_row *r = &n->snap.progs[j];
			struct group *g;
			int f;

			if (!matches(q, &n->snap, r))
				continue;
			key_of(q, n, r, &key);
			g = group_of(&gs, &key);
			if (!g) {
				pthread_mutex_unlock(&n->lock);
				goto oom;
			}
			for (f = 0; f < MTN_QF_COUNT; f++)
				g->v[f] += figure(r, f);
		}
		pthread_mutex_unlock(&n->lock);
	}
	for (i = 0; i < gs.cap; i++)
		if (gs.g[i].used)
			gs.g[out++] = gs.g[i];
	qsort_r(gs.g, out, sizeof(*gs.g), by_field_desc, (void *)&q->fields[0]);
	for (k = 0; k < MTN_QK_COUNT; k++)
		if (q->by[k])
			mtn_buf_printf(b, "%s:s\t", mtn_query_keys[k]);
	for (j = 0; j < q->nfields; j++)
		mtn_buf_printf(b, "%s:n%c", mtn_query_fields[q->fields[j]],
			       j + 1 < q->nfields ? '\t' : '\n');
	/* node names stay valid: nodes are never freed */
	for (i = 0; i < out; i++) {
		const struct group *g = &gs.g[i];
		const char *col[MTN_QK_COUNT] = {
			g->node, g->where[AGG_NS], g->where[AGG_POD],
			g->where[AGG_CONTAINER], g->comm,
		};

		for (k = 0; k < MTN_QK_COUNT; k++)
			if (q->by[k])
				mtn_result_put_str(b, col[k], '\t');
		for (j = 0; j < q->nfields; j++)
			put_num(b, g->v[q->fields[j]],
				j + 1 < q->nfields ? '\t' : '\n');
	}
	free(gs.g);
	free(v);
	return;
oom:
	free(gs.g);
	free(v);
	mtn_buf_oom(b);
}

/* ---- top: a min-heap of the N largest ---- */

struct top_row {
	uint64_t key;
	const char *node;
	struct agg_row r;
};

static void sift_down(struct top_row *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct top_row t;

		if (l < n && h[l].key < h[m].key)
			m = l;
		if (l + 1 < n && h[l + 1].key < h[m].key)
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void sift_up(struct top_row *h, size_t i)
{
	while (i && h[(i - 1) / 2].key > h[i].key) {
		struct top_row t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int top_desc(const void *x, const void *y)
{
	const struct top_row *a = x, *b = y;
	int c;

	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	c = strcmp(a->node, b->node);
	return c ? c : a->r.pid - b->r.pid;
}

static void q_top(struct agg *a, const struct mtn_query *q, struct mtn_buf *b)
{
	int64_t now = mt_mono_ms();
	struct top_row *h;
	struct agg_node **v;
	size_t nn, i, j, n = 0;

	v = nodes_of(a, &nn);
	h = malloc(q->n * sizeof(*h));
	if (!v || !h)
		goto oom;
	for (i = 0; i < nn; i++) {
		struct agg_node *nd = v[i];

		if (q->where[MTN_QK_NODE] &&
		    strcmp(q->where[MTN_QK_NODE], nd->name))
			continue;
		pthread_mutex_lock(&nd->lock);
		for (j = 0; node_up(a, nd, now) && j < nd->snap.nprocs; j++) {
			const struct agg_row *r = &nd->snap.procs[j];
			uint64_t key;

			if (!matches(q, &nd->snap, r))
				continue;
			key = figure(r, q->fields[0]);
			if (n < q->n) {
				h[n] = (struct top_row){ key, nd->name, *r };
				sift_up(h, n++);
			} else if (key > h[0].key) {
				h[0] = (struct top_row){ key, nd->name, *r };
				sift_down(h, n, 0);
			}
		}
		pthread_mutex_unlock(&nd->lock);
	}
	qsort(h, n, sizeof(*h), top_desc);
	mtn_buf_printf(b, "node:s\tpid:n\tcomm:s\trss:n\tanon:n\tfile:n\t"
		       "shmem:n\tswap:n\n");
	for (i = 0; i < n; i++) {
		const struct agg_row *r = &h[i].r;

		mtn_result_put_str(b, h[i].node, '\t');
		put_num(b, r->pid, '\t');
		mtn_result_put_str(b, r->comm, '\t');
		put_num(b, figure(r, MTN_QF_RSS), '\t');
		put_num(b, r->anon, '\t');
		put_num(b, r->file, '\t');
		put_num(b, r->shmem, '\t');
		put_num(b, r->swap, '\n');
	}
	free(h);
	free(v);
	return;
oom:
	free(h);
	free(v);
	mtn_buf_oom(b);
}

static void q_events(struct agg *a, const struct mtn_query *q, struct mtn_buf *b)
{
	struct agg_node **v, *n = NULL;
	size_t nn, i, from, size;

	v = nodes_of(a, &nn);
	if (!v) {
		mtn_buf_oom(b);
		return;
	}
	for (i = 0; i < nn && !n; i++)
		if (!strcmp(v[i]->name, q->where[MTN_QK_NODE]))
			n = v[i];
	free(v);
	if (!n) {
		fail(b, "events: no node \"%.255s\"", q->where[MTN_QK_NODE]);
		return;
	}
	b->p[1] = MTN_RESULT_RECORDS;	/* after the status byte */
	pthread_mutex_lock(&n->lock);
	from = q->n && q->n < n->rec_count ? n->rec_count - q->n : 0;
	/* the latest that fit in one RESULT */
	for (i = n->rec_count, size = 2; i > from; i--) {
		const struct memtrack_rec_hdr *r =
			n->recs[(n->rec_first + i - 1) % a->cfg->records_keep];

		if (size + r->size > MTN_RELAY_MAX_RESULT)
			break;
		size += r->size;
	}
	for (; i < n->rec_count; i++) {
		const struct memtrack_rec_hdr *r =
			n->recs[(n->rec_first + i) % a->cfg->records_keep];

		mtn_buf_append(b, r, r->size);
	}
	pthread_mutex_unlock(&n->lock);
}

void agg_query(struct agg *a, const char *text, size_t len, struct mtn_buf *b)
{
	char *q = malloc(len + 1), why[512];
	struct mtn_query qu;

	if (!q) {
		mtn_buf_oom(b);
		return;
	}
	memcpy(q, text, len);
	q[len] = 0;
	if (strlen(q) != len) {
		fail(b, "query contains a NUL byte");
		goto out;
	}
	mtn_buf_append(b, "\0\0", 2);		/* ok, table: changed below */
	if (b->oom)
		goto out;
	if (mtn_query_parse(q, &qu, why, sizeof(why))) {
		fail(b, "%s", why);
		goto out;
	}
	switch (qu.kind) {
	case MTN_Q_NODES:
		q_nodes(a, b);
		break;
	case MTN_Q_SUM:
		q_sum(a, &qu, b);
		break;
	case MTN_Q_TOP:
		q_top(a, &qu, b);
		break;
	case MTN_Q_EVENTS:
		q_events(a, &qu, b);
		break;
	}
out:
	if (!b->oom && b->len > MTN_RELAY_MAX_RESULT)
		fail(b, "the result has %zu bytes, more than a RESULT holds (%u): narrow the query",
		     b->len, MTN_RELAY_MAX_RESULT);
	free(q);
}
