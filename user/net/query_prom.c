// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster queries over Prometheus's HTTP API (query_prom.h).  Each
 * query becomes one or a few PromQL instant queries, all at the same
 * evaluation time, over the families memtrackd exports (metrics.c):
 *
 *   sum FIELDS by comm     sum by (comm) (NODE(FIELD_EXPR) and on (node) UP)
 *   top N by FIELD         topk(N, NODE(PROC_EXPR) and on (node) UP), then
 *                          each figure of exactly those processes
 *   nodes                  max by (node) (NODE(timestamp(memtrack_build_info)))
 *
 * UP is NODE(time() - timestamp(memtrack_build_info) <= down_after): as
 * the aggregator sums only the nodes that are up, the store sums only
 * nodes whose latest sample is that recent.  rss is anon + file + shmem,
 * as the aggregator has it.  Rows come sorted as the aggregator sorts them.
 *
 * A node is named by its node label, which remote write (and node_label)
 * gives, else by its instance, which is all Prometheus gives a scraped
 * target: NODE(E) sets node to that, so that by node, where node=X and
 * nodes see every node, however it reached the store, each apart.
 * memtrack_build_info, not memtrack_node_info, tells a node is up: nodes
 * older than memtrack_node_info have it too.
 *
 * top reads the per-process series (memtrack_process_*), which a node
 * exports for its top_pids largest processes: exact when top_pids >= N.
 * events has no series: it needs the aggregator.
 *
 * The HTTP client is libcurl, the JSON parser jansson.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "buf.h"
#include "grow.h"
#include "libmemtrack.h"
#include "query_client.h"
#include "query_parse.h"
#include "query_prom.h"
#include "relay_proto.h"

#define ANSWER_MAX	(64 << 20)

struct mtn_prom {
	CURL *curl;
	char url[1024];			/* .../api/v1/query */
	unsigned int down_after_ms;
	double now;			/* the evaluation time of a query */
	char err[1536];
};

struct mtn_prom *mtn_prom_new(const char *url, unsigned int down_after_ms,
			      char *err, size_t errlen)
{
	struct mtn_prom *p;
	size_t n = strlen(url);

	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
		snprintf(err, errlen, "%s: not an http:// or https:// URL", url);
		errno = EINVAL;
		return NULL;
	}
	while (n && url[n - 1] == '/')
		n--;
	if (n + sizeof("/api/v1/query") > sizeof(p->url)) {
		snprintf(err, errlen, "URL too long");
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "out of memory");
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->curl = curl_easy_init();
	if (!p->curl) {
		snprintf(err, errlen, "out of memory");
		curl_global_cleanup();
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(p->url, sizeof(p->url), "%.*s/api/v1/query", (int)n, url);
	p->down_after_ms = down_after_ms;
	return p;
}

void mtn_prom_free(struct mtn_prom *p)
{
	if (!p)
		return;
	curl_easy_cleanup(p->curl);
	curl_global_cleanup();
	free(p);
}

static size_t keep(char *d, size_t size, size_t n, void *arg)
{
	struct mtn_buf *b = arg;

	if (b->len + size * n > ANSWER_MAX)
		return 0;		/* curl fails the transfer */
	mtn_buf_append(b, d, size * n);
	return b->oom ? 0 : size * n;
}

/*
 * One PromQL instant query at p->now: its result vector (a new
 * reference), or NULL with p->err set.
 */
