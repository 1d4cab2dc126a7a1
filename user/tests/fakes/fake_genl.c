// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim standing in for memtrack.ko's leak tracer commands, for
 * testing memtrack-leak end to end without the module: sendmsg(2) and
 * recvmsg(2) on netlink sockets are answered here.
 *
 *  - nlctrl GETFAMILY "memtrack" -> family id 0x7e (no multicast groups);
 *  - LEAK_ATTACH: ACK, or the error in $MT_FAKE_ATTACH_ERR (e.g. -1: EPERM);
 *    logs "attach tgid=N probes=N" and each probe "probe PATH OFF API";
 *  - LEAK_STACKS (dump): two stacks whose frames are $MT_FAKE_FRAMES1 and
 *    $MT_FAKE_FRAMES2 (comma-separated addresses); dump k (from 1) gives
 *    stack 1: 1000*k bytes in k blocks (malloc), stack 2: 4096 bytes
 *    (new[]); stack 3: new[] with 2 mismatched frees by delete and no
 *    blocks, whose freeing stack is stack 4 ($MT_FAKE_FRAMES1, api delete);
 *    logs "stacks tgid=N min_age=N";
 *  - LEAK_ARM: ACK; logs "arm tgid=N";
 *  - LEAK_STATS: a session still running (nothing counted);
 *  - LEAK_DETACH: ACK; logs "detach tgid=N";
 *  - GET_SUMMARY: a summary of ABI version $MT_FAKE_ABI, by default
 *    MEMTRACK_ABI_VERSION (libmemtrack asks it at every open).
 * The log goes to $MT_FAKE_LOG.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/memtrack.h>

#define FAKE_FAMILY	0x7e
#define QMAX		65536

/* replies waiting: one datagram per message, as the kernel sends an ACK */
static char queue[QMAX];
static size_t qlen;
static int dumps;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("MT_FAKE_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static bool is_netlink(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	       ss.ss_family == AF_NETLINK;
}

/* Start a reply message in the queue; returns it. */
static struct nlmsghdr *put_msg(const struct nlmsghdr *req, int type, int flags)
{
	struct nlmsghdr *n = (struct nlmsghdr *)(queue + qlen);

	memset(n, 0, NLMSG_HDRLEN);
	n->nlmsg_len = NLMSG_HDRLEN;
	n->nlmsg_type = type;
	n->nlmsg_flags = flags;
	n->nlmsg_seq = req->nlmsg_seq;
	n->nlmsg_pid = req->nlmsg_pid;
	return n;
}

static void put_genl(struct nlmsghdr *n, int cmd)
{
	struct genlmsghdr *g = (struct genlmsghdr *)((char *)n + n->nlmsg_len);

	memset(g, 0, GENL_HDRLEN);
	g->cmd = cmd;
	g->version = 1;
	n->nlmsg_len += GENL_HDRLEN;
}

static void put_attr(struct nlmsghdr *n, int type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)n + n->nlmsg_len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	n->nlmsg_len += NLA_ALIGN(a->nla_len);
}

static void end_msg(struct nlmsghdr *n)
{
	qlen += NLMSG_ALIGN(n->nlmsg_len);
}

static void put_ack(const struct nlmsghdr *req, int err)
{
	struct nlmsghdr *n = put_msg(req, NLMSG_ERROR, 0);
	struct nlmsgerr *e = (struct nlmsgerr *)((char *)n + NLMSG_HDRLEN);

	e->error = err;
	e->msg = *req;
	n->nlmsg_len += sizeof(*e);
	end_msg(n);
}

/* First attribute of type in a message's genl payload (or a nest). */
static struct nlattr *find_attr(void *data, int len, int type)
{
	struct nlattr *a;

