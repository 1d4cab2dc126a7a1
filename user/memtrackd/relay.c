// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * The relay, node side: a bounded buffer of sequenced messages and one
 * sender thread per aggregator (relay.h, relay_proto.h).
 *
 * The buffer holds every message some aggregator has not acknowledged, up
 * to relay_buffer_kb; when a new one does not fit, the oldest go, and each
 * aggregator that had not acknowledged one counts it as dropped (it will
 * see the gap in the sequence numbers).  A thread connects with a 5 s
 * timeout, backs off exponentially (0.1 s doubling to 10 s) after a failure,
 * says HELLO, sends from the seq the aggregator's WELCOME asks for (all it
 * has if the aggregator knows nothing of this session), and reads ACKs.
 * Anything malformed from the aggregator ends the connection (logged); the
 * thread then reconnects.  The connection authenticates as conn.h says.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/random.h>

#include "libmemtrack.h"
#include "conn.h"
#include "log.h"
#include "relay.h"
#include "relay_proto.h"
#include "tcp.h"

#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		10000
#define CONNECT_TIMEOUT_MS	5000
#define IO_TIMEOUT_MS		10000
#define HEARTBEAT_MS		1000

struct relay_msg {
	uint64_t seq;
	size_t len;		/* whole frame */
	uint8_t *frame;
};

struct relay_peer {
	struct mtd_relay *r;
	char addr[256];
	unsigned int port;
	char label[256 + 16];	/* its aggregator label: ADDR:PORT, [V6]:PORT */
	pthread_t thread;
	int wake[2];		/* a byte: new data or stop */
	/* under r->lock */
	uint64_t acked;		/* every seq <= acked is stored there */
	uint64_t dropped;	/* gone from the buffer before acked */
	uint64_t sent, connects;
	uint64_t auth_failures;	/* TLS handshakes failed or refused */
	bool connected;
};

struct mtd_relay {
	pthread_mutex_t lock;
	char node[256];
	uint64_t session;
	struct relay_msg *q;	/* ring: q[(first + i) % cap] */
	size_t first, count, cap;
	size_t bytes, max_bytes;
	uint64_t next_seq;	/* of the next message pushed */
	struct relay_peer *peers;
	unsigned int npeers;
	struct mtn_creds *creds;
	bool stop;		/* __atomic: read by the threads */
};

static struct relay_msg *msg_at(struct mtd_relay *r, size_t i)
{
	return &r->q[(r->first + i) % r->cap];
}

static bool stopping(struct mtd_relay *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

static uint64_t oldest_seq(struct mtd_relay *r)
{
	return r->count ? msg_at(r, 0)->seq : r->next_seq;
}

static void drop_oldest(struct mtd_relay *r, bool count_it)
{
	struct relay_msg *m = msg_at(r, 0);
	unsigned int i;

	if (count_it)
		for (i = 0; i < r->npeers; i++)
			if (r->peers[i].acked < m->seq)
				r->peers[i].dropped++;
	r->bytes -= m->len;
	free(m->frame);
	r->first = (r->first + 1) % r->cap;
	r->count--;
}

/* Free what every aggregator has. */
static void release_acked(struct mtd_relay *r)
{
	uint64_t min = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < r->npeers; i++)
		if (r->peers[i].acked < min)
			min = r->peers[i].acked;
	while (r->count && msg_at(r, 0)->seq <= min)
		drop_oldest(r, false);
}

static void wake(struct relay_peer *p)
{
	char c = 1;

	if (write(p->wake[1], &c, 1) < 0 && errno != EAGAIN)
		mtn_log(LOG_WARNING, "relay: waking a sender: %s",
			strerror(errno));
}

int mtd_relay_push(struct mtd_relay *r, uint8_t kind, const void *data,
		   size_t len)
{
	size_t flen = MTN_RELAY_HDR_LEN + 9 + len;
	struct relay_msg *m;
	uint8_t *f;
	unsigned int i;

	if (9 + len > MTN_RELAY_MAX_BODY || flen > r->max_bytes)
		return -EMSGSIZE;
	f = malloc(flen);
	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	while (r->count && (r->count == r->cap || r->bytes + flen > r->max_bytes))
		drop_oldest(r, true);
	mtn_relay_hdr(f, MTN_RELAY_DATA, 9 + len);
	mtn_put_be64(f + MTN_RELAY_HDR_LEN, r->next_seq);
	f[MTN_RELAY_HDR_LEN + 8] = kind;
	memcpy(f + MTN_RELAY_HDR_LEN + 9, data, len);
	m = msg_at(r, r->count++);
	m->seq = r->next_seq++;
	m->len = flen;
	m->frame = f;
	r->bytes += flen;
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < r->npeers; i++)
		wake(&r->peers[i]);
	return 0;
}

