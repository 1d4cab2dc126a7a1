// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregator's connections once opened (agg.h): logging, the frames
 * of a node's connection (DATA stored, HEARTBEAT noted, each acknowledged)
 * and the end of a connection.  aggregate.c opens connections and
 * serves query clients; agg_loop.c reads nodes' frames and hands them
 * here; this file calls neither.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "agg.h"
#include "frame_io.h"
#include "log.h"

void agg_conn_log(const struct agg_conn *x, const char *what, const char *why)
{
	mtn_log(LOG_WARNING, "aggregate: peer %s: %s: %s", x->peer, what, why);
}

const char *agg_errstr(int err)
{
	if (err == -EBADMSG)
		return "malformed frame header";
	if (err == -ECONNRESET)
		return "closed by the peer";
	if (err == -ETIMEDOUT)
		return "timed out";
	return strerror(-err);
}

void agg_send_ack(const struct agg_conn *x, uint8_t type, uint64_t seq,
		  int *err)
{
	uint8_t b[8];

	mtn_put_be64(b, seq);
	*err = mtn_frame_write(x->c, type, b, sizeof(b));
}

/* A new session of the node restarts its figures. */
static void begin_session(struct agg_node *n, uint64_t session, uint64_t oldest)
{
	n->session = session;
	n->sessions++;
	n->want = oldest ? oldest : 1;
	n->first_seq = 0;
	n->received = 0;
	n->gaps = 0;
}

/* The node's connection joins it: the seq it wants next, 0 for all. */
uint64_t agg_node_attach(struct agg_node *n, uint64_t session,
			 uint64_t oldest)
{
	uint64_t want;

	pthread_mutex_lock(&n->lock);
	if (n->session != session) {
		begin_session(n, session, oldest);
		want = 0;		/* none of it: send all you have */
	} else {
		want = n->want;
	}
	n->conns++;
	n->last_seen_ms = mt_mono_ms();
	n->last_seen_real_ms = agg_real_ms();
	pthread_mutex_unlock(&n->lock);
	return want;
}

/*
 * One DATA frame's body, checked before any lock is taken (queries wait
 * less): 0, or -EBADMSG with why set.
 */
static int check_data(const uint8_t *body, uint32_t len,
		      struct agg_snapshot *snap, char *why, size_t whylen)
{
	if (!mtn_get_be64(body)) {
		snprintf(why, whylen, "sequence number 0");
		return -EBADMSG;
	}
	if (body[8] == MTN_RELAY_SNAPSHOT)
		return agg_snapshot_parse((const char *)body + 9, len - 9, snap,
					  why, whylen);
	return agg_records_check(body[8], body + 9, len - 9, why, whylen);
}

/*
 * A node's connection.  A name the table does not know enters it with the
 * connection's first valid DATA, not at HELLO: a peer sending HELLOs with
 * made-up names (and heartbeats) holds a connection slot, bounded by
 * max_conns and idle_timeout_ms, but never a node slot.
 */
int agg_node_frame(struct agg_node_conn *nc, uint8_t type, uint8_t *body,
		   uint32_t len)
{
	struct agg_snapshot snap = { 0 };
	struct agg_conn *x = &nc->x;
	struct agg *a = x->a;
	const char *name = nc->name;
	struct agg_node *n = nc->n;
	uint64_t seq, ack;
	char why[256];
	int err;

	if (type == MTN_RELAY_HEARTBEAT && !n)
		goto done;	/* nothing to update yet */
	if (type == MTN_RELAY_DATA) {
		err = check_data(body, len, &snap, why, sizeof(why));
		if (err) {
			agg_conn_log(x, name, why);
			goto fail;
		}
		if (!n) {
			n = agg_node_get(a, name);
			if (!n) {
				agg_conn_log(x, name,
					     "refused: too many nodes (max_nodes)");
				goto fail;
			}
			/* new, or another connection's by now */
			agg_node_attach(n, nc->session, nc->oldest);
			nc->n = n;
		}
	}
	seq = type == MTN_RELAY_DATA ? mtn_get_be64(body) : 0;
	if (!n) {
		agg_conn_log(x, name, "unexpected frame type");
		goto fail;
	}
	pthread_mutex_lock(&n->lock);
	n->last_seen_ms = mt_mono_ms();
	n->last_seen_real_ms = agg_real_ms();
	if (type == MTN_RELAY_HEARTBEAT) {
		pthread_mutex_unlock(&n->lock);
		goto done;
	}
	if (type != MTN_RELAY_DATA || n->session != nc->session) {
		pthread_mutex_unlock(&n->lock);
		agg_conn_log(x, name, type != MTN_RELAY_DATA ?
			     "unexpected frame type" :
			     "superseded by a new session");
		goto fail;
	}
	err = 0;
	if (seq >= n->want) {
		if (body[8] == MTN_RELAY_SNAPSHOT)
			agg_snapshot_swap(&n->snap, &snap);
		else
			err = agg_node_store(a, n, body + 9, len - 9, why,
					     sizeof(why));
		if (!err) {
			n->gaps += seq - n->want;
			n->want = seq + 1;
			n->received++;
			if (!n->first_seq)
				n->first_seq = seq;
		}
	}	/* else a copy of one stored: acknowledge it again */
	ack = n->want - 1;
	pthread_mutex_unlock(&n->lock);
	if (err) {
		agg_conn_log(x, name, why);
		goto fail;
	}
	agg_send_ack(x, MTN_RELAY_ACK, ack, &err);
	if (err) {
		agg_conn_log(x, name, err == -EAGAIN || err == -ETIMEDOUT ?
			     "does not read its acknowledgements" : agg_errstr(err));
		goto fail;
	}
done:
	free(body);
	agg_snapshot_free(&snap);	/* the old one, or unused */
	return 0;
fail:
	free(body);
	agg_snapshot_free(&snap);
	return -1;
}

/* The end of a connection: its counts, its memory. */
void agg_conn_end(struct agg_conn *x)
{
	struct agg *a = x->a;

	if (x->c)
		mtn_conn_close(x->c);
	else if (x->fd >= 0)
		close(x->fd);
	pthread_mutex_lock(&a->lock);
	a->conns--;
	pthread_mutex_unlock(&a->lock);
}

void agg_node_conn_end(struct agg_node_conn *nc)
{
	if (nc->n) {
		pthread_mutex_lock(&nc->n->lock);
		nc->n->conns--;
		pthread_mutex_unlock(&nc->n->lock);
	}
	agg_conn_end(&nc->x);
	free(nc);
}

