// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregator's node table and what it keeps of each node: the latest
 * snapshot, the sequence figures of its session, the latest module records.
 * Nodes are never removed (a down node is still listed); the table is
 * bounded by max_nodes, and a node enters it with its first valid DATA
 * (aggregate.c), so that HELLOs alone cannot fill it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/memtrack.h>

#include "agg.h"
#include "frame_io.h"
#include "libmemtrack.h"

int64_t agg_real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct agg_node *find_locked(struct agg *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nnodes; i++)
		if (!strcmp(a->nodes[i]->name, name))
			return a->nodes[i];
	return NULL;
}

struct agg_node *agg_node_find(struct agg *a, const char *name)
{
	struct agg_node *n;

	pthread_mutex_lock(&a->lock);
	n = find_locked(a, name);
	pthread_mutex_unlock(&a->lock);
	return n;
}

struct agg_node *agg_node_get(struct agg *a, const char *name)
{
	struct agg_node *n;

	pthread_mutex_lock(&a->lock);
	n = find_locked(a, name);
	if (n || a->nnodes == a->cfg->max_nodes)
		goto out;
	n = calloc(1, sizeof(*n));
	if (n && a->cfg->records_keep)
		n->recs = calloc(a->cfg->records_keep, sizeof(*n->recs));
	if (!n || (a->cfg->records_keep && !n->recs)) {
		free(n);
		n = NULL;
		goto out;
	}
	pthread_mutex_init(&n->lock, NULL);
	strcpy(n->name, name);
	n->last_seen_ms = mt_mono_ms();
	n->last_seen_real_ms = agg_real_ms();
	a->nodes[a->nnodes++] = n;
out:
	pthread_mutex_unlock(&a->lock);
	return n;
}

static int check_only(const struct memtrack_rec_hdr *rec, void *arg)
{
	(void)rec;
	(void)arg;
	return 0;
}

struct rec_ctx {
	struct agg *a;
	struct agg_node *n;
	int err;
};

static int keep_record(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct rec_ctx *x = arg;
	struct agg_node *n = x->n;
	size_t cap = x->a->cfg->records_keep;
	void *copy;

	if (!cap)
		return 0;
	copy = malloc(rec->size);
	if (!copy) {
		x->err = -ENOMEM;
		return -ENOMEM;
	}
	memcpy(copy, rec, rec->size);
	if (n->rec_count == cap) {
		free(n->recs[n->rec_first]);
		n->rec_first = (n->rec_first + 1) % cap;
		n->rec_count--;
		n->recs_dropped++;
	}
	n->recs[(n->rec_first + n->rec_count++) % cap] = copy;
	return 0;
}

int agg_records_check(uint8_t kind, const uint8_t *data, size_t len,
		      char *err, size_t errlen)
{
	int ret;

	if (kind != MTN_RELAY_RECORDS) {
		snprintf(err, errlen, "unknown data kind %u", kind);
		return -EBADMSG;
	}
	ret = mt_walk_records(data, len, check_only, NULL);
	if (ret < 0 || (!ret && len)) {
		snprintf(err, errlen, "malformed module records");
		return -EBADMSG;
	}
	return 0;
}

int agg_node_store(struct agg *a, struct agg_node *n, const uint8_t *data,
		   size_t len, char *err, size_t errlen)
{
	struct rec_ctx x = { a, n, 0 };

	mt_walk_records(data, len, keep_record, &x);
	if (x.err)
		snprintf(err, errlen, "out of memory");
	return x.err;
}
