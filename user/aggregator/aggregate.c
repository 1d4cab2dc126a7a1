// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * memtrackd --aggregate: accepts node and query connections on one port
 * (relay_proto.h).  A new connection gets a thread with a small stack for
 * its opening (the TLS handshake and HELLO, at most MAX_OPENING at once:
 * past that the kernel's backlog holds them); a query client keeps it
 * (its queries are long, its answers large), a node's connection goes to
 * the event loops (agg_loop.c), a few threads for every node.  The main
 * thread accepts, logs nodes going down, and exits on SIGTERM/SIGINT.
 *
 * Every connection starts with HELLO within HELLO_MS.  A node's connection
 * then carries DATA and HEARTBEAT frames, each acknowledged once stored; a
 * query client's (session 0) carries QUERY frames, each answered with a
 * RESULT.  A frame that is malformed, of the wrong type, or not complete
 * within FRAME_MS of its header closes that connection, logged with the
 * peer's address; the other connections do not notice.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include "libmemtrack.h"
#include "agg.h"
#include "aggregate.h"
#include "conn.h"
#include "frame_io.h"
#include "log.h"
#include "privs.h"
#include "service.h"
#include "tcp.h"

#define HELLO_MS		10000
#define FRAME_MS		10000
#define SEND_TIMEOUT_S		10
#define THREAD_STACK		(256 * 1024)
#define LISTEN_BACKLOG		4096
#define MAX_LISTEN		8	/* addresses of a host name listened on */
#define TICK_MS			250
#define MAX_OPENING		256
/* event loops for the nodes' connections: ingest is light (bench/aggregate) */
#define LOOPS			4

/* WELCOME, then the event loops have it: 0, or -1 (still ours, logged). */
static int node_welcome(struct agg_conn *x, const char *name, uint64_t session,
			uint64_t oldest)
{
	struct agg_node_conn *nc = calloc(1, sizeof(*nc));
	int err;

	if (!nc) {
		agg_conn_log(x, name, "out of memory");
		return -1;
	}
	nc->x = *x;
	snprintf(nc->name, sizeof(nc->name), "%s", name);
	nc->session = session;
	nc->oldest = oldest;
	nc->n = agg_node_find(x->a, name);
	agg_send_ack(x, MTN_RELAY_WELCOME,
		 nc->n ? agg_node_attach(nc->n, session, oldest) : 0, &err);
	if (!err)
		err = agg_loops_add(x->a->loops, nc);
	if (err) {
		if (err != -ECONNRESET)
			agg_conn_log(x, name, agg_errstr(err));
		if (nc->n) {
			pthread_mutex_lock(&nc->n->lock);
			nc->n->conns--;
			pthread_mutex_unlock(&nc->n->lock);
		}
		free(nc);
		return -1;
	}
	return 0;
}

static void query_loop(struct agg_conn *x)
{
	struct agg *a = x->a;
	int err = 0;

	agg_send_ack(x, MTN_RELAY_WELCOME, 0, &err);
	while (!err) {
		struct mtn_buf b = { 0 };
		uint8_t type, *body;
		uint32_t len;

		err = mtn_frame_read(x->c, &type, &body, &len,
				     mt_mono_ms() + a->cfg->idle_timeout_ms, 0,
				     FRAME_MS);
		if (err) {
			if (err != -ECONNRESET)
				agg_conn_log(x, "query client", agg_errstr(err));
			break;
		}
		if (type != MTN_RELAY_QUERY) {
			free(body);
			agg_conn_log(x, "query client", "unexpected frame type");
			break;
		}
		agg_query(a, (const char *)body, len, &b);
		free(body);
		if (b.oom) {
			free(b.p);
			agg_conn_log(x, "query client", "out of memory");
			break;
		}
		err = mtn_frame_write(x->c, MTN_RELAY_RESULT, b.p, b.len);
		free(b.p);
	}
}

/* HELLO: session, oldest, the name (printable, no spaces). */
static int parse_hello(const uint8_t *b, uint32_t len, uint64_t *session,
		       uint64_t *oldest, char *name)
{
	size_t nlen = (size_t)b[16] << 8 | b[17], i;

	if (nlen != len - 18 || !nlen)
		return -1;
	for (i = 0; i < nlen; i++)
		if (b[18 + i] <= 0x20 || b[18 + i] >= 0x7f)
			return -1;
	memcpy(name, b + 18, nlen);
	name[nlen] = 0;
	*session = mtn_get_be64(b);
	*oldest = mtn_get_be64(b + 8);
	return 0;
}

/*
 * With auth, a node's name should be the name it proved (PSK identity or
 * certificate CN), or it could pass for another node: a mismatch is logged,
 * and refused with require_identity_match.  Whom it proved is logged.
 */
static bool identity_refused(struct agg_conn *x, const char *name)
{
	const char *id = mtn_conn_peer_name(x->c);
	char why[600];

	if (x->a->auth == MTN_AUTH_NONE)
		return false;
	if (strcmp(id, name)) {
		snprintf(why, sizeof(why),
			 "%sthe node name is not its authenticated name \"%s\"%s",
			 x->a->cfg->require_identity_match ? "refused: " : "",
			 id, x->a->cfg->require_identity_match ?
			 " (require_identity_match)" : "");
		agg_conn_log(x, name, why);
		if (x->a->cfg->require_identity_match)
			return true;
	}
	mtn_log(LOG_INFO, "aggregate: peer %s: node %s authenticated as \"%s\" (%s)",
		x->peer, name, mtn_conn_peer(x->c), mtn_conn_desc(x->c));
	return false;
}

/* The opening is over (HELLO read, or failed): another may begin. */
static void opened(struct agg *a)
{
	pthread_mutex_lock(&a->lock);
	a->opening--;
	pthread_mutex_unlock(&a->lock);
}

static void *conn_main(void *arg)
{
	struct agg_conn *x = arg;
	struct agg *a = x->a;
	char err[256], name[MTN_RELAY_MAX_NODE + 1];
	uint64_t session, oldest;
	uint8_t type, *body = NULL;
	uint32_t len;
	bool open = true;
	int r;

	x->c = mtn_conn_open(a->creds, x->fd, err, sizeof(err));
	if (!x->c) {
		x->fd = -1;	/* closed with it */
		agg_conn_log(x, "refused", err);
		goto out;
	}
	if (mtn_conn_peer(x->c)[0]) {
		size_t l = strlen(x->peer);

		snprintf(x->peer + l, sizeof(x->peer) - l, " (%s)",
			 mtn_conn_peer(x->c));
	}
	r = mtn_frame_read(x->c, &type, &body, &len, mt_mono_ms() + HELLO_MS,
			   mt_mono_ms() + HELLO_MS, 0);
	if (r) {
		agg_conn_log(x, "before HELLO", agg_errstr(r));
		goto out;
	}
	if (type != MTN_RELAY_HELLO) {
		agg_conn_log(x, "refused", "the first frame is not HELLO");
		goto out;
	}
	if (parse_hello(body, len, &session, &oldest, name)) {
		agg_conn_log(x, "refused", "malformed HELLO");
		goto out;
	}
	opened(a);
	open = false;
	if (!session) {
		query_loop(x);
	} else if (!identity_refused(x, name) &&
		   !node_welcome(x, name, session, oldest)) {
		/* the event loops have it now */
		free(body);
		free(x);
		return NULL;
	}
out:
	if (open)
		opened(a);
	free(body);
	agg_conn_end(x);
	free(x);
	return NULL;
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		port = ntohs(in->sin_port);
		snprintf(out, len, "%s:%u", addr, port);
	} else {
		const struct sockaddr_in6 *in = (const void *)ss;

		inet_ntop(AF_INET6, &in->sin6_addr, addr, sizeof(addr));
		port = ntohs(in->sin6_port);
		snprintf(out, len, "[%s]:%u", addr, port);
	}
}