	for (a = data; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	     a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

#define ADATA(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define ALEN(a)		((int)(a)->nla_len - NLA_HDRLEN)

static uint32_t get_u32(void *p, int len, int type, uint32_t dflt)
{
	struct nlattr *a = find_attr(p, len, type);
	uint32_t v;

	if (!a)
		return dflt;
	memcpy(&v, ADATA(a), 4);
	return v;
}

/* A reply of one struct in attribute attr, then the ACK. */
static void put_reply(const struct nlmsghdr *req, int cmd, int attr,
		      const void *data, size_t len)
{
	struct nlmsghdr *n = put_msg(req, FAKE_FAMILY, 0);

	put_genl(n, cmd);
	put_attr(n, attr, data, len);
	end_msg(n);
	put_ack(req, 0);
}

/* mis: for a stack named by a mismatched free (0 for the others). */
static void put_stack_mis(const struct nlmsghdr *req, uint32_t id,
			  uint64_t bytes, uint64_t blocks, uint32_t api,
			  const char *frames, uint32_t mismatched,
			  uint32_t free_api, uint32_t free_stack_id)
{
	char buf[sizeof(struct memtrack_leak_stack) + 8 * MEMTRACK_LEAK_MAX_FRAMES];
	struct memtrack_leak_stack *s = (void *)buf;
	struct nlmsghdr *n;
	const char *p = frames ? frames : "";
	uint32_t nr = 0;

	memset(buf, 0, sizeof(buf));
	while (*p && nr < MEMTRACK_LEAK_MAX_FRAMES) {
		char *end;
		uint64_t f = strtoull(p, &end, 0);

		if (end == p)
			break;
		memcpy(buf + sizeof(*s) + 8 * nr++, &f, 8);
		p = *end == ',' ? end + 1 : end;
	}
	s->stack_id = id;
	s->nr_frames = nr;
	s->bytes = bytes;
	s->blocks = blocks;
	s->oldest_ns = 1;	/* long ago */
	s->api = api;
	s->mismatched = mismatched;
	s->free_api = free_api;
	s->free_stack_id = free_stack_id;
	if (!blocks)
		s->oldest_ns = 0;
	n = put_msg(req, FAKE_FAMILY, NLM_F_MULTI);
	put_genl(n, MEMTRACK_CMD_LEAK_STACKS);
	put_attr(n, MEMTRACK_ATTR_LEAK_STACK, buf, sizeof(*s) + 8 * nr);
	end_msg(n);
}

static void put_stack(const struct nlmsghdr *req, uint32_t id, uint64_t bytes,
		      uint64_t blocks, uint32_t api, const char *frames)
{
	put_stack_mis(req, id, bytes, blocks, api, frames, 0, 0, 0);
}

static void handle(const struct nlmsghdr *req)
{
	const struct genlmsghdr *g = NLMSG_DATA(req);
	void *attrs = (char *)g + GENL_HDRLEN;
	int alen = req->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	if (req->nlmsg_type == GENL_ID_CTRL && g->cmd == CTRL_CMD_GETFAMILY) {
		struct nlattr *name = find_attr(attrs, alen, CTRL_ATTR_FAMILY_NAME);
		uint16_t id = FAKE_FAMILY;
		struct nlmsghdr *n;

		if (!name || strcmp(ADATA(name), MEMTRACK_GENL_NAME)) {
			put_ack(req, -ENOENT);
			return;
		}
		n = put_msg(req, GENL_ID_CTRL, 0);
		put_genl(n, CTRL_CMD_NEWFAMILY);
		put_attr(n, CTRL_ATTR_FAMILY_ID, &id, sizeof(id));
		put_attr(n, CTRL_ATTR_FAMILY_NAME, MEMTRACK_GENL_NAME,
			 sizeof(MEMTRACK_GENL_NAME));
		end_msg(n);
		put_ack(req, 0);
		return;
	}
	if (req->nlmsg_type != FAKE_FAMILY) {
		put_ack(req, -EOPNOTSUPP);
		return;
	}
	switch (g->cmd) {
	case MEMTRACK_CMD_GET_SUMMARY: {
		const char *abi = getenv("MT_FAKE_ABI");
		struct memtrack_summary sum = {
			.abi_version = abi ? atoi(abi) : MEMTRACK_ABI_VERSION,
		};

		put_reply(req, MEMTRACK_CMD_GET_SUMMARY, MEMTRACK_ATTR_SUMMARY,
			  &sum, sizeof(sum));
		return;
	}
	case MEMTRACK_CMD_LEAK_ATTACH: {
		struct nlattr *probes = find_attr(attrs, alen, MEMTRACK_ATTR_LEAK_PROBES);
		const char *err = getenv("MT_FAKE_ATTACH_ERR");
		struct nlattr *p;
		int rem, nr = 0;

		if (probes) {
			for (p = ADATA(probes), rem = ALEN(probes);
			     rem >= NLA_HDRLEN && p->nla_len >= NLA_HDRLEN;
			     rem -= NLA_ALIGN(p->nla_len),
			     p = (struct nlattr *)((char *)p + NLA_ALIGN(p->nla_len))) {
				struct nlattr *path = find_attr(ADATA(p), ALEN(p),
								MEMTRACK_PROBE_ATTR_PATH);
				struct nlattr *off = find_attr(ADATA(p), ALEN(p),
							       MEMTRACK_PROBE_ATTR_OFFSET);
				uint64_t o = 0;

				if (off)
					memcpy(&o, ADATA(off), 8);
				logf_("probe %s %#llx %u",
				      path ? (char *)ADATA(path) : "?",
				      (unsigned long long)o,
				      get_u32(ADATA(p), ALEN(p), MEMTRACK_PROBE_ATTR_API, 0));
				nr++;
			}
		}
		logf_("attach tgid=%u probes=%d len=%u flags=%u",
		      get_u32(attrs, alen, MEMTRACK_ATTR_TGID, 0), nr,
		      req->nlmsg_len,
		      get_u32(attrs, alen, MEMTRACK_ATTR_LEAK_FLAGS, 0));
		put_ack(req, err ? atoi(err) : 0);
		return;
	}
	case MEMTRACK_CMD_LEAK_ARM:
		logf_("arm tgid=%u", get_u32(attrs, alen, MEMTRACK_ATTR_TGID, 0));
		put_ack(req, 0);
		return;
	case MEMTRACK_CMD_LEAK_STATS: {
		struct memtrack_leak_stats st = { .nr_probes = 1 };

		put_reply(req, MEMTRACK_CMD_LEAK_STATS, MEMTRACK_ATTR_LEAK_STATS,
			  &st, sizeof(st));
		return;
	}
	case MEMTRACK_CMD_LEAK_DETACH:
		logf_("detach tgid=%u", get_u32(attrs, alen, MEMTRACK_ATTR_TGID, 0));
		put_ack(req, 0);
		return;
	case MEMTRACK_CMD_LEAK_STACKS: {
		struct nlmsghdr *n;
		int zero = 0;

		dumps++;
		logf_("stacks tgid=%u min_age=%u",
		      get_u32(attrs, alen, MEMTRACK_ATTR_TGID, 0),
		      get_u32(attrs, alen, MEMTRACK_ATTR_MIN_AGE_MS, 0));
		put_stack(req, 1, 1000ull * dumps, dumps, MEMTRACK_API_MALLOC,
			  getenv("MT_FAKE_FRAMES1"));
		put_stack(req, 2, 4096, 1, MEMTRACK_API_NEW_ARRAY,
			  getenv("MT_FAKE_FRAMES2"));
		/* blocks of new[] freed twice by delete: no blocks left */
		put_stack_mis(req, 3, 0, 0, MEMTRACK_API_NEW_ARRAY,
			      getenv("MT_FAKE_FRAMES2"), 2, MEMTRACK_API_DELETE, 4);
		put_stack(req, 4, 0, 0, MEMTRACK_API_DELETE,
			  getenv("MT_FAKE_FRAMES1"));
		n = put_msg(req, NLMSG_DONE, NLM_F_MULTI);
		memcpy((char *)n + NLMSG_HDRLEN, &zero, sizeof(zero));
		n->nlmsg_len += sizeof(zero);
		end_msg(n);
		return;
	}
	default:
		put_ack(req, -EOPNOTSUPP);
	}
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	char buf[QMAX];
	size_t len = 0, i;
	struct nlmsghdr *n;
	int rem;

	if (!real)
		real = dlsym(RTLD_NEXT, "sendmsg");
	if (!is_netlink(fd))
		return real(fd, msg, flags);
	for (i = 0; i < msg->msg_iovlen; i++) {
		if (len + msg->msg_iov[i].iov_len > sizeof(buf)) {
			errno = EMSGSIZE;
			return -1;
		}
		memcpy(buf + len, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		len += msg->msg_iov[i].iov_len;
	}
	rem = (int)len;
	for (n = (struct nlmsghdr *)buf; NLMSG_OK(n, rem); n = NLMSG_NEXT(n, rem))
		handle(n);
	return (ssize_t)len;
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	struct sockaddr_nl *sa = msg->msg_name;
	size_t room, n, all;

	if (!real)
		real = dlsym(RTLD_NEXT, "recvmsg");
	if (!is_netlink(fd) || !qlen)
		return real(fd, msg, flags);
	if (sa && msg->msg_namelen >= sizeof(*sa)) {
		memset(sa, 0, sizeof(*sa));
		sa->nl_family = AF_NETLINK;
		msg->msg_namelen = sizeof(*sa);
	}
	msg->msg_controllen = 0;
	msg->msg_flags = 0;
	room = msg->msg_iovlen ? msg->msg_iov[0].iov_len : 0;
	all = NLMSG_ALIGN(((struct nlmsghdr *)queue)->nlmsg_len);
	n = all < room ? all : room;
	memcpy(msg->msg_iov[0].iov_base, queue, n);
	if (n < all)
		msg->msg_flags |= MSG_TRUNC;
	if (!(flags & MSG_PEEK)) {
		/* one datagram: what did not fit is lost */
		memmove(queue, queue + all, qlen - all);
		qlen -= all;
	}
	return (ssize_t)((flags & MSG_TRUNC) ? all : n);
}
