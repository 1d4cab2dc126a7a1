// SPDX-License-Identifier: GPL-2.0
/*
 * The message side of test_netlink.py's fuzz run, loaded with ctypes:
 * random generic netlink messages (random commands, flags, families,
 * versions, attribute trees, cut or lying lengths) made and sent here, the
 * answers drained here; the checks stay in the test.  In Python each
 * message cost about 1 ms of emulated CPU, most of a 100,000-message run;
 * the test now gets control back only where it checks something:
 *
 *   f = nlfuzz_new(family, privileged, seed, n)
 *   while (i = nlfuzz_next(f, &what, &err, attrs, &len)) >= 0:
 *       what 1: message i was a SET_CONFIG to the family, sent whole, and
 *               err is its answer: 0, an errno, NLFUZZ_NONE (no answer in
 *               5 s) or NLFUZZ_LOST (the socket overran meanwhile, so the
 *               answer may be gone); attrs/len its attributes
 *       what 2: the periodic check after message i (every 500th)
 *   nlfuzz_counts(f, &sent, &replies); nlfuzz_free(f)
 *
 * The generator is the one test_netlink.py had: the same shapes with the
 * same odds (see fuzz_attrs() and nlfuzz_next() below).
 *
 * And the reads the test checks after each SET_CONFIG (about 20,000 in a
 * run; 4 ms each in Python under emulation, now about a tenth of that):
 *
 *   c = nlconf_open(family); nlconf_read(c, text, len); nlconf_close(c)
 *
 * text: /proc/memtrack/config as read, a line "=", then GET_CONFIG's answer
 * as "retention_ms N" and "NAME ENABLED ATTACHED TOTAL" per hook group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <uapi/linux/memtrack.h>

#include "nltest.h"

#define NLFUZZ_NONE	(-1)
#define NLFUZZ_LOST	(-2)
#define MAX_MSG		16384
#define CHECK_EVERY	500

struct nlfuzz {
	int fd, family, privileged;
	long n, i, sent, replies;
	uint64_t rng;
	int periodic_due;		/* the check after message i - 1 */
	unsigned char buf[1 << 20];
};

static uint64_t rnd64(struct nlfuzz *f)
{
	return splitmix64(&f->rng);
}

