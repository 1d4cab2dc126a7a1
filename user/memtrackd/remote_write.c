// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus remote write, delivered the way Prometheus's own queue
 * manager delivers it: each endpoint has a bounded in-memory queue and a
 * thread that sends it in batches, in order.  A batch that fails for a
 * reason that may pass (no connection, a timeout, HTTP 5xx or 429) is
 * sent again after a backoff (100 ms doubling to 5 s, or what the
 * answer's Retry-After asks, up to 5 minutes) until it goes through; one
 * the receiver refuses for good (any other 4xx) is counted failed and not
 * sent again.  A sample that does not fit the queue is
 * dropped when it comes and counted, so that for every endpoint
 *
 *   samples_in = sent + failed + dropped + pending
 *
 * holds exactly at any moment (the counters are read under one lock).
 * A whole sample is queued or dropped, never a part of it.
 *
 * One sample's series are built once (the sink) and shared by the
 * endpoints' queues, freed when the last one has sent them.
 *
 * A series of the last sample that this one lacks (a process that exited,
 * a program forgotten, a process out of the top N) gets Prometheus's
 * staleness marker, as a scrape that no longer finds it does: without it
 * the series would answer queries for 5 minutes after it ended.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include <curl/curl.h>

#include "grow.h"
#include "log.h"
#include "libmemtrack.h"
#include "remote_write.h"
#include "rw_request.h"
#include "secret.h"

/*
 * A full queue is logged when it first drops a sample, then as a total
 * every DROP_LOG_S while it goes on dropping: once per sample would flood
 * the log at the very moment the receiver is in trouble.
 */
#define DROP_LOG_S	10
#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
/* a Retry-After longer than this is a receiver's mistake, not a plan */
#define RETRY_AFTER_MAX_S	300

/* One sample's series, shared by the queues that hold it. */
struct rw_block {
	unsigned int refs;
	size_t n;
	struct rw_sample *s;
	char *arena;			/* the labels */
};

struct rw_ent {
	struct rw_ent *next;
	struct rw_block *b;
	size_t done;			/* samples of b sent (or failed) */
};

struct rw_endpoint {
	struct mtd_rw *rw;
	char url[512];
	struct rw_client *client;
	pthread_t thread;
	bool started;
	struct rw_ent *head, *tail;
	uint64_t in, sent, failed, dropped, retries;
	size_t pending;
	uint64_t dropped_logged;	/* dropped when last logged */
	struct timespec drop_logged_at;	/* CLOCK_MONOTONIC */
};

/* A series being built: its labels at off in the arena. */
struct rw_built {
	size_t off;
	uint16_t nlab;
	double value;
};

struct mtd_rw {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* queued, or stop */
	bool stop;
	struct timespec stop_by;	/* CLOCK_MONOTONIC */
	unsigned int batch, queue, timeout_ms;
	unsigned int nep;
	bool curl_ready, started;
	struct rw_endpoint ep[MTN_MAX_REMOTE_WRITES];
	char node_label[64], node[256];
	/* credentials, read at start */
	char *ca, *cert, *key, *password, *token;
	char user[128];
	/* the sample being built (the daemon's main thread only) */
	struct mtd_series_sink sink;
	int64_t ts_ms;
	struct mtn_buf arena;
	struct rw_built *built;
	size_t nbuilt, built_cap;
	bool oom;
	/* the last sample's series (their labels, back to back) */
	char *last;
	size_t *last_off, nlast, last_len;
};

/*
 * Prometheus's staleness marker (value.StaleNaN): a NaN of its own bits,
 * which the receiver tells from any NaN a series may hold.
 */
#define STALE_NAN_BITS	0x7ff0000000000002ULL

static void mono_after(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool mono_passed(const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > ts->tv_sec ||
	       (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}

/* Drop the block's reference of one queue; the caller holds the lock. */
static void block_put(struct rw_block *b)
{
	if (--b->refs)
		return;
	free(b->s);
	free(b->arena);
	free(b);
}

/* Up to max samples from the head of the queue, in order. */
static size_t gather(struct rw_endpoint *ep, const struct rw_sample **out,
		     size_t max)
{
	const struct rw_ent *e;
	size_t n = 0, i;

	for (e = ep->head; e && n < max; e = e->next)
		for (i = e->done; i < e->b->n && n < max; i++)
			out[n++] = &e->b->s[i];
	return n;
}

/* n samples from the head are done with; the caller holds the lock. */
static void advance(struct rw_endpoint *ep, size_t n)
{
	ep->pending -= n;
	while (n) {
		struct rw_ent *e = ep->head;
		size_t k = e->b->n - e->done < n ? e->b->n - e->done : n;

		e->done += k;
		n -= k;
		if (e->done < e->b->n)
			break;
		ep->head = e->next;
		if (!ep->head)
			ep->tail = NULL;
		block_put(e->b);
		free(e);
	}
}

static void *sender(void *arg)
{
	struct rw_endpoint *ep = arg;
	struct mtd_rw *rw = ep->rw;
	const struct rw_sample **batch;
	unsigned int backoff = 0, wait_ms;
	unsigned long retry_after;
	size_t n = 0;
	char why[512];

	batch = malloc(rw->batch * sizeof(*batch));
	if (!batch) {
		mtn_log(LOG_ERR, "remote write %s: out of memory; not sending",
			ep->url);
		return NULL;
	}
	pthread_mutex_lock(&rw->lock);
	for (;;) {
		enum rw_result r;
		struct timespec until;

		while (!rw->stop && !ep->head)
			pthread_cond_wait(&rw->cond, &rw->lock);
		if (!ep->head || (rw->stop && mono_passed(&rw->stop_by)))
			break;
		/* a batch tried again is the same batch, not a larger one */
		n = gather(ep, batch, backoff ? n : rw->batch);
		pthread_mutex_unlock(&rw->lock);
		r = rw_client_send(ep->client, batch, n, why, sizeof(why));
		pthread_mutex_lock(&rw->lock);
		if (r == RW_RETRY) {
			ep->retries++;
			if (!backoff)
				mtn_log(LOG_WARNING,
					"remote write %s: %s; retrying (%zu samples queued)",
					ep->url, why, ep->pending);
			if (rw->stop)
				break;
			backoff = backoff ? backoff * 2 : BACKOFF_MIN_MS;
			if (backoff > BACKOFF_MAX_MS)
				backoff = BACKOFF_MAX_MS;
			/* as Prometheus: the receiver's Retry-After wins */
			wait_ms = backoff;
			retry_after = rw_client_retry_after(ep->client);
			if (retry_after) {
				if (retry_after > RETRY_AFTER_MAX_S)
					retry_after = RETRY_AFTER_MAX_S;
				wait_ms = retry_after * 1000;
				mtn_log(LOG_INFO,
					"remote write %s: retrying after %lu s, as the receiver asked",
					ep->url, retry_after);
			}
			mono_after(&until, wait_ms);
			while (!rw->stop &&
			       pthread_cond_timedwait(&rw->cond, &rw->lock,
						      &until) != ETIMEDOUT)
				;
			continue;
		}
		if (backoff)
			mtn_log(LOG_INFO, "remote write %s: sending again",
				ep->url);
		backoff = 0;
		if (r == RW_SENT) {
			ep->sent += n;
		} else {
			ep->failed += n;
			mtn_log(LOG_WARNING,
				"remote write %s: %s; %zu samples lost",
				ep->url, why, n);
		}
		advance(ep, n);
	}
	pthread_mutex_unlock(&rw->lock);
	free(batch);
	return NULL;
}

/* ---- the sink: one sample's series ---- */

static void put(struct mtd_series_sink *k, const struct mtd_label *l,
		size_t n, double v)
{
	struct mtd_rw *rw = (struct mtd_rw *)((char *)k -
					      offsetof(struct mtd_rw, sink));
	struct mtd_label all[MTD_SERIES_MAX_LABELS + 1];
	size_t i, j, m = 0;
	struct rw_built *bt;

	/* the spec's label set: sorted by name, no duplicate, no empty value */
	for (i = 0; i <= n; i++) {
		struct mtd_label x = i < n ? l[i] :
			(struct mtd_label){ rw->node_label, rw->node };

		if (!x.value[0])
			continue;
		for (j = m; j > 0 && strcmp(all[j - 1].name, x.name) > 0; j--)
			;
		if (j > 0 && !strcmp(all[j - 1].name, x.name))
			continue;
		memmove(&all[j + 1], &all[j], (m - j) * sizeof(all[0]));
		all[j] = x;
		m++;
	}
	if (mt_grow((void **)&rw->built, &rw->built_cap, rw->nbuilt + 1,
		    sizeof(*rw->built), 1024)) {
		rw->oom = true;
		return;
	}
	bt = &rw->built[rw->nbuilt++];
	bt->off = rw->arena.len;
	bt->nlab = m;
	bt->value = v;
	for (i = 0; i < m; i++) {
		mtn_buf_append(&rw->arena, all[i].name, strlen(all[i].name) + 1);
		mtn_buf_append(&rw->arena, all[i].value,
			       strlen(all[i].value) + 1);
	}
}

struct mtd_series_sink *mtd_rw_begin(struct mtd_rw *rw, int64_t ts_ms)
{
	rw->ts_ms = ts_ms;
	rw->nbuilt = 0;
	rw->oom = false;
	free(rw->arena.p);
	memset(&rw->arena, 0, sizeof(rw->arena));
	return &rw->sink;
}

/*
 * After a drop, under the lock: what to log (false: nothing now).  The
 * first drop at once, then a total at most every DROP_LOG_S.
 */
static bool drop_news(struct rw_endpoint *ep, unsigned int queue, char *msg,
		      size_t len)
{
	struct timespec now;
	long secs;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = now.tv_sec - ep->drop_logged_at.tv_sec;
	if (ep->dropped_logged && secs < DROP_LOG_S)
		return false;
	if (!ep->dropped_logged)
		snprintf(msg, len, "remote write %s: queue full (remote_write_queue_samples = %u): a sample of %llu series dropped; drops are logged every %d s while they go on",
			 ep->url, queue, (unsigned long long)ep->dropped,
			 DROP_LOG_S);
	else
		snprintf(msg, len, "remote write %s: queue full: %llu samples dropped in the last %ld s, %llu in all",
			 ep->url,
			 (unsigned long long)(ep->dropped - ep->dropped_logged),
			 secs, (unsigned long long)ep->dropped);
	ep->dropped_logged = ep->dropped;
	ep->drop_logged_at = now;
	return true;
}

/* The labels of series i of the one being built: bytes and length. */
static const char *built_key(const struct mtd_rw *rw, size_t i, size_t *len)
{
	size_t end = i + 1 < rw->nbuilt ? rw->built[i + 1].off : rw->arena.len;

	*len = end - rw->built[i].off;
	return rw->arena.p + rw->built[i].off;
}

static uint64_t key_hash(const char *k, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	while (len--)
		h = (h ^ (unsigned char)*k++) * 1099511628211ULL;
	return h;
}

/*
 * The series of the last sample this one lacks, appended with the
 * staleness marker; then this sample's series become the last ones.
 * Memory that is not there skips the markers (a series then ages out in
 * Prometheus by itself), never the sample.
 */
static void mark_stale(struct mtd_rw *rw)
{
	size_t n = rw->nbuilt, cur_len = rw->arena.len, cap = 1, i, k, len;
	size_t *off = NULL;
	uint64_t bits = STALE_NAN_BITS;
	uint32_t *set;
	char *copy = NULL;
	double stale;

	memcpy(&stale, &bits, sizeof(stale));
	while (cap < 2 * n + 2)
		cap <<= 1;
	set = malloc(cap * sizeof(*set));
	if (rw->arena.len) {
		copy = malloc(rw->arena.len);
		off = malloc(n * sizeof(*off));
	}
	if (!set || (rw->arena.len && (!copy || !off))) {
		free(set);
		free(copy);
		free(off);
		return;
	}
	/* this sample's series in a set (index + 1; 0 free) */
	memset(set, 0, cap * sizeof(*set));
	for (i = 0; i < n; i++) {
		const char *key = built_key(rw, i, &len);

		for (k = key_hash(key, len) & (cap - 1); set[k];
		     k = (k + 1) & (cap - 1))
			;
		set[k] = i + 1;
		off[i] = rw->built[i].off;
	}
	if (rw->arena.len)
		memcpy(copy, rw->arena.p, rw->arena.len);
	for (i = 0; i < rw->nlast && !rw->oom; i++) {
		size_t end = i + 1 < rw->nlast ? rw->last_off[i + 1] :
			     rw->last_len;
		const char *key = rw->last + rw->last_off[i];
		size_t klen = end - rw->last_off[i], blen;
		bool found = false;
		struct rw_built *bt;
		uint16_t nlab = 0;
		const char *p;

		for (k = key_hash(key, klen) & (cap - 1); set[k] && !found;
		     k = (k + 1) & (cap - 1)) {
			const char *b = built_key(rw, set[k] - 1, &blen);

			found = blen == klen && !memcmp(b, key, klen);
		}
		if (found)
			continue;
		if (mt_grow((void **)&rw->built, &rw->built_cap, rw->nbuilt + 1,
			    sizeof(*rw->built), 1024))
			break;
		/* its labels as they were: name and value pairs */
		for (p = key; p < key + klen; p += strlen(p) + 1)
			nlab++;
		bt = &rw->built[rw->nbuilt++];
		bt->off = rw->arena.len;
		bt->nlab = nlab / 2;
		bt->value = stale;
		mtn_buf_append(&rw->arena, key, klen);
	}
	free(set);
	free(rw->last);
	free(rw->last_off);
	rw->last = copy;
	rw->last_off = off;
	rw->nlast = n;
	rw->last_len = cur_len;
}

void mtd_rw_commit(struct mtd_rw *rw)
{
	char news[MTN_MAX_REMOTE_WRITES][768];
	bool drops[MTN_MAX_REMOTE_WRITES] = { false };
	struct rw_block *b;
	size_t i;

	if (!rw->nbuilt)
		return;		/* nothing to send (never: build_info is one) */
	if (!rw->oom && !rw->arena.oom)
		mark_stale(rw);
	b = calloc(1, sizeof(*b));

	if (b)
		b->s = malloc(rw->nbuilt * sizeof(*b->s));
	if (!b || !b->s || rw->oom || rw->arena.oom) {
		/* not even a sample to count: say so */
		mtn_log(LOG_WARNING, "remote write: out of memory; a sample of %zu series lost",
			rw->nbuilt);
		if (b)
			free(b->s);
		free(b);
		return;
	}
	b->n = rw->nbuilt;
	b->arena = rw->arena.p;
	memset(&rw->arena, 0, sizeof(rw->arena));
	for (i = 0; i < b->n; i++)
		b->s[i] = (struct rw_sample){
			.labels = b->arena + rw->built[i].off,
			.nlab = rw->built[i].nlab,
			.value = rw->built[i].value,
			.ts_ms = rw->ts_ms,
		};
	b->refs = 1;		/* ours, until every queue has it */
	pthread_mutex_lock(&rw->lock);
	for (i = 0; i < rw->nep; i++) {
		struct rw_endpoint *ep = &rw->ep[i];
		struct rw_ent *e;

		ep->in += b->n;
		e = ep->pending + b->n > rw->queue ? NULL :
		    calloc(1, sizeof(*e));
		if (!e) {
			ep->dropped += b->n;
			drops[i] = drop_news(ep, rw->queue, news[i], sizeof(news[i]));
			continue;
		}
		e->b = b;
		b->refs++;
		if (ep->tail)
			ep->tail->next = e;
		else
			ep->head = e;
		ep->tail = e;
		ep->pending += b->n;
	}
	block_put(b);
	pthread_cond_broadcast(&rw->cond);
	pthread_mutex_unlock(&rw->lock);
	for (i = 0; i < rw->nep; i++)
		if (drops[i])
			mtn_log(LOG_WARNING, "%s", news[i]);
}

/* An endpoint's figures in mtd_rw_metrics()'s families, in order. */
static uint64_t ep_value(const void *arg, unsigned int i, unsigned int f,
			 const char **name)
{
	const struct rw_endpoint *ep = &((const struct mtd_rw *)arg)->ep[i];
	uint64_t v[] = { ep->in, ep->sent, ep->failed, ep->dropped,
			 ep->pending, ep->retries };

	*name = ep->url;
	return v[f];
}

void mtd_rw_metrics(struct mtd_rw *rw, const struct mtd_expo_opts *o,
		    struct mtn_buf *b)
{
	static const struct mtd_family_doc fam[] = {
		{ "memtrack_remote_write_samples_in_total", "counter",
		  "Samples offered to the endpoint's queue." },
		{ "memtrack_remote_write_samples_sent_total", "counter",
		  "Samples the endpoint accepted (HTTP 2xx)." },
		{ "memtrack_remote_write_samples_failed_total", "counter",
		  "Samples the endpoint refused for good (HTTP 4xx but 429); not sent again." },
		{ "memtrack_remote_write_samples_dropped_total", "counter",
		  "Samples dropped because the queue was full (remote_write_queue_samples)." },
		{ "memtrack_remote_write_samples_pending", "gauge",
		  "Samples in the queue, not sent yet." },
		{ "memtrack_remote_write_retries_total", "counter",
		  "Requests that failed and were tried again (connection, timeout, 5xx, 429)." },
	};

	pthread_mutex_lock(&rw->lock);
	mtd_peer_families(b, o, fam, MT_ARRAY_SIZE(fam), "url", rw->nep,
			  ep_value, rw);
	pthread_mutex_unlock(&rw->lock);
}

/* ---- set-up ---- */

/* A password or token file: its first line. */
static int read_first_line(const char *key, const char *path, char **out,
			   char *err, size_t errlen)
{
	if (mtn_read_secret(key, path, out, err, errlen))
		return -1;
	(*out)[strcspn(*out, "\r\n")] = '\0';
	if (!(*out)[0]) {
		snprintf(err, errlen, "%s %s: empty", key, path);
		return -1;
	}
	return 0;
}

struct mtd_rw *mtd_rw_new(const struct mtn_config *c, char *err,
			  size_t errlen)
{
	const struct mtn_rw_config *rc = &c->rw;
	struct rw_client_opts o = { .timeout_ms = rc->timeout_ms };
	pthread_condattr_t ca;
	struct mtd_rw *rw;
	unsigned int i;

	rw = calloc(1, sizeof(*rw));
	if (!rw) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&rw->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rw->cond, &ca);
	pthread_condattr_destroy(&ca);
	rw->sink.put = put;
	rw->batch = rc->batch_samples;
	rw->queue = rc->queue_samples;
	rw->timeout_ms = rc->timeout_ms;
	snprintf(rw->node_label, sizeof(rw->node_label), "%s", rc->node_label);
	snprintf(rw->node, sizeof(rw->node), "%s", c->node);
	snprintf(rw->user, sizeof(rw->user), "%s", rc->user);
	if ((rc->ca_file[0] &&
	     mtn_read_public("remote_write_ca_file", rc->ca_file, &rw->ca,
			     err, errlen)) ||
	    (rc->cert_file[0] &&
	     mtn_read_public("remote_write_cert_file", rc->cert_file,
			     &rw->cert, err, errlen)) ||
	    (rc->key_file[0] &&
	     mtn_read_secret("remote_write_key_file", rc->key_file, &rw->key,
			     err, errlen)) ||
	    (rc->password_file[0] &&
	     read_first_line("remote_write_password_file", rc->password_file,
			     &rw->password, err, errlen)) ||
	    (rc->bearer_token_file[0] &&
	     read_first_line("remote_write_bearer_token_file",
			     rc->bearer_token_file, &rw->token, err, errlen)))
		goto fail;
	o.ca_pem = rw->ca;
	o.cert_pem = rw->cert;
	o.key_pem = rw->key;
	o.user = rw->user[0] ? rw->user : NULL;
	o.password = rw->password;
	o.bearer_token = rw->token;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "libcurl: cannot initialize");
		goto fail;
	}
	rw->curl_ready = true;
	for (i = 0; i < rc->nr_urls; i++) {
		struct rw_endpoint *ep = &rw->ep[rw->nep];

		ep->rw = rw;
		snprintf(ep->url, sizeof(ep->url), "%s", rc->urls[i]);
		ep->client = rw_client_new(ep->url, &o);
		if (!ep->client) {
			snprintf(err, errlen, "remote_write %s: libcurl refused its options",
				 ep->url);
			goto fail;
		}
		rw->nep++;
	}
	return rw;
fail:
	mtd_rw_stop(rw);
	return NULL;
}

