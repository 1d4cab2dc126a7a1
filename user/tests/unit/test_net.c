// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libmemtrack-net's generic helpers, which the daemons only
 * exercise indirectly: the growable buffer (buf.c: exact contents across
 * many reallocations, printf and raw appends mixed, NULs kept), HOST:PORT
 * and duration parsing (config_value.c: every form memtrackd.conf and
 * --server accept, and the ones they refuse), and TCP dial/listen on
 * loopback (tcp.c: IPv4, IPv6 and localhost, bytes through, refused ports,
 * names that do not resolve, a busy port's message, receive timeouts).
 *
 *   test_net [TEST...] | --list      "PASS name" / "FAIL name: why"; exit 1
 *                                    if any failed, 2 for an unknown name
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "buf.h"
#include "config.h"
#include "tcp.h"

static char why[512];

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		snprintf(why, sizeof(why), __VA_ARGS__);		\
		return -1;						\
	}								\
} while (0)

static int buf_grows_exactly(void)
{
	struct mtd_buf b = { 0 };
	size_t want = 0, i;
	char *ref = malloc(1 << 22);
	int ret = 0;

	/* 3 MiB in pieces of every size from 0 to 4 KiB: dozens of reallocs */
	for (i = 0; want < (3 << 20); i++) {
		size_t n = i % 4097;
		char piece[4097];

		memset(piece, 'a' + i % 26, n);
		if (i % 3 == 0) {
			piece[n / 2] = '\0';	/* a NUL inside stays */
			mtd_buf_append(&b, piece, n);
			memcpy(ref + want, piece, n);
			want += n;
		} else {
			int len = snprintf(ref + want, 64, "%zu:%s;", i,
					   i % 2 ? "odd" : "even");

			mtd_buf_printf(&b, "%zu:%s;", i, i % 2 ? "odd" : "even");
			want += len;
		}
	}
	if (b.oom || b.len != want || memcmp(b.p, ref, want)) {
		snprintf(why, sizeof(why), "oom %d, len %zu for %zu, contents %s",
			 b.oom, b.len, want,
			 b.len == want && !memcmp(b.p, ref, want) ? "equal" : "differ");
		ret = -1;
	} else if (b.cap <= b.len) {
		snprintf(why, sizeof(why), "cap %zu leaves no room after %zu",
			 b.cap, b.len);
		ret = -1;
	}
	free(b.p);
	free(ref);
	return ret;
}

static int buf_printf_terminates(void)
{
	struct mtd_buf b = { 0 };

	mtd_buf_printf(&b, "%s=%d", "x", 42);
	mtd_buf_printf(&b, "%s", "");
	CHECK(!b.oom && b.len == 4 && !strcmp(b.p, "x=42"),
	      "got %zu bytes '%.*s'", b.len, (int)b.len, b.p);
	free(b.p);
	return 0;
}

static int hostport_accepts(void)
{
	static const struct {
		const char *in, *addr;
		unsigned int port;
	} ok[] = {
		{ "127.0.0.1:9472", "127.0.0.1", 9472 },
		{ "10.1.2.3:1", "10.1.2.3", 1 },
		{ "0.0.0.0:65535", "0.0.0.0", 65535 },
		{ "[::1]:80", "::1", 80 },
		{ "[fe80::1:2]:9000", "fe80::1:2", 9000 },
		{ "[::ffff:192.0.2.1]:7", "::ffff:192.0.2.1", 7 },
		{ "localhost:9472", "localhost", 9472 },
		{ "agg-1.example.org:1", "agg-1.example.org", 1 },
		{ "a:65535", "a", 65535 },
		{ "1.example:2", "1.example", 2 },
		{ "x.1a:3", "x.1a", 3 },
	};
	char addr[64];
	unsigned int port, i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		port = 0;
		CHECK(!mtd_parse_hostport(ok[i].in, addr, sizeof(addr), &port) &&
		      !strcmp(addr, ok[i].addr) && port == ok[i].port,
		      "%s: got '%s' port %u", ok[i].in, addr, port);
	}
	return 0;
}

