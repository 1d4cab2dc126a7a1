// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the leak tracer's generic netlink commands (LEAK_ATTACH,
 * LEAK_DETACH, the LEAK_STACKS dump).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"

int mt_leak_stack_decode(const void *data, size_t len, struct mt_leak_stack *out)
{
	struct memtrack_leak_stack hdr;

	if (len < sizeof(hdr))
		return mt_seterr(-EBADMSG,
				 "netlink: leak stack of %zu bytes, expected at least %zu",
				 len, sizeof(hdr));
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.nr_frames > MEMTRACK_LEAK_MAX_FRAMES)
		return mt_seterr(-EBADMSG,
				 "netlink: leak stack %u has %u frames, at most %d allowed",
				 hdr.stack_id, hdr.nr_frames,
				 MEMTRACK_LEAK_MAX_FRAMES);
	if (len != sizeof(hdr) + hdr.nr_frames * sizeof(__u64))
		return mt_seterr(-EBADMSG,
				 "netlink: leak stack %u of %zu bytes, %u frames need %zu",
				 hdr.stack_id, len, hdr.nr_frames,
				 sizeof(hdr) + hdr.nr_frames * sizeof(__u64));
	memset(out, 0, sizeof(*out));
	out->stack_id = hdr.stack_id;
	out->nr_frames = hdr.nr_frames;
	out->bytes = hdr.bytes;
	out->blocks = hdr.blocks;
	out->oldest_ns = hdr.oldest_ns;
	out->api = hdr.api;
	out->mismatched = hdr.mismatched;
	out->free_api = hdr.free_api;
	out->free_stack_id = hdr.free_stack_id;
	out->total_allocs = hdr.total_allocs;
	out->total_bytes = hdr.total_bytes;
	out->tgid = (pid_t)hdr.tgid;
	memcpy(out->frames, (const char *)data + sizeof(hdr),
	       hdr.nr_frames * sizeof(__u64));
	return 0;
}

/* The module's EPERM/EACCES and ESRCH, with the reason spelled out. */
int req_leak_run(struct mt_handle *h, struct nl_msg *msg, pid_t pid,
		 struct req *r)
{
	int err = req_run(h, msg, r);

	if (err == -EPERM || err == -EACCES)
		return mt_seterr(err,
				 "permission denied: tracing %d needs the rights of ptrace",
				 (int)pid);
	if (err == -ESRCH)
		return mt_seterr(err, "no such process: %d", (int)pid);
	return err;
}

int mt_leak_attach(struct mt_handle *h, pid_t pid,
		   const struct mt_leak_probe *probes, size_t n, uint32_t flags)
{
	struct req r = { 0 };
	struct nlattr *nest, *p;
	struct nl_msg *msg;
	size_t i, size;

	if (pid <= 0)
		return mt_seterr(-EINVAL, "leak attach: bad pid %d", (int)pid);
	if (!n)
		return mt_seterr(-EINVAL, "leak attach: no probes");
	/* a probe takes its path plus ~40 bytes: more than a page for ~50 */
	size = 256;
	for (i = 0; i < n; i++)
		size += strlen(probes[i].path) + 64;
	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_ATTACH, 0, pid, size);
	if (!msg)
		return -ENOMEM;
	if (flags && nla_put_u32(msg, MEMTRACK_ATTR_LEAK_FLAGS, flags) < 0)
		goto too_big;
	nest = nla_nest_start(msg, MEMTRACK_ATTR_LEAK_PROBES);
	if (!nest)
		goto too_big;
	for (i = 0; i < n; i++) {
		p = nla_nest_start(msg, MEMTRACK_PROBE_ATTR_PROBE);
		if (!p ||
		    nla_put_string(msg, MEMTRACK_PROBE_ATTR_PATH, probes[i].path) < 0 ||
		    nla_put_u64(msg, MEMTRACK_PROBE_ATTR_OFFSET,
				probes[i].offset + probes[i].skip) < 0 ||
		    nla_put_u32(msg, MEMTRACK_PROBE_ATTR_API, probes[i].api) < 0)
			goto too_big;
		nla_nest_end(msg, p);
	}
	nla_nest_end(msg, nest);
	return req_leak_run(h, msg, pid, &r);
too_big:
	nlmsg_free(msg);
	return mt_seterr(-EMSGSIZE, "netlink: LEAK_ATTACH message too large (%zu probes)", n);
}

int mt_leak_detach(struct mt_handle *h, pid_t pid)
{
	struct req r = { 0 };
	struct nl_msg *msg;

	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_DETACH, 0, pid, 0);
	if (!msg)
		return -ENOMEM;
	return req_leak_run(h, msg, pid, &r);
}

/* Puts in the probes of an attach with MEMTRACK_LEAK_F_ARM_LATER. */
int mt_leak_arm(struct mt_handle *h, pid_t pid)
{
	struct req r = { 0 };
	struct nl_msg *msg;

	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_ARM, 0, pid, 0);
	if (!msg)
		return -ENOMEM;
	return req_leak_run(h, msg, pid, &r);
}

struct stats_reply {
	struct memtrack_leak_stats *st;
	bool got;
};

static int parse_stats(struct req *r, struct nlattr **tb)
{
	struct stats_reply *o = r->arg;
	int err = req_get_struct(tb[MEMTRACK_ATTR_LEAK_STATS], o->st,
				 sizeof(*o->st), "leak stats");

	o->got = !err;
	return err;
}

int mt_leak_stats(struct mt_handle *h, pid_t pid,
		  struct memtrack_leak_stats *st)
{
	struct stats_reply o = { .st = st };
	struct req r = { .parse = parse_stats, .arg = &o };
	struct nl_msg *msg;
	int err;

	memset(st, 0, sizeof(*st));
	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_STATS, 0, pid, 0);
	if (!msg)
		return -ENOMEM;
	err = req_leak_run(h, msg, pid, &r);
	if (!err && !o.got)
		err = mt_seterr(-EBADMSG, "netlink: no leak stats in the reply");
	return err;
}

struct stack_list {
	struct mt_leak_stack *v;
	size_t n, cap;
};

static int parse_stack(struct req *r, struct nlattr **tb)
{
	struct stack_list *l = r->arg;
	struct nlattr *a = tb[MEMTRACK_ATTR_LEAK_STACK];

	if (!a)
		return mt_seterr(-EBADMSG, "netlink: LEAK_STACKS reply without a stack");
	if (mt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 64))
		return mt_seterr(-ENOMEM, "out of memory");
	if (mt_leak_stack_decode(nla_data(a), (size_t)nla_len(a), &l->v[l->n]) < 0)
		return -EBADMSG;
	l->n++;
	return 0;
}

int mt_leak_stacks(struct mt_handle *h, pid_t pid, uint32_t min_age_ms,
		   bool all, struct mt_leak_stack **out, size_t *n)
{
	struct stack_list l = { 0 };
	struct req r = { .parse = parse_stack, .arg = &l };
	struct nl_msg *msg;
	int err;

	*out = NULL;
	*n = 0;
	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_STACKS, NLM_F_DUMP, pid, 0);
	if (!msg)
		return -ENOMEM;
	if ((min_age_ms && nla_put_u32(msg, MEMTRACK_ATTR_MIN_AGE_MS, min_age_ms) < 0) ||
	    (all && nla_put_flag(msg, MEMTRACK_ATTR_LEAK_ALL) < 0)) {
		nlmsg_free(msg);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	err = req_leak_run(h, msg, pid, &r);
	if (err) {
		free(l.v);
		return err;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}
