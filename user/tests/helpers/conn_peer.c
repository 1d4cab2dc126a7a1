// SPDX-License-Identifier: GPL-2.0
/*
 * A test peer for memtrackd's conn layer (user/net/conn.h), used by
 * tests/host/test_relay_auth.py against itself, against memtrackd and
 * against GnuTLS's own gnutls-serv and gnutls-cli.
 *
 *   conn_peer [AUTH] server ADDR PORT [TO_ADDR TO_PORT]
 *	accept connections one at a time; each is echoed, or forwarded as
 *	plain TCP to TO_ADDR:TO_PORT (a TLS front for a plain aggregator)
 *   conn_peer [AUTH] client ADDR PORT MESSAGE
 *	send MESSAGE and expect it back
 *
 * AUTH: -a none|psk|cert, -p PSK_FILE, -C CA_FILE, -c CERT_FILE,
 * -k KEY_FILE; -t SECONDS, the socket timeouts (5); -n N: a server exits
 * after N connections, freeing all (for valgrind).
 *
 * Prints one tab-separated line per event: "listening", "accepted PEER
 * TLS", "refused WHY", "closed WHY", "connected PEER TLS", "echo MESSAGE".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "conn.h"

static int timeout_s = 5;
static int max_conns = -1;

static void usage(void)
{
	fprintf(stderr,
		"usage: conn_peer [-a none|psk|cert] [-p PSK] [-C CA] [-c CERT] [-k KEY] [-t S] [-n N]\n"
		"       server ADDR PORT [TO_ADDR TO_PORT] | client ADDR PORT MESSAGE\n");
	exit(2);
}

static struct addrinfo *resolve(const char *addr, const char *port)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	}, *ai;
	int ret = getaddrinfo(addr, port, &hints, &ai);

	if (ret) {
		fprintf(stderr, "conn_peer: %s port %s: %s\n", addr, port,
			gai_strerror(ret));
		exit(2);
	}
	return ai;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = timeout_s };

	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("conn_peer: setsockopt");
		exit(2);
	}
}

/* A connected TCP socket with the timeouts, or -errno. */
static int dial(const char *addr, const char *port)
{
	struct addrinfo *ai = resolve(addr, port);
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return err;
	}
	freeaddrinfo(ai);
	set_timeouts(fd);
	return fd;
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Echo what c sends (to < 0), or relay both ways between c and to, until
 * either side closes; returns why it ended.
 */
static const char *shuttle(struct mtn_conn *c, int to)
{
	static char why[128];
	char buf[16384];
	ssize_t n;
	int err;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = mtn_conn_fd(c), .events = POLLIN },
			{ .fd = to, .events = POLLIN },
		};

		if (!mtn_conn_pending(c) && poll(pfd, to < 0 ? 1 : 2, -1) < 0)
			return strerror(errno);
		if (mtn_conn_pending(c) || pfd[0].revents) {
			n = mtn_conn_read_some(c, buf, sizeof(buf));
			if (n < 0)
				goto out;
			err = to < 0 ? mtn_conn_write(c, buf, n) :
			      send_all(to, buf, n);
			if (err) {
				n = err;
				goto out;
			}
		}
		if (to >= 0 && pfd[1].revents) {
			n = recv(to, buf, sizeof(buf), 0);
			if (n <= 0)
				return n ? strerror(errno) : "forward end closed";
			err = mtn_conn_write(c, buf, n);
			if (err) {
				n = err;
				goto out;
			}
		}
	}
out:
	snprintf(why, sizeof(why), "%s\t%s", n == -ECONNRESET ?
		 "end of stream" : strerror(-n), mtn_conn_error(c));
	return why;
}

static int serve(struct mtn_creds *cr, char **argv, int argc)
{
	struct addrinfo *ai = resolve(argv[0], argv[1]);
	int lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	char err[512];

	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 16)) {
		perror("conn_peer: listen");
		return 2;
	}
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	for (; max_conns; max_conns -= max_conns > 0) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), to = -1;
		struct mtn_conn *c;
		const char *why;

		if (fd < 0) {
			perror("conn_peer: accept");
			return 2;
		}
		set_timeouts(fd);
		c = mtn_conn_open(cr, fd, err, sizeof(err));
		if (!c) {
			printf("refused\t%s\n", err);
			fflush(stdout);
			continue;
		}
		printf("accepted\t%s\t%s\n", mtn_conn_peer(c), mtn_conn_desc(c));
		fflush(stdout);
		if (argc == 4) {
			to = dial(argv[2], argv[3]);
			if (to < 0) {
				printf("closed\tforward: %s\n", strerror(-to));
				fflush(stdout);
				mtn_conn_close(c);
				continue;
			}
		}
		why = shuttle(c, to);
		printf("closed\t%s\n", why);
		fflush(stdout);
		mtn_conn_close(c);
		if (to >= 0)
			close(to);
	}
	close(lfd);
	return 0;
}

static int client(struct mtn_creds *cr, char **argv)
{
	const char *msg = argv[2];
	size_t len = strlen(msg);
	struct mtn_conn *c;
	char err[512], *back;
	int fd = dial(argv[0], argv[1]), ret;

	if (fd < 0) {
		printf("refused\tconnect: %s\n", strerror(-fd));
		return 1;
	}
	c = mtn_conn_open(cr, fd, err, sizeof(err));
	if (!c) {
		printf("refused\t%s\n", err);
		return 1;
	}
	printf("connected\t%s\t%s\n", mtn_conn_peer(c), mtn_conn_desc(c));
	back = calloc(1, len + 1);
	if (!back)
		return 2;
	ret = mtn_conn_write(c, msg, len);
	if (!ret)
		ret = mtn_conn_read(c, back, len);
	if (ret)
		printf("closed\t%s\t%s\n", strerror(-ret), mtn_conn_error(c));
	else
		printf("echo\t%s\n", back);
	ret = ret || strcmp(back, msg);
	mtn_conn_close(c);
	free(back);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct mtn_auth_config a = { .kind = MTN_AUTH_NONE };
	struct mtn_creds *cr;
	char err[512];
	bool server;
	int opt, ret;

	while ((opt = getopt(argc, argv, "a:p:C:c:k:t:n:")) != -1) {
		char *dst = opt == 'p' ? a.psk_file : opt == 'C' ? a.ca_file :
			    opt == 'c' ? a.cert_file : opt == 'k' ? a.key_file :
			    NULL;

		if (dst) {
			snprintf(dst, sizeof(a.psk_file), "%s", optarg);
		} else if (opt == 'a') {
			if (!strcmp(optarg, "psk"))
				a.kind = MTN_AUTH_PSK;
			else if (!strcmp(optarg, "cert"))
				a.kind = MTN_AUTH_CERT;
			else if (strcmp(optarg, "none"))
				usage();
		} else if (opt == 't') {
			timeout_s = atoi(optarg);
		} else if (opt == 'n') {
			max_conns = atoi(optarg);
		} else {
			usage();
		}
	}
	argv += optind;
	argc -= optind;
	if (argc < 1)
		usage();
	server = !strcmp(argv[0], "server");
	if (!(server && (argc == 3 || argc == 5)) &&
	    !(!strcmp(argv[0], "client") && argc == 4))
		usage();
	signal(SIGPIPE, SIG_IGN);
	cr = mtn_creds_load(&a, server, err, sizeof(err));
	if (!cr) {
		printf("credentials\t%s\n", err);
		return 1;
	}
	ret = server ? serve(cr, argv + 1, argc - 1) : client(cr, argv + 1);
	mtn_creds_free(cr);
	return ret;
}
