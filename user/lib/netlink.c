// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the generic netlink family "memtrack".
 *
 * Requests go over one socket (with libnl's sequence checking and automatic
 * ACKs, so a request is done at its ACK, error or NLMSG_DONE); the "events"
 * multicast group gets a socket of its own, read with recv(2) directly so
 * that ENOBUFS (receive buffer overrun) can be told apart from other errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"

#define MT_REQUEST_TIMEOUT_S	10
#define MT_EVENTS_RCVBUF	(4 * 1024 * 1024)
#define MT_EVENTS_RXBUF		(256 * 1024)
#define MT_EVENTS_MAX_MSGS	64	/* datagrams per mt_read_events() */

struct mt_handle {
	struct nl_sock *sk;		/* requests */
	struct nl_sock *ev;		/* events, after mt_subscribe() */
	int family;
	int grp;			/* -1: the family has no "events" */
	uint64_t overruns;
	void *rxbuf;
};

/* A libnl error (NLE_*, either sign) as a negative errno. */
static int nlerr_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_INTR:		return -EINTR;
	case NLE_BAD_SOCK:	return -EBADF;
	case NLE_AGAIN:		return -ETIMEDOUT;	/* SO_RCVTIMEO */
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_EXIST:		return -EEXIST;
	case NLE_INVAL:		return -EINVAL;
	case NLE_RANGE:		return -ERANGE;
	case NLE_MSGSIZE:	return -EMSGSIZE;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_PERM:		return -EPERM;
	case NLE_BUSY:		return -EBUSY;
	case NLE_NODEV:		return -ENODEV;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	default:		return -EIO;
	}
}

static int nl_fail(int nlerr, const char *what)
{
	return mt_seterr(nlerr_errno(nlerr), "netlink: %s: %s", what,
			 nl_geterror(nlerr));
}

static int check_abi(struct mt_handle *h);

struct mt_handle *mt_open(int flags)
{
	struct timeval tv = { .tv_sec = MT_REQUEST_TIMEOUT_S };
	struct mt_handle *h;
	int err;