/* Uniform in lo..hi, both included. */
static long rint_(struct nlfuzz *f, long lo, long hi)
{
	return lo + (long)(rnd64(f) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [0, 1). */
static double rfrac(struct nlfuzz *f)
{
	return (double)(rnd64(f) >> 11) / (double)(1ULL << 53);
}

static size_t attr(unsigned char *out, size_t room, unsigned int type,
		   const unsigned char *payload, size_t len)
{
	size_t n = 4 + len, all = (n + 3) & ~(size_t)3;
	uint16_t h[2] = { (uint16_t)n, (uint16_t)type };

	if (all > room)
		return 0;
	memcpy(out, h, 4);
	memmove(out + 4, payload, len);
	memset(out + n, 0, all - n);
	return all;
}

/*
 * 0..4 attributes: types mostly in the family's range, some anything;
 * nested runs (3 deep at most, most flagged NLA_F_NESTED), integers of
 * every width, hook group names and strings with or without their NUL,
 * random bytes; one in 20 given a random length field.
 */
static size_t fuzz_attrs(struct nlfuzz *f, unsigned char *out, size_t room,
			 int depth)
{
	static const char *const words[] = { "task", "mmap", "oom",
					     "xxxxxxxxxxxxxxxxx", "" };
	unsigned char payload[MAX_MSG];
	size_t len = 0, plen, a;
	long count = rint_(f, 0, 4), j;

	for (j = 0; j < count; j++) {
		unsigned int t = rfrac(f) < 0.9 ? (unsigned int)rint_(f, 0, 14) :
			(unsigned int)rint_(f, 0, 0xffff);
		double k = rfrac(f);

		if (k < 0.2 && depth < 3) {
			plen = fuzz_attrs(f, payload, sizeof(payload) / 4, depth + 1);
			if (rfrac(f) < 0.7)
				t |= NLA_F_NESTED;
		} else if (k < 0.6) {
			static const size_t widths[] = { 1, 2, 4, 8 };
			uint64_t v;

			plen = widths[rint_(f, 0, 3)];
			v = rfrac(f) < 0.5 ? rnd64(f) & 0xff : 1;
			memcpy(payload, &v, plen);	/* little-endian */
		} else if (k < 0.8) {
			const char *w = words[rint_(f, 0, 4)];

			plen = strlen(w);
			memcpy(payload, w, plen);
			if (rfrac(f) < 0.8)
				payload[plen++] = '\0';
		} else {
			plen = (size_t)rint_(f, 0, 48);
			for (a = 0; a < plen; a++)
				payload[a] = (unsigned char)rnd64(f);
		}
		a = attr(out + len, room - len, t & 0xffff, payload, plen);
		if (a && rfrac(f) < 0.05) {
			uint16_t bad = (uint16_t)rint_(f, 0, 0xffff);

			memcpy(out + len, &bad, 2);
		}
		len += a;
	}
	return len;
}

/* The answer to seq: its errno (0: ack), NLFUZZ_NONE or NLFUZZ_LOST. */
static int wait_reply(struct nlfuzz *f, uint32_t seq)
{
	struct timespec now, end;
	int overran = 0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 5;
	for (;;) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		long left;
		ssize_t r;
		size_t off = 0;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000 +
		       (end.tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		r = recv(f->fd, f->buf, sizeof(f->buf), 0);
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				overran = 1;	/* ENOBUFS */
			continue;
		}
		while (off + NLMSG_HDRLEN <= (size_t)r) {
			struct nlmsghdr h;

			memcpy(&h, f->buf + off, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN)
				break;
			if (h.nlmsg_seq == seq && h.nlmsg_type == NLMSG_ERROR &&
			    off + NLMSG_HDRLEN + 4 <= (size_t)r) {
				int32_t e;

				memcpy(&e, f->buf + off + NLMSG_HDRLEN, 4);
				return -e;
			}
			off += NLMSG_ALIGN(h.nlmsg_len);
		}
	}
	return overran ? NLFUZZ_LOST : NLFUZZ_NONE;
}

static void drain(struct nlfuzz *f)
{
	for (;;) {
		ssize_t r = recv(f->fd, f->buf, sizeof(f->buf), MSG_DONTWAIT);

		if (r >= 0)
			f->replies++;
		else if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* else ENOBUFS: the replies overran; keep reading */
	}
}

void *nlfuzz_new(int family, int privileged, unsigned long long seed, long n)
{
	struct nlfuzz *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = nltest_socket();
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	f->family = family;
	f->privileged = privileged;
	f->rng = seed;
	f->n = n;
	return f;
}

/*
 * Make and send messages until one is to be checked: see the top.  The
 * message: a random command (0..8, 0..255, or one of the three most
 * interesting), flags (request, ack, dump, or random), the family mostly
 * (3%: a random one, but never the controller's for a privileged run),
 * the version 1, 0, 2 or 255, fuzz_attrs(); 3% cut short, 2% given a
 * random length.
 */
long nlfuzz_next(void *arg, int *what, int *err, unsigned char *attrs,
		 int *attrs_len)
{
	static const uint16_t flag_set[] = {
		NLM_F_REQUEST, NLM_F_REQUEST | NLM_F_ACK,
		NLM_F_REQUEST | NLM_F_DUMP, 0
	};
	static const uint8_t versions[] = { 1, 1, 0, 2, 255 };
	struct nlfuzz *f = arg;
	unsigned char msg[MAX_MSG];

	if (f->periodic_due) {
		f->periodic_due = 0;
		*what = 2;
		return f->i - 1;
	}
	while (f->i < f->n) {
		long i = f->i++;
		int cmds[] = { (int)rint_(f, 0, 8), (int)rint_(f, 0, 255),
			       MEMTRACK_CMD_GET_TASK, MEMTRACK_CMD_SET_CONFIG,
			       MEMTRACK_CMD_GET_TASKS };
		int cmd = cmds[rint_(f, 0, 4)];
		uint16_t flags = flag_set[rint_(f, 0, 3)];
		int family = f->family, awaited, whole;
		struct nlmsghdr h;
		struct genlmsghdr g = { 0 };
		size_t alen, len;
		double r;

		if (!flags)
			flags = (uint16_t)rnd64(f) | NLM_F_REQUEST;
		if (rfrac(f) >= 0.97)
			family = (int)(rnd64(f) & 0xffff);
		if (f->privileged && family == GENL_ID_CTRL)
			family = f->family;
		alen = fuzz_attrs(f, msg + NLMSG_HDRLEN + GENL_HDRLEN,
				  sizeof(msg) - NLMSG_HDRLEN - GENL_HDRLEN, 0);
		awaited = cmd == MEMTRACK_CMD_SET_CONFIG && family == f->family;
		if (awaited)
			flags |= NLM_F_ACK;
		g.cmd = (uint8_t)cmd;
		g.version = versions[rint_(f, 0, 4)];
		len = NLMSG_HDRLEN + GENL_HDRLEN + alen;
		h = (struct nlmsghdr){ .nlmsg_len = (uint32_t)len,
			.nlmsg_type = (uint16_t)family, .nlmsg_flags = flags,
			.nlmsg_seq = (uint32_t)i };
		memcpy(msg, &h, sizeof(h));
		memcpy(msg + NLMSG_HDRLEN, &g, sizeof(g));
		r = rfrac(f);
		if (r < 0.03) {
			len = (size_t)rint_(f, 0, (long)len);
		} else if (r < 0.05) {
			uint32_t lie = (uint32_t)rnd64(f);

			memcpy(msg, &lie, 4);
		}
		whole = len >= NLMSG_HDRLEN &&
			((struct nlmsghdr *)msg)->nlmsg_len == len;
		if (send(f->fd, msg, len, 0) >= 0)
			f->sent++;
		else
			whole = 0;
		*err = 0;
		if (awaited && whole) {
			*err = wait_reply(f, (uint32_t)i);
			f->replies += *err != NLFUZZ_NONE && *err != NLFUZZ_LOST;
		}
		drain(f);
		f->periodic_due = i % CHECK_EVERY == 0;
		if (awaited && whole) {
			*what = 1;
			*attrs_len = (int)alen;
			memcpy(attrs, msg + NLMSG_HDRLEN + GENL_HDRLEN, alen);
			return i;
		}
		if (f->periodic_due) {
			f->periodic_due = 0;
			*what = 2;
			return i;
		}
	}
	return -1;
}

void nlfuzz_counts(void *arg, long *sent, long *replies)
{
	struct nlfuzz *f = arg;

	*sent = f->sent;
	*replies = f->replies;
}

void nlfuzz_free(void *arg)
{
	struct nlfuzz *f = arg;

	if (f) {
		close(f->fd);
		free(f);
	}
}

struct nlconf {
	int sock, family, cfg;
	uint32_t seq;
	unsigned char buf[1 << 16];
};

void *nlconf_open(int family)
{
	struct nlconf *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->family = family;
	c->sock = nltest_socket();
	c->cfg = open("/proc/memtrack/config", O_RDONLY | O_CLOEXEC);
	if (c->sock < 0 || c->cfg < 0) {
		if (c->sock >= 0)
			close(c->sock);
		if (c->cfg >= 0)
			close(c->cfg);
		free(c);
		return NULL;
	}
	return c;
}

void nlconf_close(void *arg)
{
	struct nlconf *c = arg;

	if (c) {
		close(c->sock);
		close(c->cfg);
		free(c);
	}
}

/* The attribute of type t in [p, end), or NULL. */
static const struct nlattr *find(const unsigned char *p, const unsigned char *end,
				 int t, const unsigned char **next)
{
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const void *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return NULL;
		p += NLA_ALIGN(a->nla_len);
		if ((a->nla_type & NLA_TYPE_MASK) == t) {
			if (next)
				*next = p;
			return a;
		}
	}
	return NULL;
}

