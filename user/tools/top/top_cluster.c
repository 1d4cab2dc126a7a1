// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster view's data (top_cluster.h): three queries to a memtrackd
 * aggregator per refresh over one connection, kept open between refreshes
 * and made again after any failure; or the same three queries to a
 * Prometheus-compatible API (prometheus:URL, query_prom.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libmemtrack.h"
#include "conn.h"
#include "query_client.h"
#include "query_prom.h"
#include "query_target.h"
#include "top_cluster.h"

#define CONNECT_TIMEOUT_MS	3000
#define PROM_PREFIX		"prometheus:"
/* as memtrack-query's default: remote write every 10 s, a few late */
#define PROM_DOWN_AFTER_MS	60000

struct top_cluster {
	char name[80];
	struct mtn_query_target target;
	struct mtn_query_client *q;	/* NULL: connect at the next ask */
	struct mtn_prom *prom;		/* prometheus:URL, else NULL */
	size_t max_procs;
	/* the thread's, under lock */
	pthread_t thread;
	bool running, stop;
	int interval_ms;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct top_cluster_snap latest;
};

struct top_cluster *top_cluster_new(const char *server, const char *cfgpath,
				    size_t max_procs, char *err,
				    size_t errlen)
{
	struct top_cluster *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (server && !strncmp(server, PROM_PREFIX, strlen(PROM_PREFIX))) {
		c->prom = mtn_prom_new(server + strlen(PROM_PREFIX),
				       PROM_DOWN_AFTER_MS, err, errlen);
		if (!c->prom) {
			free(c);
			return NULL;
		}
		snprintf(c->name, sizeof(c->name), "%.79s", server);
	} else if (mtn_query_target(cfgpath, server, &c->target, err, errlen)) {
		free(c);
		return NULL;
	} else {
		snprintf(c->name, sizeof(c->name), "%s%s%s:%u",
			 strchr(c->target.addr, ':') ? "[" : "",
			 c->target.addr, strchr(c->target.addr, ':') ? "]" : "",
			 c->target.port);
	}
	c->max_procs = max_procs;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	return c;
}

const char *top_cluster_name(const struct top_cluster *c)
{
	return c->name;
}

void top_cluster_snap_free(struct top_cluster_snap *s)
{
	free(s->procs);
	free(s->progs);
	s->procs = NULL;
	s->progs = NULL;
	s->nprocs = s->nprogs = 0;
}

static uint64_t num(const struct mtn_query_result *r, size_t row,
		    const char *col)
{
	const char *v = mtn_query_cell(r, row, col);

	return v ? strtoull(v, NULL, 10) : 0;
}

static void str(char *dst, size_t size, const struct mtn_query_result *r,
		size_t row, const char *col)
{
	const char *v = mtn_query_cell(r, row, col);

	snprintf(dst, size, "%s", v ? v : "");
}

/* One query; 0, or -1 with s->error set (and the connection dropped). */
static int ask(struct top_cluster *c, const char *query, int timeout_ms,
	       struct mtn_query_result *res, struct top_cluster_snap *s)
{
	char err[512];

	if (c->prom) {
		if (mtn_prom_query(c->prom, query, timeout_ms, res, err,
				   sizeof(err)))
			goto fail;
		goto answered;
	}
	if (!c->q) {
		c->q = mtn_query_connect(c->target.addr, c->target.port,
					 c->target.creds, timeout_ms, err,
					 sizeof(err));
		if (!c->q)
			goto fail;
	}
	if (mtn_query_run(c->q, query, timeout_ms, res, err, sizeof(err))) {
		mtn_query_close(c->q);
		c->q = NULL;
		goto fail;
	}
answered:
	if (!res->ok || res->records) {
		snprintf(s->error, sizeof(s->error), "%.32s: %.200s", query,
			 res->ok ? "records instead of rows" : res->error);
		mtn_query_result_free(res);
		return -1;
	}
	return 0;
fail:
	snprintf(s->error, sizeof(s->error), "%.250s", err);
	return -1;
}

static int fetch_nodes(struct top_cluster *c, int timeout_ms,
		       struct top_cluster_snap *s)
{
	struct mtn_query_result r;
	size_t i;

	if (ask(c, "nodes", timeout_ms, &r, s))
		return -1;
	for (i = 0; i < r.nrows; i++) {
		const char *st = mtn_query_cell(&r, i, "state");

		if (st && !strcmp(st, "up"))
			s->nodes_up++;
		else
			s->nodes_down++;
	}
	mtn_query_result_free(&r);
	return 0;
}

static int fetch_procs(struct top_cluster *c, int timeout_ms,
		       struct top_cluster_snap *s)
{
	struct mtn_query_result r;
	char query[64];
	size_t i;

	snprintf(query, sizeof(query), "top %zu", c->max_procs);
	if (ask(c, query, timeout_ms, &r, s))
		return -1;
	s->procs = calloc(r.nrows ? r.nrows : 1, sizeof(*s->procs));
	if (!s->procs) {
		mtn_query_result_free(&r);
		snprintf(s->error, sizeof(s->error), "out of memory");
		return -1;
	}
	for (i = 0; i < r.nrows; i++) {
		struct top_cluster_proc *p = &s->procs[i];

		str(p->node, sizeof(p->node), &r, i, "node");
		str(p->comm, sizeof(p->comm), &r, i, "comm");
		p->pid = num(&r, i, "pid");
		p->rss = num(&r, i, "rss");
		p->anon = num(&r, i, "anon");
		p->file = num(&r, i, "file");
		p->shmem = num(&r, i, "shmem");
		p->swap = num(&r, i, "swap");
	}
	s->nprocs = r.nrows;
	mtn_query_result_free(&r);
	return 0;
}

static int fetch_progs(struct top_cluster *c, int timeout_ms,
		       struct top_cluster_snap *s)
{
	struct mtn_query_result r;
	size_t i;

	if (ask(c, "sum rss,nproc,anon,file,shmem,swap by comm", timeout_ms,
		&r, s))
		return -1;
	s->progs = calloc(r.nrows ? r.nrows : 1, sizeof(*s->progs));
	if (!s->progs) {
		mtn_query_result_free(&r);
		snprintf(s->error, sizeof(s->error), "out of memory");
		return -1;
	}
	for (i = 0; i < r.nrows; i++) {
		struct top_cluster_prog *p = &s->progs[i];

		str(p->comm, sizeof(p->comm), &r, i, "comm");
		p->nproc = num(&r, i, "nproc");
		p->rss = num(&r, i, "rss");
		p->anon = num(&r, i, "anon");
		p->file = num(&r, i, "file");
		p->shmem = num(&r, i, "shmem");
		p->swap = num(&r, i, "swap");
	}
	s->nprogs = r.nrows;
	mtn_query_result_free(&r);
	return 0;
}

int top_cluster_fetch(struct top_cluster *c, int timeout_ms,
		      struct top_cluster_snap *s)
{
	memset(s, 0, sizeof(*s));
	if (fetch_nodes(c, timeout_ms, s) || fetch_procs(c, timeout_ms, s) ||
	    fetch_progs(c, timeout_ms, s)) {
		top_cluster_snap_free(s);
		s->nodes_up = s->nodes_down = 0;
		return -1;
	}
	s->have = true;
	s->when = mt_mono_s();
	return 0;
}

static void *cluster_thread(void *arg)
{
	struct top_cluster *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		struct top_cluster_snap s;
		int interval = c->interval_ms;
		struct timespec until;

		pthread_mutex_unlock(&c->lock);
		/* an answer older than the interval is of no use */
		top_cluster_fetch(c, interval, &s);
		pthread_mutex_lock(&c->lock);
		if (s.have) {
			top_cluster_snap_free(&c->latest);
			c->latest = s;
		} else {
			/* keep the last answer; say why there is no new one */
			memcpy(c->latest.error, s.error, sizeof(s.error));
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += interval / 1000;
		until.tv_nsec += (interval % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!c->stop &&
		       pthread_cond_timedwait(&c->wake, &c->lock, &until) !=
		       ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int top_cluster_start(struct top_cluster *c, int interval_ms)
{
	int err;

	pthread_mutex_lock(&c->lock);
	c->interval_ms = interval_ms;
	pthread_mutex_unlock(&c->lock);
	if (c->running)
		return 0;
	err = pthread_create(&c->thread, NULL, cluster_thread, c);
	if (err)
		return -err;
	c->running = true;
	return 0;
}

static int copy_array(void **dst, const void *src, size_t n, size_t size)
{
	*dst = malloc(n ? n * size : 1);
	if (!*dst)
		return -1;
	memcpy(*dst, src, n * size);
	return 0;
}

void top_cluster_latest(struct top_cluster *c, struct top_cluster_snap *s)
{
	pthread_mutex_lock(&c->lock);
	*s = c->latest;
	s->procs = NULL;
	s->progs = NULL;
	if (copy_array((void **)&s->procs, c->latest.procs, s->nprocs,
		       sizeof(*s->procs)) ||
	    copy_array((void **)&s->progs, c->latest.progs, s->nprogs,
			sizeof(*s->progs))) {
		top_cluster_snap_free(s);
		s->have = false;
		snprintf(s->error, sizeof(s->error), "out of memory");
	}
	pthread_mutex_unlock(&c->lock);
}

void top_cluster_free(struct top_cluster *c)
{
	if (!c)
		return;
	if (c->running) {
		pthread_mutex_lock(&c->lock);
		c->stop = true;
		pthread_cond_signal(&c->wake);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
	}
	mtn_query_close(c->q);
	mtn_prom_free(c->prom);
	mtn_creds_free(c->target.creds);
	top_cluster_snap_free(&c->latest);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	free(c);
}
