// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer's commands: LEAK_ATTACH, LEAK_ARM, LEAK_DETACH,
 * LEAK_UNWIND, LEAK_STATS, and the LEAK_STACKS and LEAK_BLOCKS dumps.  They parse the
 * request and build the reply; the sessions (leak_session.c) do the rest
 * and check ptrace-like permission themselves.
 *
 * Apart from the family (netlink.c): the tracer's attributes and their
 * nest policies are its own, and the rest of the family knows nothing of
 * them.
 */
#include <linux/slab.h>
#include <linux/overflow.h>
#include "mtr.h"
#include "compat.h"
#include "leak.h"
#include "netlink.h"

/* A PROBE nest of LEAK_PROBES: PATH, OFFSET, API. */
const struct nla_policy mtr_nl_probe_policy[MEMTRACK_PROBE_ATTR_MAX + 1] = {
	[MEMTRACK_PROBE_ATTR_PATH] = { .type = NLA_NUL_STRING,
				       .len = PATH_MAX - 1 },
	[MEMTRACK_PROBE_ATTR_OFFSET] = { .type = NLA_U64 },
	[MEMTRACK_PROBE_ATTR_API] =
		NLA_POLICY_RANGE(NLA_U32, 1, __MEMTRACK_API_MAX - 1),
};

/* LEAK_UNWIND: one chunk of a mapping's unwind table (leak_unwind.c). */
static struct netlink_range_validation mtr_unwind_rows_range = {
	.min = 1,
	.max = MEMTRACK_UNWIND_MAX_ROWS,
};

const struct nla_policy mtr_nl_unwind_policy[MEMTRACK_UNWIND_ATTR_MAX + 1] = {
	[MEMTRACK_UNWIND_ATTR_START] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_END] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_BIAS] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_NR_ROWS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mtr_unwind_rows_range),
	[MEMTRACK_UNWIND_ATTR_FIRST_ROW] = { .type = NLA_U32 },
	[MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_ROWS] = { .type = NLA_BINARY,
					.len = MEMTRACK_UNWIND_MAX_CHUNK *
					       sizeof(struct memtrack_unwind_row) },
};

/* One probe nest; the policy has checked types, lengths and ranges. */
static int mtr_parse_probe(const struct nlattr *nest,
			   struct mtr_leak_probe_req *r,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[MEMTRACK_PROBE_ATTR_MAX + 1];
	int err;

	err = nla_parse_nested(tb, MEMTRACK_PROBE_ATTR_MAX, nest,
			       mtr_nl_probe_policy, extack);
	if (err)
		return err;
	if (!tb[MEMTRACK_PROBE_ATTR_PATH] || !tb[MEMTRACK_PROBE_ATTR_OFFSET] ||
	    !tb[MEMTRACK_PROBE_ATTR_API]) {
		NL_SET_ERR_MSG_ATTR(extack, nest,
				    "probe needs PATH, OFFSET and API");
		return -EINVAL;
	}
	r->path = nla_data(tb[MEMTRACK_PROBE_ATTR_PATH]);
	r->offset = nla_get_u64(tb[MEMTRACK_PROBE_ATTR_OFFSET]);
	r->api = nla_get_u32(tb[MEMTRACK_PROBE_ATTR_API]);
	return 0;
}

int mtr_nl_leak_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *flags = info->attrs[MEMTRACK_ATTR_LEAK_FLAGS];
	struct mtr_leak_probe_req *req;
	unsigned int nr = 0;
	struct nlattr *nest;
	int rem, err = 0;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID) ||
	    GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_LEAK_PROBES))
		return -EINVAL;
	req = kcalloc(MTR_LEAK_MAX_PROBES, sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	nla_for_each_nested(nest, info->attrs[MEMTRACK_ATTR_LEAK_PROBES], rem) {
		if (nr == MTR_LEAK_MAX_PROBES) {
			NL_SET_ERR_MSG_ATTR(info->extack, nest, "too many probes");
			err = -E2BIG;
			goto out;
		}
		err = mtr_parse_probe(nest, &req[nr++], info->extack);
		if (err)
			goto out;
	}
	err = mtr_leak_attach(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]),
			      req, nr, flags ? nla_get_u32(flags) : 0,
			      genl_info_net(info), info->snd_portid,
			      info->extack);