static json_t *instant(struct mtn_prom *p, const char *promql, int timeout_ms)
{
	struct mtn_buf ans = { 0 }, form = { 0 };
	json_t *root = NULL, *res = NULL;
	char *esc = NULL;
	long code = 0;
	CURLcode rc;

	esc = curl_easy_escape(p->curl, promql, 0);
	if (!esc) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		return NULL;
	}
	mtn_buf_printf(&form, "query=%s&time=%.3f", esc, p->now);
	curl_free(esc);
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, form.p);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE, (long)form.len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "memtrack/" MEMTRACK_VERSION);
	rc = form.oom ? CURLE_OUT_OF_MEMORY : curl_easy_perform(p->curl);
	if (rc != CURLE_OK) {
		snprintf(p->err, sizeof(p->err), "%s: %s", p->url,
			 curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	root = json_loadb(ans.p ? ans.p : "", ans.len, 0, NULL);
	if (!root || !json_is_object(root)) {
		snprintf(p->err, sizeof(p->err), "%s: HTTP %ld, not a Prometheus API answer",
			 p->url, code);
		goto out;
	}
	if (strcmp(json_string_value(json_object_get(root, "status")) ?: "",
		   "success")) {
		snprintf(p->err, sizeof(p->err), "%s: HTTP %ld: %s: %.300s",
			 p->url, code,
			 json_string_value(json_object_get(root, "errorType")) ?: "error",
			 json_string_value(json_object_get(root, "error")) ?: "");
		goto out;
	}
	res = json_object_get(json_object_get(root, "data"), "result");
	if (!json_is_array(res) ||
	    strcmp(json_string_value(json_object_get(json_object_get(root, "data"),
						     "resultType")) ?: "", "vector")) {
		snprintf(p->err, sizeof(p->err), "%s: the answer is not a vector", p->url);
		res = NULL;
		goto out;
	}
	json_incref(res);
out:
	json_decref(root);
	free(ans.p);
	free(form.p);
	return res;
}

/* A label of a result element, "" if it has none. */
static const char *label(json_t *el, const char *name)
{
	const char *v = json_string_value(json_object_get(json_object_get(el, "metric"),
							  name));

	return v ? v : "";
}

/* Its value, a whole number of bytes or processes. */
static unsigned long long number(json_t *el)
{
	const char *v = json_string_value(json_array_get(json_object_get(el, "value"), 1));
	double d = v ? strtod(v, NULL) : 0;

	return d > 0 && isfinite(d) ? (unsigned long long)llround(d) : 0;
}

/* A PromQL string literal of s: quotes and backslashes escaped. */
static void promql_str(struct mtn_buf *b, const char *s)
{
	mtn_buf_append(b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			mtn_buf_append(b, "\\", 1);
		if (*s == '\n')
			mtn_buf_append(b, "\\n", 2);
		else
			mtn_buf_append(b, s, 1);
	}
	mtn_buf_append(b, "\"", 1);
}

/*
 * {namespace="..",...} of the where clause, "" for none (the labels
 * memtrackd's series carry: a program outside a container has no
 * namespace, pod nor container label, which PromQL matches as "").  node
 * is not among them: a scraped node's series have only instance, and
 * up_only() picks the node.
 */
static void matchers(struct mtn_buf *b, const struct mtn_query *q)
{
	bool first = true;
	int k;

	for (k = 0; k < MTN_QK_COUNT; k++) {
		if (!q->where[k] || k == MTN_QK_NODE)
			continue;
		mtn_buf_printf(b, "%s%s=", first ? "{" : ",",
			       mtn_query_keys[k]);
		promql_str(b, q->where[k]);
		first = false;
	}
	if (!first)
		mtn_buf_append(b, "}", 1);
}

static const char *const family[MTN_QF_COUNT] = {
	[MTN_QF_ANON] = "rss_anon_bytes", [MTN_QF_FILE] = "rss_file_bytes",
	[MTN_QF_SHMEM] = "rss_shmem_bytes", [MTN_QF_SWAP] = "swap_bytes",
};

/*
 * NODE(E), between node_open() and node_close(): E with its node label
 * set to the node's name, the node label if it has one, else instance.
 * label_join makes "NODE;INSTANCE" (either may be empty) and label_replace
 * keeps the first that is not (neither has a ';': a host name, an
 * address:port).  Every other label stays, so no two series become one.
 */
static void node_open(struct mtn_buf *b)
{
	mtn_buf_printf(b, "label_replace(label_join(");
}

static void node_close(struct mtn_buf *b)
{
	mtn_buf_printf(b, ", \"node\", \";\", \"node\", \"instance\"), \"node\", \"$1\", \"node\", \";?([^;]*).*\")");
}

/* A field of programs (level "program") or processes ("process"). */
static void field_expr(struct mtn_buf *b, const char *level,
		       enum mtn_query_field f, const struct mtn_query *q)
{
	if (f == MTN_QF_RSS) {
		mtn_buf_printf(b, "(");
		field_expr(b, level, MTN_QF_ANON, q);
		mtn_buf_printf(b, " + ");
		field_expr(b, level, MTN_QF_FILE, q);
		mtn_buf_printf(b, " + ");
		field_expr(b, level, MTN_QF_SHMEM, q);
		mtn_buf_printf(b, ")");
		return;
	}
	if (f == MTN_QF_NPROC)
		mtn_buf_printf(b, "memtrack_program_processes");
	else
		mtn_buf_printf(b, "memtrack_%s_%s", level, family[f]);
	matchers(b, q);
}

/*
 * "and on (node) UP": only the nodes whose last sample is recent, and
 * only node X with where node=X: its series with node="X" (remote write)
 * or, having no node label, instance="X" (scraped).
 */
static void up_only(struct mtn_buf *b, const struct mtn_prom *p,
		    const struct mtn_query *q)
{
	const char *x = q->where[MTN_QK_NODE];

	mtn_buf_printf(b, " and on (node) ");
	node_open(b);
	mtn_buf_printf(b, "time() - ");
	if (x) {
		mtn_buf_printf(b, "(timestamp(memtrack_build_info{node=");
		promql_str(b, x);
		mtn_buf_printf(b, "}) or timestamp(memtrack_build_info{node=\"\",instance=");
		promql_str(b, x);
		mtn_buf_printf(b, "}))");
	} else {
		mtn_buf_printf(b, "timestamp(memtrack_build_info)");
	}
	mtn_buf_printf(b, " <= %.3f", p->down_after_ms / 1000.0);
	node_close(b);
}

/* ---- sum ---- */

struct row {
	char key[MTN_QK_COUNT][256];	/* node, namespace, ... ("" none) */
	int pid;
	unsigned long long v[MTN_QF_COUNT];
	unsigned long long sort;
};

struct rows {
	struct row *r;
	size_t n, cap;
};

static bool same_key(const struct row *r, const char *const *key, int pid)
{
	int k;

	for (k = 0; k < MTN_QK_COUNT; k++)
		if (strcmp(r->key[k], key[k]))
			return false;
	return r->pid == pid;
}

/* The row of key (a value per mtn_query_key, "" for none) and pid. */
static struct row *row_of(struct rows *rs, const char *const *key, int pid)
{
	size_t i;
	int k;

	for (i = 0; i < rs->n; i++)
		if (same_key(&rs->r[i], key, pid))
			return &rs->r[i];
	if (mt_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof(*rs->r), 64))
		return NULL;
	memset(&rs->r[rs->n], 0, sizeof(rs->r[0]));
	for (k = 0; k < MTN_QK_COUNT; k++)
		snprintf(rs->r[rs->n].key[k], sizeof(rs->r[0].key[k]), "%s",
			 key[k]);
	rs->r[rs->n].pid = pid;
	return &rs->r[rs->n++];
}

