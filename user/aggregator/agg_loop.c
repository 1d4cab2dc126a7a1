// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * The aggregator's event loops: every node's connection, once it has said
 * HELLO and been welcomed (aggregate.c), is served by one of a few threads,
 * each with an epoll set of its connections, instead of by a thread of its
 * own: 10,000 nodes are 10,000 sockets and a few threads.
 *
 * A loop reads what a socket has without waiting (mtn_conn_read_some: the
 * TLS records too), a frame at a time into the connection's buffer, and
 * hands each whole frame to agg_node_frame(); the acknowledgement it sends
 * back is small and waits at most AGG_LOOP_SEND_MS, so a node that does
 * not read its acknowledgements is closed rather than stalling the loop.
 * Every TICK_MS a loop looks at its connections' deadlines, the same as a
 * connection thread had: a frame begun must be whole within FRAME_MS, the
 * next one must begin within idle_timeout_ms; and at bytes TLS decoded
 * but the socket no longer signals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/epoll.h>

#include "libmemtrack.h"
#include "agg.h"
#include "frame_io.h"
#include "log.h"
#include "tcp.h"

#define TICK_MS		250
#define FRAME_MS	10000
#define EVENTS		64
#define LOOP_STACK	(256 * 1024)

struct agg_loop {
	struct agg *a;
	int epfd;
	pthread_t thread;
	pthread_mutex_t lock;		/* the list: adds come from elsewhere */
	struct agg_node_conn *head;
};

struct agg_loops {
	unsigned int n, next;
	struct agg_loop loop[];
};

static void unlink_conn(struct agg_loop *l, struct agg_node_conn *nc)
{
	pthread_mutex_lock(&l->lock);
	if (nc->prev)
		nc->prev->next = nc->next;
	else
		l->head = nc->next;
	if (nc->next)
		nc->next->prev = nc->prev;
	pthread_mutex_unlock(&l->lock);
}

static void close_conn(struct agg_loop *l, struct agg_node_conn *nc)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, nc->x.fd, NULL);
	unlink_conn(l, nc);
	free(nc->body);
	nc->body = NULL;
	agg_node_conn_end(nc);
}

/* The header just read: a frame begins.  0, or -1 (logged). */
static int begin_frame(struct agg_node_conn *nc)
{
	if (mtn_relay_parse_hdr(nc->hdr, &nc->type, &nc->len)) {
		agg_conn_log(&nc->x, nc->name, "malformed frame header");
		return -1;
	}
	nc->body = nc->len ? malloc(nc->len) : NULL;
	if (nc->len && !nc->body) {
		agg_conn_log(&nc->x, nc->name, "out of memory");
		return -1;
	}
	nc->frame_by = mt_mono_ms() + FRAME_MS;
	return 0;
}

/* Whatever the socket has now, frame by frame: 0, or -1 to close it. */
static int serve(struct agg_node_conn *nc)
{
	for (;;) {
		bool in_body = nc->frame_by != 0;
		uint8_t *dst = in_body ? nc->body + (nc->got - MTN_RELAY_HDR_LEN) :
					 nc->hdr + nc->got;
		size_t want = in_body ? MTN_RELAY_HDR_LEN + nc->len - nc->got :
					MTN_RELAY_HDR_LEN - nc->got;
		ssize_t r = want ? mtn_conn_read_some(nc->x.c, dst, want) : 0;
		uint8_t *body;

		if (r < 0) {
			if (r != -ECONNRESET)
				agg_conn_log(&nc->x, nc->name, strerror(-r));
			return -1;
		}
		if (!r && want)
			return 0;
		nc->got += r;
		if (!in_body && nc->got == MTN_RELAY_HDR_LEN && begin_frame(nc))
			return -1;
		if (!nc->frame_by || nc->got != MTN_RELAY_HDR_LEN + nc->len)
			continue;
		/* a whole frame */
		body = nc->body;
		nc->body = NULL;
		nc->got = 0;
		nc->frame_by = 0;
		nc->idle_by = mt_mono_ms() + nc->x.a->cfg->idle_timeout_ms;
		if (agg_node_frame(nc, nc->type, body, nc->len))
			return -1;
	}
}

