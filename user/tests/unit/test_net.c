// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libmemtrack-net's generic helpers, which the daemons only
 * exercise indirectly: libmemtrack's doubling realloc (grow.c: the first
 * size, doubling to what is needed, no call when there is room, overflow
 * and a failed allocation refused with the array untouched), the growable
 * buffer built on it (buf.c: exact contents across
 * many reallocations, printf and raw appends mixed, NULs kept), HOST:PORT
 * and duration parsing (config_value.c: every form memtrackd.conf and
 * --server accept, and the ones they refuse), TCP dial/listen on
 * loopback (tcp.c: IPv4, IPv6 and localhost, bytes through, refused ports,
 * names that do not resolve: a negative errno and the resolver's sentence,
 * a busy port's message, receive timeouts), and memtrackd.conf's errors
 * (config.c: a bad value or key -EINVAL with "FILE:LINE: why", a missing
 * file -ENOENT): net's one error convention (tcp.h).
 *
 *   test_net [TEST...] | --list      "PASS name" / "FAIL name: why"; exit 1
 *                                    if any failed, 2 for an unknown name
 */
#include <errno.h>
#include <stdint.h>
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
#include "grow.h"
#include "tcp.h"

static char why[512];

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		snprintf(why, sizeof(why), __VA_ARGS__);		\
		return -1;						\
	}								\
} while (0)

static int grow_doubles_from_first(void)
{
	uint32_t *v = NULL, *was;
	size_t cap = 0, i;

	CHECK(!mt_grow((void **)&v, &cap, 0, sizeof(*v), 8) && !v && !cap,
	      "room for nothing allocated: cap %zu", cap);
	CHECK(!mt_grow((void **)&v, &cap, 1, sizeof(*v), 8) && v && cap == 8,
	      "first: cap %zu", cap);
	for (i = 0; i < 8; i++)
		v[i] = (uint32_t)i;
	was = v;
	CHECK(!mt_grow((void **)&v, &cap, 8, sizeof(*v), 8) && v == was &&
	      cap == 8, "full, not past it: cap %zu", cap);
	CHECK(!mt_grow((void **)&v, &cap, 9, sizeof(*v), 8) && cap == 16,
	      "one past: cap %zu", cap);
	CHECK(!mt_grow((void **)&v, &cap, 100, sizeof(*v), 8) && cap == 128,
	      "100: cap %zu", cap);
	for (i = 0; i < 8; i++)
		CHECK(v[i] == i, "v[%zu] = %u after growing", i, v[i]);
	v[127] = 127;		/* all of it is there (valgrind, ASan) */
	free(v);
	v = NULL;
	cap = 0;
	CHECK(!mt_grow((void **)&v, &cap, 1000, sizeof(*v), 3) && cap == 1536,
	      "1000 from 3: cap %zu", cap);
	free(v);
	v = NULL;
	cap = 0;
	CHECK(!mt_grow((void **)&v, &cap, 5, sizeof(*v), 0) && cap == 8,
	      "first 0 taken as 1: cap %zu", cap);
	free(v);
	return 0;
}

static int grow_refuses_overflow(void)
{
	uint64_t *v = NULL, *was;
	size_t cap = 0;
	int r;

	CHECK(!mt_grow((void **)&v, &cap, 4, sizeof(*v), 4) && cap == 4,
	      "cap %zu", cap);
	was = v;
	/* more elements than a size_t counts in bytes */
	r = mt_grow((void **)&v, &cap, SIZE_MAX / sizeof(*v) + 1, sizeof(*v), 4);
	CHECK(r == -ENOMEM && v == was && cap == 4,
	      "bytes overflow: %d, cap %zu", r, cap);
	/* doubling itself past SIZE_MAX */
	r = mt_grow((void **)&v, &cap, SIZE_MAX, 1, 4);
	CHECK(r == -ENOMEM && v == was && cap == 4,
	      "count overflow: %d, cap %zu", r, cap);
	/* fits a size_t, not the machine: realloc fails, nothing changes */
	r = mt_grow((void **)&v, &cap, SIZE_MAX / 4 / sizeof(*v), sizeof(*v), 4);
	CHECK(r == -ENOMEM && v == was && cap == 4,
	      "failed allocation: %d, cap %zu", r, cap);
	r = mt_grow((void **)&v, &cap, 5, 0, 4);
	CHECK(r == -EINVAL && v == was && cap == 4, "size 0: %d, cap %zu", r, cap);
	free(v);
	return 0;
}