int mtd_rw_start(struct mtd_rw *rw)
{
	pthread_attr_t attr;
	unsigned int i;
	int err = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < rw->nep && !err; i++) {
		err = pthread_create(&rw->ep[i].thread, &attr, sender,
				     &rw->ep[i]);
		rw->ep[i].started = !err;
	}
	pthread_attr_destroy(&attr);
	rw->started = true;
	return -err;
}

void mtd_rw_stop(struct mtd_rw *rw)
{
	unsigned int i;

	if (!rw)
		return;
	pthread_mutex_lock(&rw->lock);
	rw->stop = true;
	mono_after(&rw->stop_by, rw->timeout_ms);
	pthread_cond_broadcast(&rw->cond);
	pthread_mutex_unlock(&rw->lock);
	for (i = 0; i < rw->nep; i++) {
		struct rw_endpoint *ep = &rw->ep[i];

		if (ep->started)
			pthread_join(ep->thread, NULL);
		/* the whole account, for whoever checks it after the end */
		if (rw->started)
			mtn_log(LOG_INFO,
				"remote write %s: samples in %llu, sent %llu, failed %llu, dropped %llu, not sent %zu",
				ep->url, (unsigned long long)ep->in,
				(unsigned long long)ep->sent,
				(unsigned long long)ep->failed,
				(unsigned long long)ep->dropped, ep->pending);
		if (ep->head)
			advance(ep, ep->pending);
		rw_client_free(ep->client);
	}
	if (rw->curl_ready)
		curl_global_cleanup();
	mtn_free_secret(rw->key);
	mtn_free_secret(rw->password);
	mtn_free_secret(rw->token);
	free(rw->ca);
	free(rw->cert);
	free(rw->arena.p);
	free(rw->built);
	free(rw->last);
	free(rw->last_off);
	pthread_cond_destroy(&rw->cond);
	pthread_mutex_destroy(&rw->lock);
	free(rw);
}
