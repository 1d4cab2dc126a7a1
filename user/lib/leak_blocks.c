// SPDX-License-Identifier: LGPL-2.1
/* libmemtrack: the LEAK_BLOCKS dump (every outstanding block, for --scan). */
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

struct block_list {
	struct memtrack_leak_block *v;
	size_t n, cap;
};

static int parse_blocks(struct req *r, struct nlattr **tb)
{
	struct block_list *l = r->arg;
	struct nlattr *a = tb[MEMTRACK_ATTR_LEAK_BLOCKS];
	size_t len, k;

	if (!a)
		return mt_seterr(-EBADMSG, "netlink: LEAK_BLOCKS reply without blocks");
	len = (size_t)nla_len(a);
	if (len % sizeof(*l->v))
		return mt_seterr(-EBADMSG,
				 "netlink: LEAK_BLOCKS of %zu bytes, not a multiple of %zu",
				 len, sizeof(*l->v));
	k = len / sizeof(*l->v);
	if (mt_grow((void **)&l->v, &l->cap, l->n + k, sizeof(*l->v), 1024))
		return mt_seterr(-ENOMEM, "out of memory");
	memcpy(&l->v[l->n], nla_data(a), len);
	l->n += k;
	return 0;
}

int mt_leak_blocks(struct mt_handle *h, pid_t pid,
		   struct memtrack_leak_block **out, size_t *n)
{
	struct block_list l = { 0 };
	struct req r = { .parse = parse_blocks, .arg = &l };
	struct nl_msg *msg;
	int err;

	*out = NULL;
	*n = 0;
	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_BLOCKS, NLM_F_DUMP, pid, 0);
	if (!msg)
		return -ENOMEM;
	err = req_leak_run(h, msg, pid, &r);
	if (err) {
		free(l.v);
		return err;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}