/* Sleep ms, or until stopped.  Returns true if stopping. */
static bool nap(struct relay_peer *p, int ms)
{
	struct pollfd pfd = { .fd = p->wake[0], .events = POLLIN };
	char buf[64];

	if (poll(&pfd, 1, ms) > 0)
		while (read(p->wake[0], buf, sizeof(buf)) > 0)
			;
	return stopping(p->r);
}

/* HELLO, WELCOME: returns the seq to send next, or -errno. */
static int64_t handshake(struct relay_peer *p, struct mtn_conn *c)
{
	struct mtd_relay *r = p->r;
	size_t nlen = strlen(r->node);
	uint8_t f[MTN_RELAY_HDR_LEN + 18 + MTN_RELAY_MAX_NODE], in[20];
	uint64_t oldest, want, next;
	uint32_t len;
	uint8_t type;
	int err;

	pthread_mutex_lock(&r->lock);
	oldest = oldest_seq(r);
	pthread_mutex_unlock(&r->lock);
	mtn_relay_hdr(f, MTN_RELAY_HELLO, 18 + nlen);
	mtn_put_be64(f + MTN_RELAY_HDR_LEN, r->session);
	mtn_put_be64(f + MTN_RELAY_HDR_LEN + 8, oldest);
	f[MTN_RELAY_HDR_LEN + 16] = nlen >> 8;
	f[MTN_RELAY_HDR_LEN + 17] = nlen & 0xff;
	memcpy(f + MTN_RELAY_HDR_LEN + 18, r->node, nlen);
	err = mtn_conn_write(c, f, MTN_RELAY_HDR_LEN + 18 + nlen);
	if (!err)
		err = mtn_conn_read(c, in, 5);
	/*
	 * A TLS record (alert, handshake) where a frame should be: a TLS
	 * aggregator refusing our plain TCP, an authentication failure.
	 */
	if (!err && (in[0] == 0x15 || in[0] == 0x16) && in[1] == 3) {
		mtn_log(LOG_WARNING,
			"relay: %s port %u: the aggregator answered in TLS: it wants auth = psk or cert",
			p->addr, p->port);
		return -EACCES;
	}
	if (!err)
		err = mtn_conn_read(c, in + 5, MTN_RELAY_HDR_LEN + 8 - 5);
	if (err)
		return err;
	if (mtn_relay_parse_hdr(in, &type, &len) || type != MTN_RELAY_WELCOME)
		return -EBADMSG;
	want = mtn_get_be64(in + MTN_RELAY_HDR_LEN);
	pthread_mutex_lock(&r->lock);
	if (want > r->next_seq) {
		pthread_mutex_unlock(&r->lock);
		return -EPROTO;		/* it has what was never sent */
	}
	if (want && want - 1 > p->acked)
		p->acked = want - 1;
	next = want > oldest_seq(r) ? want : oldest_seq(r);
	release_acked(r);
	pthread_mutex_unlock(&r->lock);
	return next;
}

/*
 * Read the ACKs waiting (non-blocking); a partial frame is kept in *in.
 * -errno on a malformed one or a closed connection.
 */
static int read_acks(struct relay_peer *p, struct mtn_conn *c, uint8_t *in,
		     size_t *have, uint64_t sent_upto)
{
	for (;;) {
		ssize_t n = mtn_conn_read_some(c, in + *have,
					       MTN_RELAY_HDR_LEN + 8 - *have);
		uint8_t type;
		uint32_t len;
		uint64_t seq;

		if (n <= 0)
			return n;
		*have += n;
		if (*have >= MTN_RELAY_HDR_LEN &&
		    (mtn_relay_parse_hdr(in, &type, &len) ||
		     type != MTN_RELAY_ACK))
			return -EBADMSG;
		if (*have < MTN_RELAY_HDR_LEN + 8)
			continue;
		*have = 0;
		seq = mtn_get_be64(in + MTN_RELAY_HDR_LEN);
		pthread_mutex_lock(&p->r->lock);
		if (seq > sent_upto || seq < p->acked) {
			pthread_mutex_unlock(&p->r->lock);
			return -EPROTO;
		}
		p->acked = seq;
		release_acked(p->r);
		pthread_mutex_unlock(&p->r->lock);
	}
}