static void accept_one(struct agg *a, int lfd, pthread_attr_t *attr)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct agg_conn *x;
	pthread_t t;
	int fd, one = 1;
	bool full;

	fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			mtn_log(LOG_WARNING, "aggregate: accept: %s",
				strerror(errno));
		if (errno == EMFILE || errno == ENFILE)
			usleep(100000);	/* no busy loop while out of fds */
		return;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		close(fd);
		return;
	}
	x->a = a;
	x->fd = fd;
	peer_name(&ss, x->peer, sizeof(x->peer));
	pthread_mutex_lock(&a->lock);
	full = a->conns >= a->cfg->max_conns;
	if (!full) {
		a->conns++;
		a->opening++;
	}
	pthread_mutex_unlock(&a->lock);
	if (full) {
		agg_conn_log(x, "refused", "too many connections (max_conns)");
		goto drop;
	}
	mtn_set_timeouts(fd, SEND_TIMEOUT_S * 1000);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (pthread_create(&t, attr, conn_main, x)) {
		agg_conn_log(x, "refused", "cannot start a thread");
		pthread_mutex_lock(&a->lock);
		a->conns--;
		a->opening--;
		pthread_mutex_unlock(&a->lock);
		goto drop;
	}
	return;
drop:
	close(fd);
	free(x);
}