out:
	kfree(req);
	return err;
}

int mtr_nl_leak_arm(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID))
		return -EINVAL;
	return mtr_leak_arm(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]),
			    info->extack);
}

int mtr_nl_leak_detach(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID))
		return -EINVAL;
	err = mtr_leak_detach(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]));
	if (err)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MEMTRACK_ATTR_TGID],
				    "process not traced by this user");
	return err;
}

int mtr_nl_leak_unwind(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MEMTRACK_UNWIND_ATTR_MAX + 1], *rows;
	struct mtr_unwind_chunk c;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID) ||
	    GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_LEAK_UNWIND))
		return -EINVAL;
	err = nla_parse_nested(tb, MEMTRACK_UNWIND_ATTR_MAX,
			       info->attrs[MEMTRACK_ATTR_LEAK_UNWIND],
			       mtr_nl_unwind_policy, info->extack);
	if (err)
		return err;
	memset(&c, 0, sizeof(c));
	if (!tb[MEMTRACK_UNWIND_ATTR_START] || !tb[MEMTRACK_UNWIND_ATTR_END] ||
	    !tb[MEMTRACK_UNWIND_ATTR_BIAS]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[MEMTRACK_ATTR_LEAK_UNWIND],
				    "unwind needs START, END and BIAS");
		return -EINVAL;
	}
	c.start = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_START]);
	c.end = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_END]);
	c.bias = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_BIAS]);
	if (tb[MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR]) {
		if (tb[MEMTRACK_UNWIND_ATTR_NR_ROWS] ||
		    tb[MEMTRACK_UNWIND_ATTR_FIRST_ROW] ||
		    tb[MEMTRACK_UNWIND_ATTR_ROWS]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    tb[MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR],
					    "unwind: EH_FRAME_HDR or rows, not both");
			return -EINVAL;
		}
		c.eh_frame_hdr =
			nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR]);
		if (!c.eh_frame_hdr) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    tb[MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR],
					    "unwind: EH_FRAME_HDR is 0");
			return -EINVAL;
		}
		goto set;
	}
	if (!tb[MEMTRACK_UNWIND_ATTR_NR_ROWS] ||
	    !tb[MEMTRACK_UNWIND_ATTR_FIRST_ROW] || !tb[MEMTRACK_UNWIND_ATTR_ROWS]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[MEMTRACK_ATTR_LEAK_UNWIND],
				    "unwind needs NR_ROWS, FIRST_ROW and ROWS, or EH_FRAME_HDR");
		return -EINVAL;
	}
	rows = tb[MEMTRACK_UNWIND_ATTR_ROWS];
	if (nla_len(rows) % sizeof(struct memtrack_unwind_row)) {
		NL_SET_ERR_MSG_ATTR(info->extack, rows,
				    "unwind: ROWS is not a whole number of rows");
		return -EINVAL;
	}
	c.nr_rows = nla_get_u32(tb[MEMTRACK_UNWIND_ATTR_NR_ROWS]);
	c.first_row = nla_get_u32(tb[MEMTRACK_UNWIND_ATTR_FIRST_ROW]);
	c.nr = nla_len(rows) / sizeof(struct memtrack_unwind_row);
	c.rows = nla_data(rows);
set:
	return mtr_leak_set_unwind(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]),
				   &c, info->extack);
}