	if (flags) {
		mt_seterr(-EINVAL, "%s: unknown flags %#x", __func__, flags);
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		mt_seterr(-ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	h->sk = nl_socket_alloc();
	if (!h->sk) {
		err = mt_seterr(-ENOMEM, "out of memory");
		goto fail;
	}
	err = genl_connect(h->sk);
	if (err < 0) {
		err = nl_fail(err, "connecting");
		goto fail;
	}
	setsockopt(nl_socket_get_fd(h->sk), SOL_SOCKET, SO_RCVTIMEO,
		   &tv, sizeof(tv));
	h->family = genl_ctrl_resolve(h->sk, MEMTRACK_GENL_NAME);
	if (h->family < 0) {
		if (h->family == -NLE_OBJ_NOTFOUND)
			err = mt_seterr(-ENOENT,
					"memtrack.ko is not loaded (no generic netlink family \"%s\"; %s)",
					MEMTRACK_GENL_NAME, MT_MODULE_HINT);
		else
			err = nl_fail(h->family, "resolving family \"memtrack\"");
		goto fail;
	}
	h->grp = genl_ctrl_resolve_grp(h->sk, MEMTRACK_GENL_NAME,
				       MEMTRACK_GENL_MCGRP_EVENTS);
	if (h->grp < 0)
		h->grp = -1;
	err = check_abi(h);
	if (err)
		goto fail;
	return h;
fail:
	mt_close(h);
	errno = -err;
	return NULL;
}

void mt_close(struct mt_handle *h)
{
	if (!h)
		return;
	nl_socket_free(h->sk);		/* NULL is fine */
	nl_socket_free(h->ev);
	free(h->rxbuf);
	free(h);
}

/* ---- requests ------------------------------------------------------------- */

static struct nla_policy attr_policy[MEMTRACK_ATTR_MAX + 1] = {
	[MEMTRACK_ATTR_PID] = { .type = NLA_U32 },
	[MEMTRACK_ATTR_TGID] = { .type = NLA_U32 },
	[MEMTRACK_ATTR_RETENTION_MS] = { .type = NLA_U32 },
	[MEMTRACK_ATTR_HOOKS] = { .type = NLA_NESTED },
	[MEMTRACK_ATTR_ABI_VERSION] = { .type = NLA_U32 },
};

static struct nla_policy hook_policy[MEMTRACK_HOOK_ATTR_MAX + 1] = {
	[MEMTRACK_HOOK_ATTR_NAME] = { .type = NLA_STRING },
	[MEMTRACK_HOOK_ATTR_ENABLED] = { .type = NLA_U8 },
	[MEMTRACK_HOOK_ATTR_ATTACHED] = { .type = NLA_U32 },
	[MEMTRACK_HOOK_ATTR_TOTAL] = { .type = NLA_U32 },
};

static int req_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[MEMTRACK_ATTR_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct req *r = arg;
	int err;

	if (nlh->nlmsg_type != r->h->family)
		return NL_SKIP;
	err = genlmsg_parse(nlh, 0, tb, MEMTRACK_ATTR_MAX, attr_policy);
	if (err < 0) {
		if (!r->err)
			r->err = mt_seterr(-EBADMSG, "netlink: malformed reply: %s",
					   nl_geterror(err));
		return NL_SKIP;
	}
	if (!r->err && r->parse) {
		err = r->parse(r, tb);
		if (err < 0)
			r->err = err;
	}
	return NL_OK;
}

static int req_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct req *r = arg;
	int e;

	/* a dump that failed part way carries its error in NLMSG_DONE */
	if (nlmsg_datalen(nlh) >= (int)sizeof(int)) {
		memcpy(&e, nlmsg_data(nlh), sizeof(e));
		if (e < 0 && !r->err)
			r->err = mt_seterr(e, "memtrack.ko: %s", strerror(-e));
	}
	r->done = true;
	return NL_STOP;
}

static int req_ack(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

static int req_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;

	(void)nla;
	if (e->error < 0 && !r->err)
		r->err = mt_seterr(e->error, "memtrack.ko: %s",
				   strerror(-e->error));
	r->done = true;
	return NL_STOP;
}

struct nl_msg *req_msg(struct mt_handle *h, int cmd, int flags)
{
	return req_msg_size(h, cmd, flags, 0);
}

struct nl_msg *req_msg_size(struct mt_handle *h, int cmd, int flags,
			    size_t size)
{
	struct nl_msg *msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, h->family, 0, flags,
			 cmd, MEMTRACK_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct nl_msg *req_tgid_msg(struct mt_handle *h, int cmd, int flags,
			    pid_t pid, size_t size)
{
	struct nl_msg *msg = req_msg_size(h, cmd, flags, size);

	if (msg && nla_put_u32(msg, MEMTRACK_ATTR_TGID, (uint32_t)pid) < 0) {
		nlmsg_free(msg);
		msg = NULL;
	}
	if (!msg)
		mt_seterr(-ENOMEM, "out of memory");
	return msg;
}

/* Send msg (consumed) and collect replies until ACK, error or DONE. */
int req_run(struct mt_handle *h, struct nl_msg *msg, struct req *r)
{
	struct nl_cb *cb, *sk_cb;
	int err;

	r->h = h;
	r->err = 0;
	r->done = false;
	/* nl_socket_get_cb() takes a reference: kept, the socket's
	 * callbacks outlived nl_socket_free() (224 bytes a handle) */
	sk_cb = nl_socket_get_cb(h->sk);
	cb = nl_cb_clone(sk_cb);
	nl_cb_put(sk_cb);
	if (!cb) {
		nlmsg_free(msg);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, req_valid, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, req_finish, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, req_ack, r);
	nl_cb_err(cb, NL_CB_CUSTOM, req_error, r);

	err = nl_send_auto(h->sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		nl_cb_put(cb);
		return nl_fail(err, "send");
	}
	while (!r->done) {
		err = nl_recvmsgs(h->sk, cb);
		if (err < 0 && !r->done) {
			if (!r->err)
				r->err = nl_fail(err, "receive");
			break;
		}
	}
	nl_cb_put(cb);
	return r->err;
}

int req_get_struct(struct nlattr *a, void *dst, size_t size,
		      const char *what)
{
	if (!a)
		return mt_seterr(-EBADMSG, "netlink: reply without %s", what);
	if ((size_t)nla_len(a) < size)
		return mt_seterr(-EBADMSG,
				 "netlink: %s of %d bytes, expected at least %zu",
				 what, nla_len(a), size);
	memcpy(dst, nla_data(a), size);
	return 0;
}

struct one {
	void *p;
	bool got;
};

static int parse_summary(struct req *r, struct nlattr **tb)
{
	struct one *o = r->arg;
	int err;

	err = req_get_struct(tb[MEMTRACK_ATTR_SUMMARY], o->p,
			 sizeof(struct memtrack_summary), "summary");
	if (!err)
		o->got = true;
	return err;
}

int mt_get_summary(struct mt_handle *h, struct memtrack_summary *s)
{
	struct one o = { .p = s };
	struct req r = { .parse = parse_summary, .arg = &o };
	struct nl_msg *msg;
	int err;

	memset(s, 0, sizeof(*s));
	msg = req_msg(h, MEMTRACK_CMD_GET_SUMMARY, 0);
	if (!msg)
		return mt_seterr(-ENOMEM, "out of memory");
	err = req_run(h, msg, &r);
	if (!err && !o.got)
		err = mt_seterr(-EBADMSG, "netlink: no summary in the reply");
	return err;
}

/*
 * A module of another release lays its structures out otherwise (ABI 2
 * moved struct memtrack_task's counters to its end): refuse it at open,
 * as the ring's GET_VERSION does, rather than misread its rows.
 */
static int check_abi(struct mt_handle *h)
{
	struct memtrack_summary s;
	int err = mt_get_summary(h, &s);

	if (err)
		return err;
	if (s.abi_version != MEMTRACK_ABI_VERSION)
		return mt_seterr(-EPROTO,
				 "memtrack.ko speaks ABI version %u, this program %u: load this release's (rmmod memtrack; modprobe memtrack)",
				 s.abi_version, MEMTRACK_ABI_VERSION);
	return 0;
}

static int parse_task(struct req *r, struct nlattr **tb)
{
	struct one *o = r->arg;
	int err;

	err = req_get_struct(tb[MEMTRACK_ATTR_TASK], o->p,
			 sizeof(struct memtrack_task), "task");
	if (!err)
		o->got = true;
	return err;
}

int mt_get_task(struct mt_handle *h, pid_t pid, bool thread,
		struct memtrack_task *t)
{
	struct one o = { .p = t };
	struct req r = { .parse = parse_task, .arg = &o };
	struct nl_msg *msg;
	int err;

	msg = req_msg(h, MEMTRACK_CMD_GET_TASK, 0);
	if (!msg)
		return mt_seterr(-ENOMEM, "out of memory");
	if (nla_put_u32(msg, MEMTRACK_ATTR_PID, pid) < 0 ||
	    (thread && nla_put_flag(msg, MEMTRACK_ATTR_THREAD) < 0)) {
		nlmsg_free(msg);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	err = req_run(h, msg, &r);
	if (!err && !o.got)
		err = mt_seterr(-EBADMSG, "netlink: no task in the reply");
	return err;
}

struct task_list {
	struct memtrack_task *v;
	size_t n, cap;
};

static int parse_task_row(struct req *r, struct nlattr **tb)
{
	struct task_list *l = r->arg;

	if (mt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256))
		return mt_seterr(-ENOMEM, "out of memory");
	if (req_get_struct(tb[MEMTRACK_ATTR_TASK], &l->v[l->n], sizeof(*l->v),
		       "task") < 0)
		return -EBADMSG;
	l->n++;
	return 0;
}

static int dump(struct mt_handle *h, struct nl_msg *msg,
		struct memtrack_task **out, size_t *n)
{
	struct task_list l = { 0 };
	struct req r = { .parse = parse_task_row, .arg = &l };
	int err;

	err = req_run(h, msg, &r);
	if (err) {
		free(l.v);
		*out = NULL;
		*n = 0;
		return err;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int mt_dump_tasks(struct mt_handle *h, const struct mt_task_filter *f,
		  struct memtrack_task **out, size_t *n)
{
	struct nl_msg *msg;

	*out = NULL;
	*n = 0;
	if (f && f->tgid && f->comm)
		return mt_seterr(-EINVAL, "filter by tgid or by comm, not both");
	if (f && f->comm && strlen(f->comm) >= MEMTRACK_COMM_LEN)
		return mt_seterr(-EINVAL, "comm '%s' longer than %d characters",
				 f->comm, MEMTRACK_COMM_LEN - 1);
	msg = req_msg(h, MEMTRACK_CMD_GET_TASKS, NLM_F_DUMP);
	if (!msg)
		return mt_seterr(-ENOMEM, "out of memory");
	if ((f && f->tgid && nla_put_u32(msg, MEMTRACK_ATTR_TGID, f->tgid) < 0) ||
	    (f && f->comm && nla_put_string(msg, MEMTRACK_ATTR_COMM, f->comm) < 0)) {
		nlmsg_free(msg);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	return dump(h, msg, out, n);
}

int mt_dump_threads(struct mt_handle *h, pid_t tgid,
		    struct memtrack_task **out, size_t *n)
{
	struct nl_msg *msg;

	*out = NULL;
	*n = 0;
	msg = req_tgid_msg(h, MEMTRACK_CMD_GET_THREADS, NLM_F_DUMP, tgid, 0);
	if (!msg)
		return -ENOMEM;
	return dump(h, msg, out, n);
}

/* ---- config ------------------------------------------------------------------- */

static int parse_config(struct req *r, struct nlattr **tb)
{
	struct mt_config *c = r->arg;
	struct nlattr *pos;
	int rem;

	if (tb[MEMTRACK_ATTR_RETENTION_MS])
		c->retention_ms = nla_get_u32(tb[MEMTRACK_ATTR_RETENTION_MS]);
	if (!tb[MEMTRACK_ATTR_HOOKS])
		return 0;
	nla_for_each_nested(pos, tb[MEMTRACK_ATTR_HOOKS], rem) {
		struct nlattr *g[MEMTRACK_HOOK_ATTR_MAX + 1];
		struct mt_hook_group *hg;

		if (nla_type(pos) != MEMTRACK_HOOK_ATTR_GROUP)
			continue;
		if (nla_parse_nested(g, MEMTRACK_HOOK_ATTR_MAX, pos,
				     hook_policy) < 0 ||
		    !g[MEMTRACK_HOOK_ATTR_NAME])
			return mt_seterr(-EBADMSG, "netlink: malformed hook group");
		if (c->nr_hooks == MT_MAX_HOOK_GROUPS)
			break;
		hg = &c->hooks[c->nr_hooks++];
		nla_strlcpy(hg->name, g[MEMTRACK_HOOK_ATTR_NAME], sizeof(hg->name));
		if (g[MEMTRACK_HOOK_ATTR_ENABLED])
			hg->enabled = nla_get_u8(g[MEMTRACK_HOOK_ATTR_ENABLED]);
		if (g[MEMTRACK_HOOK_ATTR_ATTACHED])
			hg->attached = nla_get_u32(g[MEMTRACK_HOOK_ATTR_ATTACHED]);
		if (g[MEMTRACK_HOOK_ATTR_TOTAL])
			hg->total = nla_get_u32(g[MEMTRACK_HOOK_ATTR_TOTAL]);
	}
	return 0;
}

int mt_get_config(struct mt_handle *h, struct mt_config *c)
{
	struct req r = { .parse = parse_config, .arg = c };
	struct nl_msg *msg;

	memset(c, 0, sizeof(*c));
	c->retention_ms = -1;
	msg = req_msg(h, MEMTRACK_CMD_GET_CONFIG, 0);
	if (!msg)
		return mt_seterr(-ENOMEM, "out of memory");
	return req_run(h, msg, &r);
}

int mt_set_config(struct mt_handle *h, const struct mt_config *c)
{
	struct req r = { 0 };
	struct nl_msg *msg;
	struct nlattr *hooks, *grp;
	size_t i;

	if (c->retention_ms > UINT32_MAX)
		return mt_seterr(-EINVAL, "retention_ms %lld out of range",
				 (long long)c->retention_ms);
	if (c->nr_hooks > MT_MAX_HOOK_GROUPS)
		return mt_seterr(-EINVAL, "too many hook groups");
	msg = req_msg(h, MEMTRACK_CMD_SET_CONFIG, 0);
	if (!msg)
		return mt_seterr(-ENOMEM, "out of memory");
	if (c->retention_ms >= 0 &&
	    nla_put_u32(msg, MEMTRACK_ATTR_RETENTION_MS, c->retention_ms) < 0)
		goto nomem;
	if (c->nr_hooks) {
		hooks = nla_nest_start(msg, MEMTRACK_ATTR_HOOKS);
		if (!hooks)
			goto nomem;
		for (i = 0; i < c->nr_hooks; i++) {
			grp = nla_nest_start(msg, MEMTRACK_HOOK_ATTR_GROUP);
			if (!grp ||
			    nla_put_string(msg, MEMTRACK_HOOK_ATTR_NAME,
					   c->hooks[i].name) < 0 ||
			    nla_put_u8(msg, MEMTRACK_HOOK_ATTR_ENABLED,
				       c->hooks[i].enabled) < 0)
				goto nomem;
			nla_nest_end(msg, grp);
		}
		nla_nest_end(msg, hooks);
	}
	return req_run(h, msg, &r);
nomem:
	nlmsg_free(msg);
	return mt_seterr(-ENOMEM, "netlink: SET_CONFIG message too large");
}

/* ---- events ---------------------------------------------------------------- */

int mt_subscribe(struct mt_handle *h)
{
	int err, bufsize = MT_EVENTS_RCVBUF;

	if (h->ev)
		return 0;
	if (h->grp < 0)
		return mt_seterr(-ENOENT,
				 "memtrack.ko has no \"%s\" multicast group",
				 MEMTRACK_GENL_MCGRP_EVENTS);
	h->rxbuf = malloc(MT_EVENTS_RXBUF);
	h->ev = nl_socket_alloc();
	if (!h->rxbuf || !h->ev) {
		err = mt_seterr(-ENOMEM, "out of memory");
		goto fail;
	}
	nl_socket_disable_seq_check(h->ev);
	err = genl_connect(h->ev);
	if (err < 0) {
		err = nl_fail(err, "connecting");
		goto fail;
	}
	/* SO_RCVBUF is capped by net.core.rmem_max; root may go past it */
	err = nl_socket_set_buffer_size(h->ev, MT_EVENTS_RCVBUF, 0);
	if (err < 0) {
		err = nl_fail(err, "setting the receive buffer");
		goto fail;
	}
	setsockopt(nl_socket_get_fd(h->ev), SOL_SOCKET, SO_RCVBUFFORCE,
		   &bufsize, sizeof(bufsize));
	err = nl_socket_add_membership(h->ev, h->grp);
	if (err < 0) {
		err = nl_fail(err, "joining the events group");
		goto fail;
	}
	err = nl_socket_set_nonblocking(h->ev);
	if (err < 0) {
		err = nl_fail(err, "O_NONBLOCK");
		goto fail;
	}
	return 0;
fail:
	nl_socket_free(h->ev);
	h->ev = NULL;
	free(h->rxbuf);
	h->rxbuf = NULL;
	return err;
}

int mt_events_fd(struct mt_handle *h)
{
	return h->ev ? nl_socket_get_fd(h->ev) : -EBADF;
}

uint64_t mt_events_overruns(struct mt_handle *h)
{
	return h->overruns;
}

/* Walk one datagram's messages; returns records, or < 0; *stop if cb said so. */
static int events_parse(struct mt_handle *h, void *buf, int len,
			mt_record_cb cb, void *arg, bool *stop)
{
	struct nlmsghdr *nlh;
	int rem = len, total = 0;

	for (nlh = buf; nlmsg_ok(nlh, rem); nlh = nlmsg_next(nlh, &rem)) {
		struct nlattr *tb[MEMTRACK_ATTR_MAX + 1];
		struct nlattr *a;
		int n, err;

		if (nlh->nlmsg_type != h->family)
			continue;	/* NOOP, DONE, anything else */
		err = genlmsg_parse(nlh, 0, tb, MEMTRACK_ATTR_MAX, attr_policy);
		if (err < 0)
			return mt_seterr(-EBADMSG, "netlink: malformed event: %s",
					 nl_geterror(err));
		if (genlmsg_hdr(nlh)->cmd != MEMTRACK_CMD_EVENT)
			continue;
		a = tb[MEMTRACK_ATTR_RECORDS];
		if (!a)
			continue;
		n = mt_walk_records(nla_data(a), nla_len(a), cb, arg);
		if (n < 0)
			return n;
		total += n;
		if (*stop)
			break;
	}
	return total;
}

struct ev_ctx {
	mt_record_cb cb;
	void *arg;
	bool stop;
};

static int ev_cb(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct ev_ctx *c = arg;
	int ret = c->cb(rec, c->arg);

	if (ret > 0)
		c->stop = true;
	return ret;
}

int mt_read_events(struct mt_handle *h, mt_record_cb cb, void *arg)
{
	struct ev_ctx c = { .cb = cb, .arg = arg };
	int fd, i, total = 0;

	if (!h->ev)
		return mt_seterr(-EINVAL, "%s: not subscribed", __func__);
	fd = nl_socket_get_fd(h->ev);
	for (i = 0; i < MT_EVENTS_MAX_MSGS && !c.stop; i++) {
		ssize_t len;
		int n;

		len = recv(fd, h->rxbuf, MT_EVENTS_RXBUF, MSG_DONTWAIT | MSG_TRUNC);
		if (len < 0) {
			if (errno == EAGAIN)
				break;
			if (errno == ENOBUFS) {
				h->overruns++;
				continue;
			}
			if (errno == EINTR && total)
				break;
			return mt_seterr(-errno, "netlink: receive: %s",
					 strerror(errno));
		}
		if (len > MT_EVENTS_RXBUF) {
			/* cut short: its records are lost */
			h->overruns++;
			continue;
		}
		n = events_parse(h, h->rxbuf, len, ev_cb, &c, &c.stop);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}