/* largest first, then node, namespace, pod, container, comm and pid:
 * the aggregator's order */
static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = 0, k;

	if (a->sort != b->sort)
		return a->sort < b->sort ? 1 : -1;
	for (k = 0; k < MTN_QK_COUNT && !c; k++)
		c = strcmp(a->key[k], b->key[k]);
	return c ? c : (a->pid > b->pid) - (a->pid < b->pid);
}

/* Each element of a vector into its row (by: the keys that group; pid
 * too if by_pid): field f. */
static int fold(struct rows *rs, json_t *vec, enum mtn_query_field f,
		const bool *by, bool by_pid)
{
	size_t i;
	json_t *el;

	json_array_foreach(vec, i, el) {
		const char *key[MTN_QK_COUNT];
		struct row *r;
		int k;

		for (k = 0; k < MTN_QK_COUNT; k++)
			key[k] = by[k] ? label(el, mtn_query_keys[k]) : "";
		r = row_of(rs, key, by_pid ? atoi(label(el, "pid")) : 0);

		if (!r)
			return -ENOMEM;
		r->v[f] = number(el);
	}
	return 0;
}

static int q_sum(struct mtn_prom *p, const struct mtn_query *q, int timeout_ms,
		 struct mtn_buf *out)
{
	static const char *const none[MTN_QK_COUNT] = { "", "", "", "", "" };
	struct rows rs = { 0 };
	unsigned int k;
	size_t i;
	int err = 0, g;

