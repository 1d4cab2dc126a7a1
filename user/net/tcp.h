/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plain TCP sockets (tcp.c) under the relay's connections (conn.h) and the
 * HTTP endpoint: dial a peer, listen for peers, by address or host name.
 *
 * Errors, in every call of libmemtrack-net (user/net), this one convention:
 * a net call returns 0 (or a count, a descriptor, a pointer) on success and
 * a negative errno on failure, never a bare -1 (a pointer: NULL with errno
 * set); a call whose failure has more to say than an errno (bad input in a
 * config, a query, a key file; a host that does not resolve; a port
 * already taken) takes the caller's (err, errlen) and writes one sentence
 * there.  Bad input is -EINVAL; a failing system call gives its errno; a
 * host name that does not resolve is -EHOSTUNREACH (-EAGAIN when the
 * resolver cannot answer now) with "cannot resolve HOST: why" in err.
 */
#ifndef MEMTRACK_NET_TCP_H
#define MEMTRACK_NET_TCP_H

#include <stddef.h>

/*
 * A TCP connection to host (a numeric IPv4 or IPv6 address, or a name: its
 * addresses tried in turn) port, made within connect_ms, then blocking,
 * with TCP_NODELAY: the socket for mtn_conn_open(), or -errno.  A host
 * that does not resolve is -EHOSTUNREACH (-EAGAIN: the resolver cannot
 * answer now; -ENOMEM) with "cannot resolve HOST: why" in err; after any
 * other failure err is "" (the errno says it all: -ECONNREFUSED,
 * -ETIMEDOUT, ...).
 */
int mtn_dial(const char *host, unsigned int port, int connect_ms,
	     char *err, size_t errlen);
/* Send and receive timeouts of ms (at least 1 ms): 0 or -errno. */
int mtn_set_timeouts(int fd, int ms);
/*
 * socket + bind + listen on each address of host (numeric or a name) and
 * port, at most max, into fds: how many, or -errno with err set (a name
 * that does not resolve: as mtn_dial(); a port taken: -EADDRINUSE).  An
 * address the machine does not have (::1 without IPv6) is skipped if
 * another one binds; any other failure undoes them all.
 */
int mtn_listen_all(const char *host, unsigned int port, int *fds, int max,
		   char *err, size_t errlen);
/* The same for the first address that binds: fd or -errno with err set. */
int mtn_listen(const char *host, unsigned int port, char *err, size_t errlen);

#endif /* MEMTRACK_NET_TCP_H */