static int hostport_refuses(void)
{
	static const char *const bad[] = {
		"", ":", "127.0.0.1", "127.0.0.1:", ":9472", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+1",
		"127.0.0.1:12x", "127.0.0.1: 1", "localhost", "localhost:0",
		"::1:9472", "[::1:9472", "::1]:9472", "[]:9472", "[::1]",
		"1.2.3.4.5:1", "10.0.0.256:1", "[127.0.0.1:1]", "[localhost]:1",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:1",
		/* host names: RFC 1123's form only */
		"-agg.example:1", "agg-.example:1", "agg..example:1",
		".agg:1", "agg.:1", "agg_1:1", "agg 1:1", "ag\xc3\xa9:1",
		"a/b:1",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example:1",
	};
	char addr[64], small[4];
	unsigned int port, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(mtd_parse_hostport(bad[i], addr, sizeof(addr), &port),
		      "'%s' accepted", bad[i]);
	CHECK(mtd_parse_hostport("10.0.0.1:1", small, sizeof(small), &port),
	      "an address longer than its buffer accepted");
	return 0;
}

static int durations(void)
{
	static const struct {
		const char *in;
		unsigned int ms;
	} ok[] = {
		{ "300s", 300000 }, { "5m", 300000 }, { "1h", 3600000 },
		{ "1500ms", 1500 }, { "0", 0 }, { "0s", 0 }, { "1s", 1000 },
		{ "720h", 2592000000U },
	};
	static const char *const bad[] = {
		"", "s", "300", "1", "5 s", " 5s", "-1s", "+1s", "1.5s", "1d",
		"1S", "1sec", "721h", "4294968s", "99999999999999999999s",
		"999ms",
	};
	unsigned int ms, i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ms = 1;
		CHECK(!mtd_parse_duration_ms(ok[i].in, 0, 30 * 86400000UL, &ms) &&
		      ms == ok[i].ms, "%s: got %u", ok[i].in, ms);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(mtd_parse_duration_ms(bad[i], 1000, 30 * 86400000UL, &ms),
		      "'%s' accepted", bad[i]);
	CHECK(mtd_parse_duration_ms("0", 1000, 5000, &ms), "0 under a minimum");
	return 0;
}

/* A listener on addr, port chosen by the kernel; its port in *port. */
static int listen_any(const char *addr, unsigned int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char err[256];
	int fd = mtd_listen(addr, 0, err, sizeof(err));

	if (fd < 0)
		return fd;
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*port = ntohs(ss.ss_family == AF_INET ?
		      ((struct sockaddr_in *)&ss)->sin_port :
		      ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static int bytes_through(const char *addr)
{
	unsigned int port;
	char got[6] = "";
	int l = listen_any(addr, &port), c, s;

	CHECK(l >= 0, "listen on %s: %s", addr, strerror(-l));
	c = mtd_dial(addr, port, 2000);
	CHECK(c >= 0, "dial %s port %u: %s", addr, port, strerror(-c));
	s = accept(l, NULL, NULL);
	CHECK(s >= 0, "accept: %s", strerror(errno));
	CHECK(write(c, "hello", 5) == 5 && read(s, got, 5) == 5 &&
	      !strcmp(got, "hello"), "read '%s'", got);
	close(s);
	close(c);
	close(l);
	return 0;
}

static int dial_and_listen_ipv4(void)
{
	return bytes_through("127.0.0.1");
}

static int dial_and_listen_ipv6(void)
{
	return bytes_through("::1");
}

static int dial_and_listen_localhost(void)
{
	return bytes_through("localhost");
}

/* How many distinct stream addresses getaddrinfo gives for host. */
static int addresses_of(const char *host)
{
	const struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					.ai_protocol = IPPROTO_TCP };
	struct addrinfo *res, *a, *b;
	int n = 0;

	if (getaddrinfo(host, "1", &hints, &res))
		return -1;
	for (a = res; a; a = a->ai_next) {
		for (b = res; b != a; b = b->ai_next)
			if (b->ai_addrlen == a->ai_addrlen &&
			    !memcmp(b->ai_addr, a->ai_addr, a->ai_addrlen))
				break;
		n += b == a;
	}
	freeaddrinfo(res);
	return n;
}

/* Every address of localhost listened on, each one reached. */
static int listen_all_of_a_name(void)
{
	int fds[8], n, want = addresses_of("localhost"), i, c, s;
	char err[256] = "";
	unsigned int port;

	CHECK(want >= 1, "localhost does not resolve");
	n = listen_any("127.0.0.1", &port);	/* a port free on both */
	CHECK(n >= 0, "listen: %s", strerror(-n));
	close(n);
	n = mtd_listen_all("localhost", port, fds, 8, err, sizeof(err));
	CHECK(n == want, "%d sockets for %d addresses: %s", n, want, err);
	for (i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char host[INET6_ADDRSTRLEN];

		getsockname(fds[i], (struct sockaddr *)&ss, &len);
		getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host),
			    NULL, 0, NI_NUMERICHOST);
		c = mtd_dial(host, port, 2000);
		CHECK(c >= 0, "dial %s port %u: %s", host, port, strerror(-c));
		s = accept(fds[i], NULL, NULL);
		CHECK(s >= 0, "accept on %s: %s", host, strerror(errno));
		close(s);
		close(c);
		close(fds[i]);
	}
	return 0;
}