static int buf_grows_exactly(void)
{
	struct mtn_buf b = { 0 };
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
			mtn_buf_append(&b, piece, n);
			memcpy(ref + want, piece, n);
			want += n;
		} else {
			int len = snprintf(ref + want, 64, "%zu:%s;", i,
					   i % 2 ? "odd" : "even");

			mtn_buf_printf(&b, "%zu:%s;", i, i % 2 ? "odd" : "even");
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
	struct mtn_buf b = { 0 };

	mtn_buf_printf(&b, "%s=%d", "x", 42);
	mtn_buf_printf(&b, "%s", "");
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
		CHECK(!mtn_parse_hostport(ok[i].in, addr, sizeof(addr), &port) &&
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
		CHECK(mtn_parse_hostport(bad[i], addr, sizeof(addr), &port),
		      "'%s' accepted", bad[i]);
	CHECK(mtn_parse_hostport("10.0.0.1:1", small, sizeof(small), &port),
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
		CHECK(!mtn_parse_duration_ms(ok[i].in, 0, 30 * 86400000UL, &ms) &&
		      ms == ok[i].ms, "%s: got %u", ok[i].in, ms);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(mtn_parse_duration_ms(bad[i], 1000, 30 * 86400000UL, &ms),
		      "'%s' accepted", bad[i]);
	CHECK(mtn_parse_duration_ms("0", 1000, 5000, &ms), "0 under a minimum");
	return 0;
}

/* A listener on addr, port chosen by the kernel; its port in *port. */
static int listen_any(const char *addr, unsigned int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char err[256];
	int fd = mtn_listen(addr, 0, err, sizeof(err));

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
	char got[6] = "", err[256];
	int l = listen_any(addr, &port), c, s;

	CHECK(l >= 0, "listen on %s: %s", addr, strerror(-l));
	c = mtn_dial(addr, port, 2000, err, sizeof(err));
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
	n = mtn_listen_all("localhost", port, fds, 8, err, sizeof(err));
	CHECK(n == want, "%d sockets for %d addresses: %s", n, want, err);
	for (i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char host[INET6_ADDRSTRLEN];

		getsockname(fds[i], (struct sockaddr *)&ss, &len);
		getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host),
			    NULL, 0, NI_NUMERICHOST);
		c = mtn_dial(host, port, 2000, err, sizeof(err));
		CHECK(c >= 0, "dial %s port %u: %s", host, port, strerror(-c));
		s = accept(fds[i], NULL, NULL);
		CHECK(s >= 0, "accept on %s: %s", host, strerror(errno));
		close(s);
		close(c);
		close(fds[i]);
	}
	return 0;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int dial_refusals(void)
{
	unsigned int port;
	char err[256] = "x";
	int l = listen_any("127.0.0.1", &port), fd;

	CHECK(l >= 0, "listen: %s", strerror(-l));
	close(l);		/* nobody listens there now */
	fd = mtn_dial("127.0.0.1", port, 2000, err, sizeof(err));
	CHECK(fd == -ECONNREFUSED && !err[0], "dial a closed port: %d '%s'",
	      fd, err);
	fd = mtn_dial("localhost", port, 2000, err, sizeof(err));
	CHECK(fd == -ECONNREFUSED && !err[0],
	      "dial a closed port by name: %d '%s'", fd, err);
	return 0;
}

/*
 * A name that does not resolve: a negative errno (-EHOSTUNREACH, or -EAGAIN
 * where no resolver can be reached), the resolver's sentence in err.
 */
static int dial_unresolvable_says_why(void)
{
	char err[256] = "";
	int fd;

	fd = mtn_dial("no.such.host.invalid", 9, 2000, err, sizeof(err));
	CHECK((fd == -EHOSTUNREACH || fd == -EAGAIN) &&
	      starts(err, "cannot resolve no.such.host.invalid: ") &&
	      strlen(err) > strlen("cannot resolve no.such.host.invalid: "),
	      "dial a name that does not resolve: %d '%s'", fd, err);
	fd = mtn_dial("::1x", 9, 2000, err, sizeof(err));
	CHECK(fd == -EHOSTUNREACH && starts(err, "cannot resolve ::1x: "),
	      "dial a malformed address: %d '%s'", fd, err);
	return 0;
}

static int listen_busy_port_says_why(void)
{
	unsigned int port;
	char err[256] = "", want[128];
	int l = listen_any("127.0.0.1", &port), again;

	CHECK(l >= 0, "listen: %s", strerror(-l));
	again = mtn_listen("127.0.0.1", port, err, sizeof(err));
	snprintf(want, sizeof(want), "listening on 127.0.0.1 port %u: %s",
		 port, strerror(EADDRINUSE));
	close(l);
	CHECK(again == -EADDRINUSE && !strcmp(err, want),
	      "second listen: %d '%s'", again, err);
	again = mtn_listen("no.such.host.invalid", port, err, sizeof(err));
	CHECK((again == -EHOSTUNREACH || again == -EAGAIN) &&
	      starts(err, "cannot resolve no.such.host.invalid: "),
	      "a name that does not resolve: %d '%s'", again, err);
	again = mtn_listen("::1x", port, err, sizeof(err));
	CHECK(again == -EHOSTUNREACH && starts(err, "cannot resolve ::1x: "),
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
	fd = mtn_dial("127.0.0.1", port, 2000, NULL, 0);
	s = accept(l, NULL, NULL);
	CHECK(fd >= 0 && s >= 0 && !mtn_set_timeouts(fd, 300), "set-up");
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

/* The text into a file of its own, its path into path. */
static int write_config(char *path, size_t len, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/test_net.conf.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	fputs(text, f);
	fclose(f);
	return 0;
}

/*
 * A bad value, an unknown key, a port given twice: -EINVAL, and the
 * sentence "FILE:LINE: why" in err; a file that is not there: -ENOENT.
 */
static int config_bad_value_says_why(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "[memtrackd]\nsource = proc\nport = 70000\n",
		  ":3: port = \"70000\": must be 1..65535" },
		{ "[memtrackd]\nsample_interval = 5\n",
		  ":2: sample_interval = \"5\": must be 0 (only on a scrape) or a duration" },
		{ "[memtrackd]\nno_such_key = 1\n",
		  ":2: unknown key \"no_such_key\"" },
		{ "[aggregate]\nmax_nodes = 0\n",
		  ":2: max_nodes = \"0\": must be 1..100000" },
		{ "[aggregate]\nno_such_key = 1\n",
		  ":2: unknown key \"no_such_key\" in [aggregate]" },
		{ "[memtrackd]\nremote_write_timeout = 1h\n",
		  ":2: remote_write_timeout = \"1h\": must be a duration of 100ms..5m" },
		{ "[memtrackd]\nremote_write_user = u\n",
		  ":2: remote_write options without a remote_write URL" },
		{ "[memtrackd]\nlisten = 127.0.0.1:9100\nport = 9100\n",
		  ":3: port: the port is in listen already (line 2)" },
	};
	struct mtn_config c;
	char path[64], err[512], want[512];
	size_t i;
	int r;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = write_config(path, sizeof(path), bad[i].text);
		CHECK(!r, "temporary file: %s", strerror(-r));
		mtn_config_defaults(&c);
		err[0] = 0;
		r = mtn_config_load(path, &c, err, sizeof(err));
		unlink(path);
		snprintf(want, sizeof(want), "%s%s", path, bad[i].why);
		CHECK(r == -EINVAL && starts(err, want),
		      "%s: %d '%s', not -EINVAL '%s...'", bad[i].text, r, err,
		      want);
	}
	r = write_config(path, sizeof(path), "[memtrackd]\nport = 9200\n");
	CHECK(!r, "temporary file: %s", strerror(-r));
	mtn_config_defaults(&c);
	r = mtn_config_load(path, &c, err, sizeof(err));
	unlink(path);
	CHECK(!r && c.port == 9200, "a good file: %d '%s'", r, err);
	r = mtn_config_load(path, &c, err, sizeof(err));
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	CHECK(r == -ENOENT && !strcmp(err, want), "no file: %d '%s'", r, err);
	return 0;
}

#define T(f) { #f, f }
static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	T(grow_doubles_from_first), T(grow_refuses_overflow),
	T(buf_grows_exactly), T(buf_printf_terminates), T(hostport_accepts),
	T(hostport_refuses), T(durations), T(dial_and_listen_ipv4),
	T(dial_and_listen_ipv6), T(dial_and_listen_localhost),
	T(listen_all_of_a_name), T(dial_refusals),
	T(dial_unresolvable_says_why),
	T(listen_busy_port_says_why), T(receive_timeout),
	T(config_bad_value_says_why),
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
