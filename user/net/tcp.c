// SPDX-License-Identifier: GPL-2.0
/*
 * Plain TCP sockets (tcp.h): the one a client's connection (conn.h) runs
 * on (the node's relay and the query clients dial the aggregator the same
 * way), and the listening ones of the aggregator and the HTTP endpoint.
 *
 * A host is a numeric address or a name, resolved with getaddrinfo() at
 * each dial (a relay reconnecting follows a name that moved) and once when
 * listening.  Dialing tries the addresses in getaddrinfo's order within the
 * one timeout, as a browser does; listening takes every address of the name
 * (localhost: 127.0.0.1 and ::1) up to what the caller has room for.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "libmemtrack.h"
#include "tcp.h"

int mtn_set_timeouts(int fd, int ms)
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

/*
 * The stream addresses of host and port into *res: 0, or a negative errno
 * with "cannot resolve HOST: why" in err: -EHOSTUNREACH for a name (or a
 * malformed address) that has no address, -EAGAIN if the resolver could not
 * answer now, -ENOMEM, or the errno of the resolver's system call.
 */
static int resolve(const char *host, unsigned int port, struct addrinfo **res,
		   char *err, size_t errlen)
{
	const struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP,
		.ai_flags = AI_NUMERICSERV,
	};
	char serv[8];
	int e, saved;

	snprintf(serv, sizeof(serv), "%u", port);
	e = getaddrinfo(host, serv, &hints, res);
	if (!e)
		return 0;
	saved = errno;
	snprintf(err, errlen, "cannot resolve %s: %s", host,
		 e == EAI_SYSTEM ? strerror(saved) : gai_strerror(e));
	switch (e) {
	case EAI_SYSTEM:
		return saved ? -saved : -EIO;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_AGAIN:
		return -EAGAIN;
	default:
		return -EHOSTUNREACH;
	}
}

static int dial_one(const struct addrinfo *ai, int connect_ms)
{
	socklen_t elen = sizeof(int);
	struct pollfd pfd;
	int fd, err = 0, one = 1;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS)
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

int mtn_dial(const char *host, unsigned int port, int connect_ms,
	     char *err, size_t errlen)
{
	int64_t deadline = mt_mono_ms() + connect_ms;
	struct addrinfo *res, *ai;
	int fd;

	if (errlen)
		err[0] = '\0';
	fd = resolve(host, port, &res, err, errlen);
	if (fd)
		return fd;
	fd = -ETIMEDOUT;
	for (ai = res; ai; ai = ai->ai_next) {
		int64_t left = deadline - mt_mono_ms();

		if (left <= 0)
			break;
		fd = dial_one(ai, (int)left);
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	return fd;
}

/* "127.0.0.1", or "localhost (::1)" for an address of a name. */
static void where(const char *host, const struct addrinfo *ai, char *out,
		  size_t outlen)
{
	char num[INET6_ADDRSTRLEN] = "?";

	getnameinfo(ai->ai_addr, ai->ai_addrlen, num, sizeof(num), NULL, 0,
		    NI_NUMERICHOST);
	if (!strcmp(num, host))
		snprintf(out, outlen, "%s", host);
	else
		snprintf(out, outlen, "%s (%s)", host, num);
}

static bool seen_before(const struct addrinfo *res, const struct addrinfo *ai)
{
	for (; res != ai; res = res->ai_next)
		if (res->ai_addrlen == ai->ai_addrlen &&
		    !memcmp(res->ai_addr, ai->ai_addr, ai->ai_addrlen))
			return true;
	return false;
}

static int listen_one(const struct addrinfo *ai, bool v6only)
{
	int fd, one = 1, e;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a name's :: beside its 0.0.0.0 must not take IPv4 too */
	if ((v6only && ai->ai_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int mtn_listen_all(const char *host, unsigned int port, int *fds, int max,
		   char *err, size_t errlen)
{
	struct addrinfo *res, *ai;
	char at[INET6_ADDRSTRLEN + 300];
	int n = 0, fd = 0, i;

	fd = resolve(host, port, &res, err, errlen);
	if (fd)
		return fd;
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		if (seen_before(res, ai))
			continue;
		fd = listen_one(ai, res->ai_next != NULL);
		if (fd >= 0) {
			fds[n++] = fd;
			continue;
		}
		where(host, ai, at, sizeof(at));
		snprintf(err, errlen, "listening on %s port %u: %s", at, port,
			 strerror(-fd));
		/* an address this machine does not have, e.g. ::1 without IPv6 */
		if (fd == -EADDRNOTAVAIL || fd == -EAFNOSUPPORT)
			continue;
		for (i = 0; i < n; i++)
			close(fds[i]);
		n = 0;
		break;
	}
	freeaddrinfo(res);
	if (n)
		return n;
	if (fd >= 0) {
		fd = -EADDRNOTAVAIL;
		snprintf(err, errlen, "%s port %u: no address to listen on",
			 host, port);
	}
	return fd;
}

int mtn_listen(const char *host, unsigned int port, char *err, size_t errlen)
{
	int fd, n = mtn_listen_all(host, port, &fd, 1, err, errlen);

	return n == 1 ? fd : n;
}