/* Copy the frame of seq out; 0 if there is none (yet), 1 if copied. */
static int frame_of(struct mtd_relay *r, uint64_t *seq, uint8_t *buf,
		    size_t *len)
{
	uint64_t oldest;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	oldest = oldest_seq(r);
	if (*seq < oldest)
		*seq = oldest;	/* dropped meanwhile, counted there */
	if (*seq < r->next_seq) {
		struct relay_msg *m = msg_at(r, *seq - oldest);

		memcpy(buf, m->frame, m->len);
		*len = m->len;
		ret = 1;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* One connection, until it fails or the relay stops. */
static int session(struct relay_peer *p, struct mtn_conn *c, uint64_t next,
		   uint8_t *buf)
{
	uint8_t hb[MTN_RELAY_HDR_LEN], in[MTN_RELAY_HDR_LEN + 8];
	size_t have = 0, len;
	int err;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = mtn_conn_fd(c), .events = POLLIN },
			{ .fd = p->wake[0], .events = POLLIN },
		};
		int sent = 0;

		while (!stopping(p->r) && frame_of(p->r, &next, buf, &len)) {
			err = mtn_conn_write(c, buf, len);
			if (err)
				return err;
			pthread_mutex_lock(&p->r->lock);
			p->sent++;
			pthread_mutex_unlock(&p->r->lock);
			next++;
			sent = 1;
			err = read_acks(p, c, in, &have, next - 1);
			if (err)
				return err;
		}
		if (stopping(p->r))
			return 0;
		if (mtn_conn_pending(c))
			pfd[0].revents = POLLIN;
		else if (poll(pfd, 2, HEARTBEAT_MS) < 0 && errno != EINTR)
			return -errno;
		if (pfd[1].revents)
			nap(p, 0);
		if (pfd[0].revents) {
			err = read_acks(p, c, in, &have, next - 1);
			if (err)
				return err;
		}
		if (!sent && !pfd[0].revents && !pfd[1].revents) {
			mtn_relay_hdr(hb, MTN_RELAY_HEARTBEAT, 0);
			err = mtn_conn_write(c, hb, sizeof(hb));
			if (err)
				return err;
		}
	}
}

static void *peer_thread(void *arg)
{
	struct relay_peer *p = arg;
	uint8_t *buf = malloc(MTN_RELAY_HDR_LEN + MTN_RELAY_MAX_BODY);
	int backoff = BACKOFF_MIN_MS;

	if (!buf) {
		mtn_log(LOG_ERR, "relay: out of memory");
		return NULL;
	}
	while (!stopping(p->r)) {
		struct mtn_conn *c;
		char why[320];
		int64_t next;
		int fd = mtn_dial(p->addr, p->port, CONNECT_TIMEOUT_MS, why,
				  sizeof(why)), err;

		/* blocking from here, with timeouts: one aggregator's thread */
		if (fd >= 0) {
			err = mtn_set_timeouts(fd, IO_TIMEOUT_MS);
			if (err) {
				close(fd);
				fd = err;
			}
		}
		if (fd < 0) {
			err = fd;
			goto retry;
		}
		c = mtn_conn_open(p->r->creds, fd, why, sizeof(why));
		if (!c) {
			mtn_log(LOG_WARNING, "relay: %s port %u: %s", p->addr,
				p->port, why);
			err = -EACCES;
			goto auth_failed;
		}
		next = handshake(p, c);
		if (next < 0) {
			err = next;
			/* TLS 1.3: a refused certificate shows up here */
			if (*mtn_conn_error(c))
				mtn_log(LOG_WARNING, "relay: %s port %u: %s",
					p->addr, p->port, mtn_conn_error(c));
			mtn_conn_close(c);
			if (err == -EACCES)
				goto auth_failed;
			goto retry;
		}
		pthread_mutex_lock(&p->r->lock);
		p->connected = true;
		p->connects++;
		pthread_mutex_unlock(&p->r->lock);
		mtn_log(LOG_INFO, "relay: connected to %s port %u, from seq %lld",
			p->addr, p->port, (long long)next);
		backoff = BACKOFF_MIN_MS;
		err = session(p, c, next, buf);
		mtn_conn_close(c);
		pthread_mutex_lock(&p->r->lock);
		p->connected = false;
		pthread_mutex_unlock(&p->r->lock);
		if (stopping(p->r))
			break;
		goto retry;
auth_failed:
		pthread_mutex_lock(&p->r->lock);
		p->auth_failures++;
		pthread_mutex_unlock(&p->r->lock);
retry:
		/* the resolver's sentence when the name did not resolve */
		mtn_log(LOG_WARNING, "relay: %s port %u: %s; again in %d ms",
			p->addr, p->port, fd < 0 && *why ? why : strerror(-err),
			backoff);
		if (nap(p, backoff))
			break;
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	free(buf);
	return NULL;
}

struct mtd_relay *mtd_relay_start(const struct mtn_config *c,
				  struct mtn_creds *creds)
{
	struct mtd_relay *r = calloc(1, sizeof(*r));
	unsigned int i;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	strcpy(r->node, c->node);
	if (getrandom(&r->session, sizeof(r->session), 0) !=
	    sizeof(r->session))
		goto fail;
	r->session |= 1;	/* never 0 */
	r->creds = creds;
	r->next_seq = 1;
	r->max_bytes = (size_t)c->relay_buffer_kb << 10;
	r->cap = 65536;
	r->q = calloc(r->cap, sizeof(*r->q));
	r->peers = calloc(c->nr_aggregators, sizeof(*r->peers));
	if (!r->q || !r->peers)
		goto fail;
	r->npeers = c->nr_aggregators;
	for (i = 0; i < r->npeers; i++) {
		struct relay_peer *p = &r->peers[i];

		p->r = r;
		strcpy(p->addr, c->aggregators[i].addr);
		p->port = c->aggregators[i].port;
		snprintf(p->label, sizeof(p->label), "%s%s%s:%u",
			 strchr(p->addr, ':') ? "[" : "", p->addr,
			 strchr(p->addr, ':') ? "]" : "", p->port);
		if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC))
			goto fail;
	}
	for (i = 0; i < r->npeers; i++)
		if (pthread_create(&r->peers[i].thread, NULL, peer_thread,
				   &r->peers[i])) {
			r->npeers = i;
			mtd_relay_stop(r);
			return NULL;
		}
	mtn_log(LOG_INFO, "relay: session %016llx, %u aggregator(s)",
		(unsigned long long)r->session, r->npeers);
	return r;
