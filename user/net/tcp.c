// SPDX-License-Identifier: GPL-2.0
/*
 * Plain TCP sockets (tcp.h): the one a client's connection (conn.h) runs
 * on (the node's relay and the query clients dial the aggregator the same
 * way), and the listening ones of the aggregator and the HTTP endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp.h"

int mtd_set_timeouts(int fd, int ms)
{
	struct timeval tv;

	if (ms < 1)
		ms = 1;
	tv = (struct timeval){ .tv_sec = ms / 1000,
			       .tv_usec = ms % 1000 * 1000 };
	return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	       setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ?
	       -errno : 0;
}

/* addr (numeric IPv4 or IPv6) and port into *ss: its length, 0 if none. */
static socklen_t sockaddr_of(const char *addr, unsigned int port,
			     struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return sizeof(*in6);
	}
	return 0;
}

int mtd_dial(const char *addr, unsigned int port, int connect_ms)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss), elen = sizeof(int);
	struct pollfd pfd;
	int fd, err = 0, one = 1;

	if (!len)
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS)
		goto fail;
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (connect_ms <= 0 || poll(&pfd, 1, connect_ms) != 1) {
		errno = ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err) {
		errno = err ? err : errno;
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

int mtd_listen(const char *addr, unsigned int port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(addr, port, &ss);
	int fd, one = 1, e;

	if (!len) {
		snprintf(err, errlen, "%s: not a numeric address", addr);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64))
		goto fail;
	return fd;
fail:
	e = errno;
	snprintf(err, errlen, "listening on %s port %u: %s", addr, port,
		 strerror(e));
	if (fd >= 0)
		close(fd);
	return -e;
}