static uint32_t nla_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	if (a && a->nla_len >= NLA_HDRLEN + 4)
		memcpy(&v, (const unsigned char *)a + NLA_HDRLEN, 4);
	return v;
}

/* GET_CONFIG's answer as text into out; its length, or -errno. */
static int get_config(struct nlconf *c, char *out, size_t len)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
	} req = { { NLMSG_HDRLEN + GENL_HDRLEN, (uint16_t)c->family,
		    NLM_F_REQUEST | NLM_F_ACK, ++c->seq, 0 },
		  { MEMTRACK_CMD_GET_CONFIG, 1, 0 } };
	const unsigned char *p, *end, *g, *next;
	const struct nlattr *hooks, *grp;
	size_t n = 0;
	ssize_t r;

	if (send(c->sock, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h = (void *)c->buf;

		r = recv(c->sock, c->buf, sizeof(c->buf), 0);
		if (r < 0)
			return -errno;
		if ((size_t)r < NLMSG_HDRLEN || h->nlmsg_seq != c->seq)
			continue;
		if (h->nlmsg_type == NLMSG_ERROR)
			return -EPROTO;		/* an error before any answer */
		break;
	}
	p = c->buf + NLMSG_HDRLEN + GENL_HDRLEN;
	end = c->buf + ((struct nlmsghdr *)c->buf)->nlmsg_len;
	n += (size_t)snprintf(out + n, len - n, "retention_ms %u\n",
			      nla_u32(find(p, end, MEMTRACK_ATTR_RETENTION_MS, NULL)));
	hooks = find(p, end, MEMTRACK_ATTR_HOOKS, NULL);
	if (!hooks)
		return -EPROTO;
	g = (const unsigned char *)hooks + NLA_HDRLEN;
	end = (const unsigned char *)hooks + hooks->nla_len;
	while (n < len && (grp = find(g, end, MEMTRACK_HOOK_ATTR_GROUP, &next))) {
		const unsigned char *gp = (const unsigned char *)grp + NLA_HDRLEN;
		const unsigned char *ge = (const unsigned char *)grp + grp->nla_len;
		const struct nlattr *name = find(gp, ge, MEMTRACK_HOOK_ATTR_NAME, NULL);
		const struct nlattr *en = find(gp, ge, MEMTRACK_HOOK_ATTR_ENABLED, NULL);

		if (!name || !en)
			return -EPROTO;
		n += (size_t)snprintf(out + n, len - n, "%.*s %u %u %u\n",
				      (int)strnlen((const char *)name + NLA_HDRLEN,
						   name->nla_len - NLA_HDRLEN),
				      (const char *)name + NLA_HDRLEN,
				      *((const unsigned char *)en + NLA_HDRLEN),
				      nla_u32(find(gp, ge, MEMTRACK_HOOK_ATTR_ATTACHED, NULL)),
				      nla_u32(find(gp, ge, MEMTRACK_HOOK_ATTR_TOTAL, NULL)));
		g = next;
	}
	/* the ack after the answer */
	r = recv(c->sock, c->buf, sizeof(c->buf), 0);
	return n < len ? (int)n : -ENOSPC;
}

int nlconf_read(void *arg, char *out, int len)
{
	struct nlconf *c = arg;
	ssize_t r = pread(c->cfg, out, (size_t)len - 3, 0);
	int n;

	if (r < 0)
		return -errno;
	memcpy(out + r, "=\n", 2);
	n = get_config(c, out + r + 2, (size_t)len - (size_t)r - 2);
	if (n < 0)
		return n;
	return (int)r + 2 + n;
}