/* Log nodes that went down or came back. */
static void watch_nodes(struct agg *a)
{
	int64_t now = mt_mono_ms();
	size_t i, nn;

	pthread_mutex_lock(&a->lock);
	nn = a->nnodes;
	pthread_mutex_unlock(&a->lock);
	for (i = 0; i < nn; i++) {
		struct agg_node *n = a->nodes[i];
		bool down;

		pthread_mutex_lock(&n->lock);
		down = now - n->last_seen_ms > a->cfg->down_after_ms;
		if (down != n->reported_down)
			mtn_log(down ? LOG_WARNING : LOG_INFO,
				"aggregate: node %s %s", n->name,
				down ? "down: no frame for down_after_ms" :
				"up");
		n->reported_down = down;
		pthread_mutex_unlock(&n->lock);
	}
}

int mtd_aggregate_main(const struct mtn_config *c, bool foreground)
{
	static struct agg a = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct pollfd pfd[1 + MAX_LISTEN];
	int lfd[MAX_LISTEN], nl, sigfd, i;
	char err[512], more[32] = "";
	pthread_attr_t attr;
	sigset_t sigs;

	a.cfg = &c->agg;
	a.auth = c->auth.kind;
	if (c->agg.require_identity_match && a.auth == MTN_AUTH_NONE) {
		mtn_log(LOG_ERR, "require_identity_match needs auth = psk or cert");
		return 1;
	}
	a.nodes = calloc(c->agg.max_nodes, sizeof(*a.nodes));
	if (!a.nodes) {
		mtn_log(LOG_ERR, "out of memory");
		return 1;
	}
	/* a host name: each of its addresses, as memtrackd's /metrics */
	nl = mtn_listen_all(c->agg.listen, c->agg.port, lfd, MAX_LISTEN, err,
			    sizeof(err));
	if (nl < 0) {
		mtn_log(LOG_ERR, "%s", err);
		return 1;
	}
	for (i = 0; i < nl; i++)	/* a thousand nodes may come at once */
		listen(lfd[i], LISTEN_BACKLOG);
	/* key files may be readable by root only */
	a.creds = mtn_creds_load(&c->auth, true, err, sizeof(err));
	if (!a.creds) {
		mtn_log(LOG_ERR, "aggregate credentials: %s", err);
		return 1;
	}
	if (mtn_drop_privileges(c->user, 0, err, sizeof(err))) {
		mtn_log(LOG_ERR, "dropping privileges: %s", err);
		return 1;
	}
	mtn_log_started(foreground);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		mtn_log(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (nl > 1)
		snprintf(more, sizeof(more), "%d addresses, ", nl);
	snprintf(err, sizeof(err), "aggregating on %s%s%s port %u (%smax %u nodes)",
		 strchr(c->agg.listen, ':') ? "[" : "", c->agg.listen,
		 strchr(c->agg.listen, ':') ? "]" : "", c->agg.port, more,
		 c->agg.max_nodes);
	mtn_log(LOG_INFO, "%s", err);
	mtn_service_ready(err);
	a.loops = agg_loops_start(&a, LOOPS);
	if (!a.loops)
		return 1;
	for (;;) {
		bool busy;

		/* no more openings at once than MAX_OPENING: the backlog waits */
		pthread_mutex_lock(&a.lock);
		busy = a.opening >= MAX_OPENING;
		pthread_mutex_unlock(&a.lock);
		pfd[0] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		for (i = 0; i < nl; i++)
			pfd[1 + i] = (struct pollfd){
				.fd = busy ? -1 : lfd[i], .events = POLLIN };

		if (poll(pfd, 1 + nl, TICK_MS) < 0 && errno != EINTR) {
			mtn_log(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		/* the connection threads end with the process */
		if ((pfd[0].revents & POLLIN) && mtn_exit_signalled(sigfd)) {
			mtn_service_stopping();
			return 0;
		}
		for (i = 0; i < nl; i++)
			if (pfd[1 + i].revents & POLLIN)
				accept_one(&a, lfd[i], &attr);
		watch_nodes(&a);
	}
}
