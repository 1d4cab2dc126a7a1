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

struct mtd_conn *mtd_conn_open(struct mtd_creds *c, int fd,
			       char *err, size_t errlen)
{
	struct mtd_conn *conn = calloc(1, sizeof(*conn));

	if (!conn) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	conn->fd = fd;
	conn->creds = c;
	if (c->kind != MTD_AUTH_NONE && mtd_tls_open(conn, err, errlen)) {
		mtd_conn_close(conn);
		return NULL;
	}
	return conn;
}

void mtd_conn_close(struct mtd_conn *c)
{
	if (!c)
		return;
	mtd_tls_close(c);
	close(c->fd);
	free(c);
}

int mtd_conn_fd(const struct mtd_conn *c)
{
	return c->fd;
}

const char *mtd_conn_peer(const struct mtd_conn *c)
{
	return c->peer;
}

const char *mtd_conn_peer_name(const struct mtd_conn *c)
{
	return c->peer_name;
}

const char *mtd_conn_desc(const struct mtd_conn *c)
{
	return c->desc;
}

const char *mtd_conn_error(const struct mtd_conn *c)
{
	return c->error;
}

int mtd_conn_all(struct mtd_conn *c, void *buf, size_t len,
		 mtd_conn_step step)
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

static ssize_t plain_send(struct mtd_conn *c, void *p, size_t len)
{
	ssize_t n;

	do
		n = send(c->fd, p, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t plain_recv(struct mtd_conn *c, void *p, size_t len)
{
	ssize_t n;

	do
		n = recv(c->fd, p, len, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int mtd_conn_write(struct mtd_conn *c, const void *buf, size_t len)
{
	/* the steps only read a write's bytes */
	return mtd_conn_all(c, (void *)buf, len,
			    c->tls ? mtd_tls_send : plain_send);
}

int mtd_conn_read(struct mtd_conn *c, void *buf, size_t len)
{
	return mtd_conn_all(c, buf, len, c->tls ? mtd_tls_recv : plain_recv);
}

ssize_t mtd_conn_read_some(struct mtd_conn *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return mtd_tls_read_some(c, buf, len);
	do
		n = recv(c->fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n ? n : -ECONNRESET;
}

bool mtd_conn_pending(const struct mtd_conn *c)
{
	return c->tls && mtd_tls_pending(c);
}