	/* no group at all: one row even when nothing matches */
	if (!mtn_query_grouped(q) && !row_of(&rs, none, 0))
		return -ENOMEM;
	for (k = 0; k < q->nfields && !err; k++) {
		struct mtn_buf e = { 0 };
		const char *sep = " by (";
		json_t *vec;
		int g;

		mtn_buf_printf(&e, "sum");
		for (g = 0; g < MTN_QK_COUNT; g++)
			if (q->by[g]) {
				mtn_buf_printf(&e, "%s%s", sep, mtn_query_keys[g]);
				sep = ", ";
			}
		mtn_buf_printf(&e, "%s (", mtn_query_grouped(q) ? ")" : "");
		node_open(&e);
		field_expr(&e, "program", q->fields[k], q);
		node_close(&e);
		up_only(&e, p, q);
		mtn_buf_printf(&e, ")");
		vec = e.oom ? NULL : instant(p, e.p, timeout_ms);
		free(e.p);
		if (!vec)
			err = -EIO;
		else
			err = fold(&rs, vec, q->fields[k], q->by, false);
		json_decref(vec);
	}
	if (err)
		goto out;
	for (i = 0; i < rs.n; i++)
		rs.r[i].sort = rs.r[i].v[q->fields[0]];
	qsort(rs.r, rs.n, sizeof(*rs.r), row_cmp);
	for (g = 0; g < MTN_QK_COUNT; g++)
		if (q->by[g])
			mtn_buf_printf(out, "%s:s\t", mtn_query_keys[g]);
	for (k = 0; k < q->nfields; k++)
		mtn_buf_printf(out, "%s:n%c", mtn_query_fields[q->fields[k]],
			       k + 1 < q->nfields ? '\t' : '\n');
	for (i = 0; i < rs.n; i++) {
		for (g = 0; g < MTN_QK_COUNT; g++)
			if (q->by[g])
				mtn_result_put_str(out, rs.r[i].key[g], '\t');
		for (k = 0; k < q->nfields; k++)
			mtn_buf_printf(out, "%llu%c", rs.r[i].v[q->fields[k]],
				       k + 1 < q->nfields ? '\t' : '\n');
	}
out:
	free(rs.r);
	return err;
}

/* ---- top ---- */

static int q_top(struct mtn_prom *p, const struct mtn_query *q, int timeout_ms,
		 struct mtn_buf *out)
{
	static const enum mtn_query_field figs[] = {
		MTN_QF_ANON, MTN_QF_FILE, MTN_QF_SHMEM, MTN_QF_SWAP
	};
	static const bool by_node_comm[MTN_QK_COUNT] = {
		[MTN_QK_NODE] = true, [MTN_QK_COMM] = true,
	};
	struct mtn_buf sel = { 0 };
	struct rows rs = { 0 };
	unsigned int k;
	size_t i;
	int err = 0;

	/* the N largest processes of the nodes that are up */
	mtn_buf_printf(&sel, "topk(%lu, ", q->n);
	node_open(&sel);
	field_expr(&sel, "process", q->fields[0], q);
	node_close(&sel);
	up_only(&sel, p, q);
	mtn_buf_printf(&sel, ")");
	if (sel.oom)
		return -ENOMEM;
	for (k = 0; k < MT_ARRAY_SIZE(figs) && !err; k++) {
		struct mtn_buf e = { 0 };
		json_t *vec;

		node_open(&e);
		field_expr(&e, "process", figs[k], q);
		node_close(&e);
		mtn_buf_printf(&e, " and on (node, pid) %s", sel.p);
		vec = e.oom ? NULL : instant(p, e.p, timeout_ms);
		free(e.p);
		if (!vec)
			err = -EIO;
		else
			err = fold(&rs, vec, figs[k], by_node_comm, true);
		json_decref(vec);
	}
	free(sel.p);
	if (err)
		goto out;
	for (i = 0; i < rs.n; i++) {
		struct row *r = &rs.r[i];

		r->v[MTN_QF_RSS] = r->v[MTN_QF_ANON] + r->v[MTN_QF_FILE] +
				   r->v[MTN_QF_SHMEM];
		r->sort = r->v[q->fields[0]];
	}
	/* the aggregator's order: key, node, pid (comm ties with pid) */
	qsort(rs.r, rs.n, sizeof(*rs.r), row_cmp);
	mtn_buf_printf(out, "node:s\tpid:n\tcomm:s\trss:n\tanon:n\tfile:n\tshmem:n\tswap:n\n");
	for (i = 0; i < rs.n && i < q->n; i++) {
		const struct row *r = &rs.r[i];

		mtn_result_put_str(out, r->key[MTN_QK_NODE], '\t');
		mtn_buf_printf(out, "%d\t", r->pid);
		mtn_result_put_str(out, r->key[MTN_QK_COMM], '\t');
		mtn_buf_printf(out, "%llu\t%llu\t%llu\t%llu\t%llu\n",
			       r->v[MTN_QF_RSS], r->v[MTN_QF_ANON],
			       r->v[MTN_QF_FILE], r->v[MTN_QF_SHMEM],
			       r->v[MTN_QF_SWAP]);
	}
out:
	free(rs.r);
	return err;
}

