// SPDX-License-Identifier: GPL-2.0
/*
 * Relay connections (conn.h).  Plain TCP only so far: a configuration
 * asking for authentication is refused when the credentials are loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "conn.h"

struct mtd_creds {
	enum mtd_auth_kind kind;
	bool server;
};

struct mtd_conn {
	int fd;
};

struct mtd_creds *mtd_creds_load(const struct mtd_auth_config *a,
				 bool server, char *err, size_t errlen)
{
	struct mtd_creds *c;

	if (a->kind != MTD_AUTH_NONE) {
		snprintf(err, errlen, "authentication is not supported yet");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->kind = a->kind;
	c->server = server;
	return c;
}

void mtd_creds_free(struct mtd_creds *c)
{
	free(c);
}

struct mtd_conn *mtd_conn_open(struct mtd_creds *c, int fd,
			       char *err, size_t errlen)
{
	struct mtd_conn *conn = calloc(1, sizeof(*conn));

	(void)c;
	if (!conn) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	conn->fd = fd;
	return conn;
}

void mtd_conn_close(struct mtd_conn *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

int mtd_conn_fd(const struct mtd_conn *c)
{
	return c->fd;
}

const char *mtd_conn_peer(const struct mtd_conn *c)
{
	(void)c;
	return "";
}

int mtd_conn_write(struct mtd_conn *c, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int mtd_conn_read(struct mtd_conn *c, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(c->fd, p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -ECONNRESET;
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t mtd_conn_read_some(struct mtd_conn *c, void *buf, size_t len)
{
	ssize_t n;

	do
		n = recv(c->fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n ? n : -ECONNRESET;
}

bool mtd_conn_pending(const struct mtd_conn *c)
{
	(void)c;
	return false;
}
