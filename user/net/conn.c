// SPDX-License-Identifier: GPL-2.0
/*
 * Relay connections (conn.h): plain TCP here; with auth = psk or cert,
 * every call goes to the TLS session (conn_tls.c) over the credentials
 * conn_creds.c loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "conn_int.h"

struct mtn_conn *mtn_conn_open(struct mtn_creds *c, int fd,
			       char *err, size_t errlen)
{
	struct mtn_conn *conn = calloc(1, sizeof(*conn));
	int e;

	if (!conn) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	conn->fd = fd;
	conn->creds = c;
	if (c->kind != MTN_AUTH_NONE) {
		e = mtn_tls_open(conn, err, errlen);
		if (e) {
			mtn_conn_close(conn);
			errno = -e;
			return NULL;
		}
	}
	return conn;
}

void mtn_conn_close(struct mtn_conn *c)
{
	if (!c)
		return;
	mtn_tls_close(c);
	close(c->fd);
	free(c);
}

int mtn_conn_fd(const struct mtn_conn *c)
{
	return c->fd;
}

const char *mtn_conn_peer(const struct mtn_conn *c)
{
	return c->peer;
}

const char *mtn_conn_peer_name(const struct mtn_conn *c)
{
	return c->peer_name;
}

const char *mtn_conn_desc(const struct mtn_conn *c)
{
	return c->desc;
}

const char *mtn_conn_error(const struct mtn_conn *c)
{
	return c->error;
}

int mtn_conn_all(struct mtn_conn *c, void *buf, size_t len,
		 mtn_conn_step step)
{
	char *p = buf;

	while (len) {
		ssize_t n = step(c, p, len);

		if (n < 0)
			return (int)n;
		if (!n)
			return -ECONNRESET;
		p += n;
		len -= n;
	}
	return 0;
}

static ssize_t plain_send(struct mtn_conn *c, void *p, size_t len)
{
	ssize_t n;

	do
		n = send(c->fd, p, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t plain_recv(struct mtn_conn *c, void *p, size_t len)
{
	ssize_t n;

	do
		n = recv(c->fd, p, len, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int mtn_conn_write(struct mtn_conn *c, const void *buf, size_t len)
{
	/* the steps only read a write's bytes */
	return mtn_conn_all(c, (void *)buf, len,
			    c->tls ? mtn_tls_send : plain_send);
}

int mtn_conn_read(struct mtn_conn *c, void *buf, size_t len)
{
	return mtn_conn_all(c, buf, len, c->tls ? mtn_tls_recv : plain_recv);
}

ssize_t mtn_conn_read_some(struct mtn_conn *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return mtn_tls_read_some(c, buf, len);
	do
		n = recv(c->fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n ? n : -ECONNRESET;
}

bool mtn_conn_pending(const struct mtn_conn *c)
{
	return c->tls && mtn_tls_pending(c);
}