fail:
	free(r->q);
	free(r->peers);
	free(r);
	return NULL;
}

void mtd_relay_stop(struct mtd_relay *r)
{
	unsigned int i;

	if (!r)
		return;
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < r->npeers; i++)
		wake(&r->peers[i]);
	for (i = 0; i < r->npeers; i++) {
		pthread_join(r->peers[i].thread, NULL);
		close(r->peers[i].wake[0]);
		close(r->peers[i].wake[1]);
	}
	while (r->count)
		drop_oldest(r, false);
	free(r->q);
	free(r->peers);
	free(r);
}

/* An aggregator's figures in mtd_relay_metrics()'s families, in order. */
static uint64_t peer_value(const void *arg, unsigned int i, unsigned int f,
			   const char **name)
{
	const struct relay_peer *p = &((const struct mtd_relay *)arg)->peers[i];
	uint64_t v[] = { p->connected, p->connects, p->sent, p->acked,
			 p->dropped, p->auth_failures };

	*name = p->label;
	return v[f];
}

void mtd_relay_metrics(struct mtd_relay *r, const struct mtd_expo_opts *o,
		       struct mtn_buf *b)
{
	static const struct mtd_family_doc fam[] = {
		{ "memtrack_relay_connected", "gauge",
		  "1 while connected to the aggregator." },
		{ "memtrack_relay_connects_total", "counter",
		  "Connections made to the aggregator." },
		{ "memtrack_relay_sent_total", "counter",
		  "Messages sent to the aggregator (replays included)." },
		{ "memtrack_relay_acked_seq", "gauge",
		  "Highest sequence number the aggregator acknowledged." },
		{ "memtrack_relay_dropped_total", "counter",
		  "Messages dropped from the full buffer before the aggregator acknowledged them." },
		{ "memtrack_relay_auth_failures_total", "counter",
		  "TLS handshakes with the aggregator that failed or were refused." },
	};
	struct mtd_series s;

	pthread_mutex_lock(&r->lock);
	mtd_peer_families(b, o, fam, MT_ARRAY_SIZE(fam), "aggregator",
			  r->npeers, peer_value, r);
	mtd_family(b, "memtrack_relay_buffered_messages", "gauge",
		   "Messages in the relay buffer.");
	mtd_series_begin(&s, b, "memtrack_relay_buffered_messages", o);
	mtd_series_value(&s, r->count, false);
	mtd_family(b, "memtrack_relay_next_seq", "gauge",
		   "Sequence number of the next message.");
	mtd_series_begin(&s, b, "memtrack_relay_next_seq", o);
	mtd_series_value(&s, r->next_seq, false);
	pthread_mutex_unlock(&r->lock);
}