int mtr_nl_leak_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct memtrack_leak_stats st;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID))
		return -EINVAL;
	err = mtr_leak_get_stats(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]),
				 &st);
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MEMTRACK_ATTR_TGID],
				    "process not traced by this user");
		return err;
	}
	msg = genlmsg_new(nla_total_size_64bit(sizeof(st)), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = mtr_nl_reply_put(msg, info, MEMTRACK_CMD_LEAK_STATS);
	if (!hdr || nla_put_64bit(msg, MEMTRACK_ATTR_LEAK_STATS, sizeof(st),
				  &st, MEMTRACK_ATTR_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * The whole answer is taken at .start, in one pass under the session's
 * lock, so that it is consistent and a detach during the dump is harmless.
 */
int mtr_nl_leak_stacks_start(struct netlink_callback *cb)
{
	struct nlattr **attrs = mtr_genl_dump_attrs(cb);
	struct nlattr *age = attrs[MEMTRACK_ATTR_MIN_AGE_MS];
	struct mtr_leak_snap *snap;
	int err;

	if (!attrs[MEMTRACK_ATTR_TGID]) {
		NL_SET_ERR_MSG(cb->extack, "TGID required");
		return -EINVAL;
	}
	err = mtr_leak_snapshot(nla_get_u32(attrs[MEMTRACK_ATTR_TGID]),
				age ? (u64)nla_get_u32(age) * NSEC_PER_MSEC : 0,
				nla_get_flag(attrs[MEMTRACK_ATTR_LEAK_ALL]), &snap);
	if (err) {
		NL_SET_ERR_MSG(cb->extack, "process not traced by this user");
		return err;
	}
	cb->args[0] = (unsigned long)snap;
	return 0;
}

int mtr_nl_leak_stacks_done(struct netlink_callback *cb)
{
	kvfree((void *)cb->args[0]);
	return 0;
}

int mtr_nl_leak_stacks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_leak_snap *snap = (void *)cb->args[0];
	struct memtrack_leak_stack *rec;
	size_t len;
	void *hdr;

	while (snap->pos < snap->len) {
		rec = (void *)&snap->data[snap->pos];
		len = struct_size(rec, frames, rec->nr_frames);
		hdr = mtr_nl_dump_put(skb, cb, MEMTRACK_CMD_LEAK_STACKS);
		if (!hdr)
			break;
		if (nla_put_64bit(skb, MEMTRACK_ATTR_LEAK_STACK, len, rec,
				  MEMTRACK_ATTR_PAD)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		snap->pos += len;
	}
	return skb->len;
}

/* Like LEAK_STACKS: the whole table is copied at .start. */
int mtr_nl_leak_blocks_start(struct netlink_callback *cb)
{
	struct nlattr **attrs = mtr_genl_dump_attrs(cb);
	struct mtr_leak_snap *snap;
	int err;

	if (!attrs[MEMTRACK_ATTR_TGID]) {
		NL_SET_ERR_MSG(cb->extack, "TGID required");
		return -EINVAL;
	}
	err = mtr_leak_blocks_snapshot(nla_get_u32(attrs[MEMTRACK_ATTR_TGID]),
				       &snap);
	if (err) {
		NL_SET_ERR_MSG(cb->extack, "process not traced by this user");
		return err;
	}
	cb->args[0] = (unsigned long)snap;
	return 0;
}

/* As many whole blocks per message as the skb has room for. */
int mtr_nl_leak_blocks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_leak_snap *snap = (void *)cb->args[0];
	const size_t one = sizeof(struct memtrack_leak_block);
	size_t len;
	int room;
	void *hdr;

	while (snap->pos < snap->len) {
		hdr = mtr_nl_dump_put(skb, cb, MEMTRACK_CMD_LEAK_BLOCKS);
		if (!hdr)
			break;
		room = skb_tailroom(skb) - nla_total_size_64bit(0);
		len = room > 0 ? min_t(size_t, snap->len - snap->pos,
				       rounddown(room, one)) : 0;
		if (!len || nla_put_64bit(skb, MEMTRACK_ATTR_LEAK_BLOCKS, len,
					  &snap->data[snap->pos],
					  MEMTRACK_ATTR_PAD)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		snap->pos += len;
	}
	return skb->len;
}