/* ---- nodes ---- */

/* AGG by (node) (NODE(E)) */
static void by_node(struct mtn_buf *b, const char *agg, const char *e)
{
	mtn_buf_printf(b, "%s by (node) (", agg);
	node_open(b);
	mtn_buf_printf(b, "%s", e);
	node_close(b);
	mtn_buf_printf(b, ")");
}

static int q_nodes(struct mtn_prom *p, int timeout_ms, struct mtn_buf *out)
{
	struct mtn_buf e = { 0 }, f = { 0 };
	struct rows rs = { 0 };
	json_t *seen = NULL, *procs = NULL, *el;
	size_t i;
	int err = 0;

	by_node(&e, "max", "timestamp(memtrack_build_info)");
	by_node(&f, "sum", "memtrack_program_processes");
	if (e.oom || f.oom) {
		err = -ENOMEM;
		goto out;
	}
	seen = instant(p, e.p, timeout_ms);
	procs = seen ? instant(p, f.p, timeout_ms) : NULL;
	if (!procs) {
		err = -EIO;
		goto out;
	}
	json_array_foreach(seen, i, el) {
		const char *v = json_string_value(json_array_get(json_object_get(el, "value"), 1));
		const char *key[MTN_QK_COUNT] = { label(el, "node"), "", "", "", "" };
		struct row *r = row_of(&rs, key, 0);

		if (!r) {
			err = -ENOMEM;
			goto out;
		}
		/* the last sample's time, in ms */
		r->sort = v ? (unsigned long long)llround(strtod(v, NULL) * 1000) : 0;
	}
	json_array_foreach(procs, i, el) {
		size_t j;

		for (j = 0; j < rs.n; j++)
			if (!strcmp(rs.r[j].key[MTN_QK_NODE], label(el, "node")))
				rs.r[j].v[MTN_QF_NPROC] = number(el);
	}
	mtn_buf_printf(out, "node:s\tstate:s\tlast_seen_ms_ago:n\tlast_seen_unix_ms:n\tprocesses:n\n");
	for (i = 0; i < rs.n; i++) {
		const struct row *r = &rs.r[i];
		long long ago = llround(p->now * 1000) - (long long)r->sort;

		if (ago < 0)
			ago = 0;
		mtn_result_put_str(out, r->key[MTN_QK_NODE], '\t');
		mtn_result_put_str(out, ago <= p->down_after_ms ? "up" : "down", '\t');
		mtn_buf_printf(out, "%lld\t%llu\t%llu\n", ago, r->sort,
			       r->v[MTN_QF_NPROC]);
	}
out:
	json_decref(seen);
	json_decref(procs);
	free(e.p);
	free(f.p);
	free(rs.r);
	return err;
}

int mtn_prom_query(struct mtn_prom *p, const char *query, int timeout_ms,
		   struct mtn_query_result *res, char *err, size_t errlen)
{
	struct mtn_buf out = { 0 };
	char *text = strdup(query), why[512];
	struct mtn_query q;
	struct timespec ts;
	int r = 0;

	memset(res, 0, sizeof(*res));
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (mtn_query_parse(text, &q, why, sizeof(why)) ||
	    (q.kind == MTN_Q_EVENTS &&
	     snprintf(why, sizeof(why), "events: a node's records are in the aggregator, not in Prometheus") > 0)) {
		res->ok = false;
		snprintf(res->error, sizeof(res->error), "%s", why);
		free(text);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	p->now = ts.tv_sec + ts.tv_nsec / 1e9;
	p->err[0] = '\0';
	if (q.kind == MTN_Q_NODES)
		r = q_nodes(p, timeout_ms, &out);
	else if (q.kind == MTN_Q_SUM)
		r = q_sum(p, &q, timeout_ms, &out);
	else
		r = q_top(p, &q, timeout_ms, &out);
	free(text);
	if (!r && out.oom)
		r = -ENOMEM;
	if (!r)
		r = mtn_query_result_table(out.p, out.len, res);
	if (r)
		snprintf(err, errlen, "%s", p->err[0] ? p->err :
			 r == -ENOMEM ? "out of memory" : "bad answer");
	free(out.p);
	return r;
}