/* Deadlines, and bytes TLS holds that epoll cannot see. */
static void scan(struct agg_loop *l)
{
	int64_t now = mt_mono_ms();
	struct agg_node_conn *nc, *next;

	/* only this thread removes from the list: next stays valid */
	pthread_mutex_lock(&l->lock);
	nc = l->head;
	pthread_mutex_unlock(&l->lock);
	for (; nc; nc = next) {
		pthread_mutex_lock(&l->lock);
		next = nc->next;
		pthread_mutex_unlock(&l->lock);
		if (now > (nc->frame_by ? nc->frame_by : nc->idle_by)) {
			agg_conn_log(&nc->x, nc->name, "timed out");
			close_conn(l, nc);
		} else if (mtn_conn_pending(nc->x.c) && serve(nc)) {
			close_conn(l, nc);
		}
	}
}

static void *loop_main(void *arg)
{
	struct agg_loop *l = arg;
	struct epoll_event ev[EVENTS];
	int64_t next_scan = mt_mono_ms() + TICK_MS;

	for (;;) {
		int n = epoll_wait(l->epfd, ev, EVENTS, TICK_MS), i;

		if (n < 0 && errno != EINTR) {
			mtn_log(LOG_ERR, "aggregate: epoll_wait: %s",
				strerror(errno));
			return NULL;
		}
		for (i = 0; i < n; i++) {
			struct agg_node_conn *nc = ev[i].data.ptr;

			if (serve(nc))
				close_conn(l, nc);
		}
		if (mt_mono_ms() >= next_scan) {
			scan(l);
			next_scan = mt_mono_ms() + TICK_MS;
		}
	}
}

struct agg_loops *agg_loops_start(struct agg *a, unsigned int nthreads)
{
	struct agg_loops *ls = calloc(1, sizeof(*ls) +
				      nthreads * sizeof(ls->loop[0]));
	pthread_attr_t attr;
	unsigned int i;

	if (!ls)
		return NULL;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, LOOP_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < nthreads; i++) {
		struct agg_loop *l = &ls->loop[i];

		l->a = a;
		pthread_mutex_init(&l->lock, NULL);
		l->epfd = epoll_create1(EPOLL_CLOEXEC);
		/* the loops end with the process, like the other threads */
		if (l->epfd < 0 || pthread_create(&l->thread, &attr, loop_main, l)) {
			mtn_log(LOG_ERR, "aggregate: cannot start an event loop: %s",
				strerror(errno));
			pthread_attr_destroy(&attr);
			return NULL;
		}
		ls->n++;
	}
	pthread_attr_destroy(&attr);
	return ls;
}

int agg_loops_add(struct agg_loops *ls, struct agg_node_conn *nc)
{
	struct agg_loop *l;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

	pthread_mutex_lock(&nc->x.a->lock);
	l = &ls->loop[ls->next++ % ls->n];
	pthread_mutex_unlock(&nc->x.a->lock);
	mtn_set_timeouts(nc->x.fd, AGG_LOOP_SEND_MS);
	nc->loop = l;
	nc->got = 0;
	nc->frame_by = 0;
	nc->idle_by = mt_mono_ms() + nc->x.a->cfg->idle_timeout_ms;
	pthread_mutex_lock(&l->lock);
	nc->prev = NULL;
	nc->next = l->head;
	if (l->head)
		l->head->prev = nc;
	l->head = nc;
	pthread_mutex_unlock(&l->lock);
	ev.data.ptr = nc;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, nc->x.fd, &ev)) {
		int err = errno;

		unlink_conn(l, nc);
		return -err;
	}
	return 0;
}