static int dial_refusals(void)
{
	unsigned int port;
	int l = listen_any("127.0.0.1", &port), fd;

	CHECK(l >= 0, "listen: %s", strerror(-l));
	close(l);		/* nobody listens there now */
	fd = mtd_dial("127.0.0.1", port, 2000);
	CHECK(fd == -ECONNREFUSED, "dial a closed port: %d", fd);
	fd = mtd_dial("localhost", port, 2000);
	CHECK(fd == -ECONNREFUSED, "dial a closed port by name: %d", fd);
	/* -ENODATA where no resolver can be reached */
	fd = mtd_dial("no.such.host.invalid", port, 2000);
	CHECK((fd == -ENXIO && !strcmp(mtd_net_strerror(fd), "no such host")) ||
	      (fd == -ENODATA && !strcmp(mtd_net_strerror(fd),
					 "cannot resolve the host name now")),
	      "dial a name that does not resolve: %d", fd);
	return 0;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int listen_busy_port_says_why(void)
{
	unsigned int port;
	char err[256] = "", want[128];
	int l = listen_any("127.0.0.1", &port), again;

	CHECK(l >= 0, "listen: %s", strerror(-l));
	again = mtd_listen("127.0.0.1", port, err, sizeof(err));
	snprintf(want, sizeof(want), "listening on 127.0.0.1 port %u: %s",
		 port, strerror(EADDRINUSE));
	close(l);
	CHECK(again == -EADDRINUSE && !strcmp(err, want),
	      "second listen: %d '%s'", again, err);
	again = mtd_listen("no.such.host.invalid", port, err, sizeof(err));
	CHECK((again == -ENXIO || again == -ENODATA) &&
	      starts(err, "cannot resolve no.such.host.invalid: "),
	      "a name that does not resolve: %d '%s'", again, err);
	again = mtd_listen("::1x", port, err, sizeof(err));
	CHECK(again == -ENXIO && starts(err, "cannot resolve ::1x: "),
	      "bad address: %d '%s'", again, err);
	return 0;
}

static int receive_timeout(void)
{
	struct timespec t0, t1;
	unsigned int port;
	char c;
	int l = listen_any("127.0.0.1", &port), fd, s;
	long ms;

	CHECK(l >= 0, "listen: %s", strerror(-l));
	fd = mtd_dial("127.0.0.1", port, 2000);
	s = accept(l, NULL, NULL);
	CHECK(fd >= 0 && s >= 0 && !mtd_set_timeouts(fd, 300), "set-up");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(read(fd, &c, 1) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
	      "read with nothing sent: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	close(s);
	close(fd);
	close(l);
	CHECK(ms >= 280 && ms < 2000, "read gave up after %ld ms, not 300", ms);
	return 0;
}

#define T(f) { #f, f }
static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	T(buf_grows_exactly), T(buf_printf_terminates), T(hostport_accepts),
	T(hostport_refuses), T(durations), T(dial_and_listen_ipv4),
	T(dial_and_listen_ipv6), T(dial_and_listen_localhost),
	T(listen_all_of_a_name), T(dial_refusals),
	T(listen_busy_port_says_why), T(receive_timeout),
};
#define NTESTS (sizeof(tests) / sizeof(tests[0]))

static int selected(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return argc == 1;
}

int main(int argc, char **argv)
{
	unsigned int i;
	int failed = 0, a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--list")) {
			for (i = 0; i < NTESTS; i++)
				puts(tests[i].name);
			return 0;
		}
		for (i = 0; i < NTESTS && strcmp(argv[a], tests[i].name); i++)
			;
		if (i == NTESTS) {
			fprintf(stderr, "%s: no test %s (--list)\n", argv[0], argv[a]);
			return 2;
		}
	}
	for (i = 0; i < NTESTS; i++) {
		if (!selected(argc, argv, tests[i].name))
			continue;
		why[0] = 0;
		if (tests[i].fn()) {
			printf("FAIL %s: %s\n", tests[i].name, why);
			failed++;
		} else {
			printf("PASS %s\n", tests[i].name);
		}
	}
	return failed ? 1 : 0;
}
