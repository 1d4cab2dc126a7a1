// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "memtrack": the /proc/memtrack files in binary
 * (one attribute per task, no text to parse), configuration, and the
 * "events" multicast group relaying records to whoever listens.
 *
 * A new family: every op is strictly validated against the policies below,
 * so handlers only check what a policy cannot say (required attributes, hook
 * group names).
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include "memtrack.h"
#include "compat.h"
#include "leak.h"

#define MTR_GROUP_NAME_MAX	16
#define MTR_RELAY_INTERVAL	(HZ / 50)
/* Messages per relay pass, so one pass cannot hog the workqueue. */
#define MTR_RELAY_MAX_MSGS	64

enum mtr_mcgrp {
	MTR_MCGRP_EVENTS,
};

static const struct nla_policy mtr_group_policy[MEMTRACK_HOOK_ATTR_MAX + 1] = {
	[MEMTRACK_HOOK_ATTR_NAME] = { .type = NLA_NUL_STRING,
				      .len = MTR_GROUP_NAME_MAX - 1 },
	[MEMTRACK_HOOK_ATTR_ENABLED] = NLA_POLICY_RANGE(NLA_U8, 0, 1),
};

static const struct nla_policy mtr_hooks_policy[MEMTRACK_HOOK_ATTR_MAX + 1] = {
	[MEMTRACK_HOOK_ATTR_GROUP] = NLA_POLICY_NESTED(mtr_group_policy),
};

/* Policy ranges are s16 unless given as a struct (not const before 6.2). */
static struct netlink_range_validation mtr_retention_range = {
	.min = 0,
	.max = MEMTRACK_RETENTION_MS_MAX,
};

/* Leak tracer: LEAK_PROBES holds PROBE nests of PATH, OFFSET, API. */
static const struct nla_policy mtr_probe_policy[MEMTRACK_PROBE_ATTR_MAX + 1] = {
	[MEMTRACK_PROBE_ATTR_PATH] = { .type = NLA_NUL_STRING,
				       .len = PATH_MAX - 1 },
	[MEMTRACK_PROBE_ATTR_OFFSET] = { .type = NLA_U64 },
	[MEMTRACK_PROBE_ATTR_API] =
		NLA_POLICY_RANGE(NLA_U32, 1, __MEMTRACK_API_MAX - 1),
};

static const struct nla_policy mtr_probes_policy[MEMTRACK_PROBE_ATTR_MAX + 1] = {
	[MEMTRACK_PROBE_ATTR_PROBE] = NLA_POLICY_NESTED(mtr_probe_policy),
};

/* LEAK_UNWIND: one chunk of a mapping's unwind table (leak_unwind.c). */
static struct netlink_range_validation mtr_unwind_rows_range = {
	.min = 1,
	.max = MEMTRACK_UNWIND_MAX_ROWS,
};

static const struct nla_policy mtr_unwind_policy[MEMTRACK_UNWIND_ATTR_MAX + 1] = {
	[MEMTRACK_UNWIND_ATTR_START] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_END] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_BIAS] = { .type = NLA_U64 },
	[MEMTRACK_UNWIND_ATTR_NR_ROWS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mtr_unwind_rows_range),
	[MEMTRACK_UNWIND_ATTR_FIRST_ROW] = { .type = NLA_U32 },
	[MEMTRACK_UNWIND_ATTR_ROWS] = { .type = NLA_BINARY,
					.len = MEMTRACK_UNWIND_MAX_CHUNK *
					       sizeof(struct memtrack_unwind_row) },
};

/* Reply-only attributes have no entry: strict validation refuses them. */
static const struct nla_policy mtr_policy[MEMTRACK_ATTR_MAX + 1] = {
	[MEMTRACK_ATTR_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MEMTRACK_ATTR_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MEMTRACK_ATTR_COMM] = { .type = NLA_NUL_STRING,
				 .len = MEMTRACK_COMM_LEN - 1 },
	[MEMTRACK_ATTR_THREAD] = { .type = NLA_FLAG },
	[MEMTRACK_ATTR_RETENTION_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mtr_retention_range),
	[MEMTRACK_ATTR_HOOKS] = NLA_POLICY_NESTED(mtr_hooks_policy),
	[MEMTRACK_ATTR_LEAK_PROBES] = NLA_POLICY_NESTED(mtr_probes_policy),
	[MEMTRACK_ATTR_LEAK_FLAGS] =
		NLA_POLICY_MASK(NLA_U32, MEMTRACK_LEAK_F_CHILDREN),
	[MEMTRACK_ATTR_MIN_AGE_MS] = { .type = NLA_U32 },
	[MEMTRACK_ATTR_LEAK_ALL] = { .type = NLA_FLAG },
	[MEMTRACK_ATTR_LEAK_UNWIND] = NLA_POLICY_NESTED(mtr_unwind_policy),
};

static struct genl_family mtr_genl_family;

/* ---- tasks --------------------------------------------------------------- */

/* A row of /proc/memtrack/tasks or threads, as struct memtrack_task. */
static void mtr_task_from_view(struct memtrack_task *out, pid_t pid, pid_t tgid,
			       const struct mtr_proc_view *v, u32 fail_gfp,
			       bool oom)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->tgid = tgid;
	out->uid = from_kuid_munged(current_user_ns(), v->uid);
	out->threads = v->nr_threads;
	out->exited = v->exited;
	out->detailed = v->detailed;
	memcpy(out->comm, v->comm, min(sizeof(out->comm), sizeof(v->comm)));
	out->comm[sizeof(out->comm) - 1] = '\0';
	mtr_mm_to_abi(&v->mm, &out->mm);
	/* Faults are public (/proc/PID/stat); the rest only for tracers. */
	for (i = 0; i < MTR_NR_COUNTERS; i++)
		if (v->detailed || i == MTR_C_MIN_FLT || i == MTR_C_MAJ_FLT)
			out->counters[i] = v->c[i];
	if (v->detailed) {
		out->fail_gfp = fail_gfp;
		out->oom_victim = oom;
	}
	out->ppid = v->stat.ppid;
	out->cgroup_id = v->stat.cgroup_id;
	out->utime_ns = v->stat.utime_ns;
	out->stime_ns = v->stat.stime_ns;
	out->start_ns = v->stat.start_ns;
}

/* Caller holds rcu_read_lock(). */
static void mtr_task_of_proc(struct memtrack_task *out, struct mtr_proc *p,
			     struct mtr_proc_view *v)
{
	mtr_proc_view(p, v);
	mtr_task_from_view(out, p->tgid, p->tgid, v, READ_ONCE(p->fail_gfp),
			   READ_ONCE(p->oom_victim));
}

/* Caller holds rcu_read_lock(). */
static void mtr_task_of_thread(struct memtrack_task *out, struct mtr_thread *t,
			       struct mtr_proc_view *v)
{
	mtr_thread_view(t, v);
	mtr_task_from_view(out, t->tid, t->proc->tgid, v, READ_ONCE(t->fail_gfp),
			   READ_ONCE(t->proc->oom_victim));
}

/* Room for the struct in the message; filled in place, no copy. */
static struct memtrack_task *mtr_reserve_task(struct sk_buff *skb)
{
	struct nlattr *nla;

	nla = nla_reserve_64bit(skb, MEMTRACK_ATTR_TASK,
				sizeof(struct memtrack_task), MEMTRACK_ATTR_PAD);
	return nla ? nla_data(nla) : NULL;
}

/* Caller holds rcu_read_lock(): the live process, not a retained one. */
static struct mtr_proc *mtr_live_proc(pid_t tgid)
{
	struct mtr_proc *p;

	list_for_each_entry_rcu(p, &mtr_proc_list, node)
		if (p->tgid == tgid && !READ_ONCE(p->exit_ns))
			return p;
	return NULL;
}

/* Fills task from the live process or thread; -ESRCH when not tracked. */
static int mtr_get_task(struct memtrack_task *task, pid_t pid, bool thread)
{
	struct mtr_proc_view *v;
	struct mtr_thread *t;
	struct mtr_proc *p;
	int err = 0;

	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	rcu_read_lock();
	if (thread) {
		t = mtr_thread_find(pid);
		if (t)
			mtr_task_of_thread(task, t, v);
		else
			err = -ESRCH;
	} else {
		p = mtr_live_proc(pid);
		if (p)
			mtr_task_of_proc(task, p, v);
		else
			err = -ESRCH;
	}
	rcu_read_unlock();
	kfree(v);
	return err;
}

static int mtr_nl_get_task(struct sk_buff *skb, struct genl_info *info)
{
	struct memtrack_task *task;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_PID))
		return -EINVAL;
	msg = genlmsg_new(nla_total_size_64bit(sizeof(*task)), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &mtr_genl_family, 0,
				MEMTRACK_CMD_GET_TASK);
	task = hdr ? mtr_reserve_task(msg) : NULL;
	if (!task) {
		err = -EMSGSIZE;
		goto fail;
	}
	err = mtr_get_task(task, nla_get_u32(info->attrs[MEMTRACK_ATTR_PID]),
			   nla_get_flag(info->attrs[MEMTRACK_ATTR_THREAD]));
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MEMTRACK_ATTR_PID],
				    "no such live task tracked");
		goto fail;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
fail:
	nlmsg_free(msg);
	return err;
}

/* ---- dumps ------------------------------------------------------------------ */

/*
 * A dump resumes after the entry it sent last.  cb->args: [0] how many list
 * entries were passed, [1] the last one's list node (compared, never
 * dereferenced unless still on the list), [2] its pid.  The table's hash
 * tells at once whether that entry is still there (a walk from the head for
 * every skb made a dump of 10,000 processes quadratic).  If it was reaped
 * meanwhile, resume by position, as a /proc seq_file would.
 */
enum { MTR_DUMP_IDX, MTR_DUMP_NODE, MTR_DUMP_PID, MTR_DUMP_DONE };

typedef pid_t (*mtr_node_pid_fn)(struct list_head *node);
typedef bool (*mtr_node_listed_fn)(pid_t pid, const struct list_head *node);

/* Caller holds rcu_read_lock(); returns the node to continue after. */
static struct list_head *mtr_dump_resume(struct netlink_callback *cb,
					 struct list_head *head,
					 mtr_node_pid_fn pid_of,
					 mtr_node_listed_fn listed)
{
	struct list_head *pos, *by_idx = head;
	unsigned long i = 0, idx = cb->args[MTR_DUMP_IDX];

	if (!idx)
		return head;
	pos = (struct list_head *)cb->args[MTR_DUMP_NODE];
	if (listed((pid_t)cb->args[MTR_DUMP_PID], pos))
		return pos;
	for (pos = rcu_dereference(list_next_rcu(head)); pos != head;
	     pos = rcu_dereference(list_next_rcu(pos))) {
		i++;
		if ((unsigned long)pos == cb->args[MTR_DUMP_NODE] &&
		    pid_of(pos) == (pid_t)cb->args[MTR_DUMP_PID]) {
			cb->args[MTR_DUMP_IDX] = i;
			return pos;
		}
		if (i == idx)
			by_idx = pos;
	}
	/* Reaped: the position, or the end if the list got that short. */
	if (i < idx)
		return NULL;
	cb->args[MTR_DUMP_IDX] = idx;
	return by_idx;
}

static void mtr_dump_passed(struct netlink_callback *cb, struct list_head *pos,
			    mtr_node_pid_fn pid_of)
{
	cb->args[MTR_DUMP_IDX]++;
	cb->args[MTR_DUMP_NODE] = (unsigned long)pos;
	cb->args[MTR_DUMP_PID] = pid_of(pos);
}

struct mtr_dump_filter {
	pid_t tgid;			/* 0: any */
	const char *comm;		/* NULL: any */
};

static pid_t mtr_proc_node_pid(struct list_head *node)
{
	return list_entry(node, struct mtr_proc, node)->tgid;
}

static pid_t mtr_thread_node_pid(struct list_head *node)
{
	return list_entry(node, struct mtr_thread, node)->tid;
}

static void *mtr_dump_put(struct sk_buff *skb, struct netlink_callback *cb,
			  u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &mtr_genl_family, NLM_F_MULTI, cmd);
}

/* Puts one task message; false when the skb is full. */
static bool mtr_dump_task(struct sk_buff *skb, struct netlink_callback *cb,
			  const struct memtrack_task *task, u8 cmd)
{
	struct memtrack_task *room;
	void *hdr;

	hdr = mtr_dump_put(skb, cb, cmd);
	if (!hdr)
		return false;
	room = mtr_reserve_task(skb);
	if (!room) {
		genlmsg_cancel(skb, hdr);
		return false;
	}
	memcpy(room, task, sizeof(*task));
	genlmsg_end(skb, hdr);
	return true;
}

struct mtr_dump_buf {
	struct memtrack_task task;
	struct mtr_proc_view view;
};

/* Caller holds rcu_read_lock(); false: the entry does not pass the filter. */
static bool mtr_dump_fill_proc(struct mtr_dump_buf *b, struct list_head *pos,
			       const struct mtr_dump_filter *f)
{
	struct mtr_proc *p = list_entry(pos, struct mtr_proc, node);

	if (f->tgid && p->tgid != f->tgid)
		return false;
	mtr_task_of_proc(&b->task, p, &b->view);
	return !f->comm || !strncmp(b->task.comm, f->comm, sizeof(b->task.comm));
}

static bool mtr_dump_fill_thread(struct mtr_dump_buf *b, struct list_head *pos,
				 const struct mtr_dump_filter *f)
{
	struct mtr_thread *t = list_entry(pos, struct mtr_thread, node);

	if (f->tgid && t->proc->tgid != f->tgid)
		return false;
	mtr_task_of_thread(&b->task, t, &b->view);
	return true;
}

typedef bool (*mtr_dump_fill_fn)(struct mtr_dump_buf *b, struct list_head *pos,
				 const struct mtr_dump_filter *f);

static int mtr_dump_list(struct sk_buff *skb, struct netlink_callback *cb,
			 struct list_head *head, mtr_node_pid_fn pid_of,
			 mtr_node_listed_fn listed, mtr_dump_fill_fn fill,
			 const struct mtr_dump_filter *f, u8 cmd)
{
	struct list_head *pos;
	struct mtr_dump_buf *b;

	if (cb->args[MTR_DUMP_DONE])
		return 0;
	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	rcu_read_lock();
	pos = mtr_dump_resume(cb, head, pid_of, listed);
	if (!pos)
		goto done;
	for (pos = rcu_dereference(list_next_rcu(pos)); pos != head;
	     pos = rcu_dereference(list_next_rcu(pos))) {
		if (fill(b, pos, f) && !mtr_dump_task(skb, cb, &b->task, cmd))
			goto out;
		mtr_dump_passed(cb, pos, pid_of);
	}
done:
	cb->args[MTR_DUMP_DONE] = 1;
out:
	rcu_read_unlock();
	kfree(b);
	return skb->len;
}

static void mtr_dump_filter_get(struct netlink_callback *cb,
				struct mtr_dump_filter *f)
{
	struct nlattr **attrs = mtr_genl_dump_attrs(cb);

	f->tgid = attrs[MEMTRACK_ATTR_TGID] ?
		  nla_get_u32(attrs[MEMTRACK_ATTR_TGID]) : 0;
	f->comm = attrs[MEMTRACK_ATTR_COMM] ?
		  nla_data(attrs[MEMTRACK_ATTR_COMM]) : NULL;
}

static int mtr_nl_dump_tasks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_dump_filter f;

	mtr_dump_filter_get(cb, &f);
	return mtr_dump_list(skb, cb, &mtr_proc_list, mtr_proc_node_pid,
			     mtr_proc_listed, mtr_dump_fill_proc, &f,
			     MEMTRACK_CMD_GET_TASKS);
}

/* Refuse a threads dump without TGID before it starts, with an ack. */
static int mtr_nl_threads_start(struct netlink_callback *cb)
{
	if (!mtr_genl_dump_attrs(cb)[MEMTRACK_ATTR_TGID]) {
		NL_SET_ERR_MSG(cb->extack, "TGID required");
		return -EINVAL;
	}
	return 0;
}

static int mtr_nl_dump_threads(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_dump_filter f;

	mtr_dump_filter_get(cb, &f);
	f.comm = NULL;
	return mtr_dump_list(skb, cb, &mtr_thread_list, mtr_thread_node_pid,
			     mtr_thread_listed, mtr_dump_fill_thread, &f,
			     MEMTRACK_CMD_GET_THREADS);
}

/* ---- summary ---------------------------------------------------------------- */

static int mtr_nl_get_summary(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct nlattr *nla;
	void *hdr;

	msg = genlmsg_new(nla_total_size(sizeof(u32)) +
			  nla_total_size_64bit(sizeof(struct memtrack_summary)),
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &mtr_genl_family, 0,
				MEMTRACK_CMD_GET_SUMMARY);
	if (!hdr || nla_put_u32(msg, MEMTRACK_ATTR_ABI_VERSION,
				MEMTRACK_ABI_VERSION))
		goto fail;
	nla = nla_reserve_64bit(msg, MEMTRACK_ATTR_SUMMARY,
				sizeof(struct memtrack_summary),
				MEMTRACK_ATTR_PAD);
	if (!nla)
		goto fail;
	mtr_summary_fill(nla_data(nla));
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
fail:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---- config ------------------------------------------------------------------ */

/* Caller holds mtr_config_lock. */
static int mtr_put_group(struct sk_buff *msg, const struct mtr_hook_group *g)
{
	struct nlattr *nest;

	nest = nla_nest_start(msg, MEMTRACK_HOOK_ATTR_GROUP);
	if (!nest ||
	    nla_put_string(msg, MEMTRACK_HOOK_ATTR_NAME, g->name) ||
	    nla_put_u8(msg, MEMTRACK_HOOK_ATTR_ENABLED, g->enabled) ||
	    nla_put_u32(msg, MEMTRACK_HOOK_ATTR_ATTACHED,
			mtr_hook_group_attached(g)) ||
	    nla_put_u32(msg, MEMTRACK_HOOK_ATTR_TOTAL, mtr_hook_group_size(g)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* Caller holds mtr_config_lock. */
static int mtr_put_config(struct sk_buff *msg)
{
	struct nlattr *hooks;
	unsigned int i;

	if (nla_put_u32(msg, MEMTRACK_ATTR_RETENTION_MS,
			READ_ONCE(mtr_retention_ms)))
		return -EMSGSIZE;
	hooks = nla_nest_start(msg, MEMTRACK_ATTR_HOOKS);
	if (!hooks)
		return -EMSGSIZE;
	for (i = 0; i < mtr_nr_groups; i++)
		if (mtr_put_group(msg, mtr_groups[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, hooks);
	return 0;
}

static int mtr_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &mtr_genl_family, 0,
				MEMTRACK_CMD_GET_CONFIG);
	if (!hdr) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	mutex_lock(&mtr_config_lock);
	err = mtr_put_config(msg);
	mutex_unlock(&mtr_config_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int mtr_parse_group(const struct nlattr *nest, struct mtr_config_req *req,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[MEMTRACK_HOOK_ATTR_MAX + 1];
	int err, g;

	err = nla_parse_nested(tb, MEMTRACK_HOOK_ATTR_MAX, nest,
			       mtr_group_policy, extack);
	if (err)
		return err;
	if (!tb[MEMTRACK_HOOK_ATTR_NAME] || !tb[MEMTRACK_HOOK_ATTR_ENABLED]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "group needs NAME and ENABLED");
		return -EINVAL;
	}
	g = mtr_config_group_index(nla_data(tb[MEMTRACK_HOOK_ATTR_NAME]));
	if (g < 0) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MEMTRACK_HOOK_ATTR_NAME],
				    "unknown hook group");
		return -EINVAL;
	}
	err = mtr_config_req_group(req, g,
				   nla_get_u8(tb[MEMTRACK_HOOK_ATTR_ENABLED]));
	if (err)
		NL_SET_ERR_MSG_ATTR(extack, tb[MEMTRACK_HOOK_ATTR_ENABLED],
				    "this hook group cannot be switched off");
	return err;
}

/*
 * A request names only what it changes: an absent attribute leaves its
 * setting as it is.  Everything is checked before anything changes.
 */
static int mtr_parse_config(struct genl_info *info, struct mtr_config_req *req)
{
	struct nlattr *hooks = info->attrs[MEMTRACK_ATTR_HOOKS];
	struct nlattr *rt = info->attrs[MEMTRACK_ATTR_RETENTION_MS];
	struct nlattr *nest;
	int rem, err;

	mtr_config_req_init(req);
	if (!rt && !hooks) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		return -EINVAL;
	}
	if (rt) {
		err = mtr_config_req_value(req, MTR_CFG_RETENTION_MS,
					   nla_get_u32(rt));
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack, rt, "out of range");
			return err;
		}
	}
	if (!hooks)
		return 0;
	nla_for_each_nested(nest, hooks, rem) {
		err = mtr_parse_group(nest, req, info->extack);
		if (err)
			return err;
	}
	return 0;
}

static int mtr_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct mtr_config_req req;
	int err;

	err = mtr_parse_config(info, &req);
	if (err)
		return err;
	err = mtr_config_apply(&req);
	if (err)
		NL_SET_ERR_MSG(info->extack, "attaching a hook group failed");
	return err;
}

/* ---- events relay ------------------------------------------------------------ */

/*
 * While anyone listens to "events", one reader collects records and a work
 * item relays them as they come; nobody listening costs one check per tick.
 */
static struct mtr_reader *mtr_relay_reader;
static void *mtr_relay_buf;
static void mtr_relay_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(mtr_relay_work, mtr_relay_fn);

#define MTR_RELAY_BUF_SIZE \
	(NLMSG_GOODSIZE - NLMSG_HDRLEN - GENL_HDRLEN - NLA_HDRLEN)

static int mtr_relay_start(void)
{
	struct memtrack_filter f = { .classes = MEMTRACK_CLASS_DEFAULT };
	struct mtr_reader *r;

	r = mtr_reader_create((size_t)mtr_ring_kb * 1024);
	if (!r)
		return -ENOMEM;
	if (mtr_reader_set_filter(r, &f)) {
		mtr_reader_destroy(r);
		return -EINVAL;
	}
	mtr_relay_reader = r;
	return 0;
}

static void mtr_relay_stop(void)
{
	if (mtr_relay_reader)
		mtr_reader_destroy(mtr_relay_reader);
	mtr_relay_reader = NULL;
}

/* One message of whole records; false when there was nothing to send. */
static bool mtr_relay_one(void)
{
	struct sk_buff *msg;
	size_t n;
	void *hdr;

	n = mtr_reader_drain(mtr_relay_reader, mtr_relay_buf,
			     MTR_RELAY_BUF_SIZE);
	if (!n)
		return false;
	msg = genlmsg_new(nla_total_size(n), GFP_KERNEL);
	if (!msg)
		return false;
	hdr = genlmsg_put(msg, 0, 0, &mtr_genl_family, 0, MEMTRACK_CMD_EVENT);
	if (!hdr || nla_put(msg, MEMTRACK_ATTR_RECORDS, n, mtr_relay_buf)) {
		nlmsg_free(msg);
		return false;
	}
	genlmsg_end(msg, hdr);
	/* -ESRCH: the last listener just left; the next tick notices. */
	genlmsg_multicast(&mtr_genl_family, msg, 0, MTR_MCGRP_EVENTS,
			  GFP_KERNEL);
	return true;
}

static void mtr_relay_fn(struct work_struct *work)
{
	unsigned int i;

	if (!genl_has_listeners(&mtr_genl_family, &init_net,
				MTR_MCGRP_EVENTS)) {
		mtr_relay_stop();
	} else if (mtr_relay_reader || !mtr_relay_start()) {
		for (i = 0; i < MTR_RELAY_MAX_MSGS && mtr_relay_one(); i++)
			;
	}
	schedule_delayed_work(&mtr_relay_work, MTR_RELAY_INTERVAL);
}

/* ---- leak tracer ---------------------------------------------------------- */

/* One probe nest; the policy has checked types, lengths and ranges. */
static int mtr_parse_probe(const struct nlattr *nest,
			   struct mtr_leak_probe_req *r,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[MEMTRACK_PROBE_ATTR_MAX + 1];
	int err;

	err = nla_parse_nested(tb, MEMTRACK_PROBE_ATTR_MAX, nest,
			       mtr_probe_policy, extack);
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

static int mtr_nl_leak_attach(struct sk_buff *skb, struct genl_info *info)
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

static int mtr_nl_leak_detach(struct sk_buff *skb, struct genl_info *info)
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

static int mtr_nl_leak_unwind(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MEMTRACK_UNWIND_ATTR_MAX + 1], *rows;
	struct mtr_unwind_chunk c;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_TGID) ||
	    GENL_REQ_ATTR_CHECK(info, MEMTRACK_ATTR_LEAK_UNWIND))
		return -EINVAL;
	err = nla_parse_nested(tb, MEMTRACK_UNWIND_ATTR_MAX,
			       info->attrs[MEMTRACK_ATTR_LEAK_UNWIND],
			       mtr_unwind_policy, info->extack);
	if (err)
		return err;
	if (!tb[MEMTRACK_UNWIND_ATTR_START] || !tb[MEMTRACK_UNWIND_ATTR_END] ||
	    !tb[MEMTRACK_UNWIND_ATTR_BIAS] || !tb[MEMTRACK_UNWIND_ATTR_NR_ROWS] ||
	    !tb[MEMTRACK_UNWIND_ATTR_FIRST_ROW] || !tb[MEMTRACK_UNWIND_ATTR_ROWS]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[MEMTRACK_ATTR_LEAK_UNWIND],
				    "unwind needs START, END, BIAS, NR_ROWS, FIRST_ROW and ROWS");
		return -EINVAL;
	}
	rows = tb[MEMTRACK_UNWIND_ATTR_ROWS];
	if (nla_len(rows) % sizeof(struct memtrack_unwind_row)) {
		NL_SET_ERR_MSG_ATTR(info->extack, rows,
				    "unwind: ROWS is not a whole number of rows");
		return -EINVAL;
	}
	c.start = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_START]);
	c.end = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_END]);
	c.bias = nla_get_u64(tb[MEMTRACK_UNWIND_ATTR_BIAS]);
	c.nr_rows = nla_get_u32(tb[MEMTRACK_UNWIND_ATTR_NR_ROWS]);
	c.first_row = nla_get_u32(tb[MEMTRACK_UNWIND_ATTR_FIRST_ROW]);
	c.nr = nla_len(rows) / sizeof(struct memtrack_unwind_row);
	c.rows = nla_data(rows);
	return mtr_leak_set_unwind(nla_get_u32(info->attrs[MEMTRACK_ATTR_TGID]),
				   &c, info->extack);
}

static int mtr_nl_leak_stats(struct sk_buff *skb, struct genl_info *info)
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
	hdr = genlmsg_put_reply(msg, info, &mtr_genl_family, 0,
				MEMTRACK_CMD_LEAK_STATS);
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
static int mtr_nl_leak_stacks_start(struct netlink_callback *cb)
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

static int mtr_nl_leak_stacks_done(struct netlink_callback *cb)
{
	kvfree((void *)cb->args[0]);
	return 0;
}

static int mtr_nl_leak_stacks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_leak_snap *snap = (void *)cb->args[0];
	struct memtrack_leak_stack *rec;
	size_t len;
	void *hdr;

	while (snap->pos < snap->len) {
		rec = (void *)&snap->data[snap->pos];
		len = struct_size(rec, frames, rec->nr_frames);
		hdr = mtr_dump_put(skb, cb, MEMTRACK_CMD_LEAK_STACKS);
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
static int mtr_nl_leak_blocks_start(struct netlink_callback *cb)
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
static int mtr_nl_leak_blocks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_leak_snap *snap = (void *)cb->args[0];
	const size_t one = sizeof(struct memtrack_leak_block);
	size_t len;
	int room;
	void *hdr;

	while (snap->pos < snap->len) {
		hdr = mtr_dump_put(skb, cb, MEMTRACK_CMD_LEAK_BLOCKS);
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

/* ---- the family ---------------------------------------------------------------- */

static const struct genl_ops mtr_genl_ops[] = {
	{
		.cmd = MEMTRACK_CMD_GET_SUMMARY,
		.doit = mtr_nl_get_summary,
	},
	{
		.cmd = MEMTRACK_CMD_GET_TASK,
		.doit = mtr_nl_get_task,
	},
	{
		.cmd = MEMTRACK_CMD_GET_TASKS,
		.dumpit = mtr_nl_dump_tasks,
	},
	{
		.cmd = MEMTRACK_CMD_GET_THREADS,
		.start = mtr_nl_threads_start,
		.dumpit = mtr_nl_dump_threads,
	},
	{
		.cmd = MEMTRACK_CMD_GET_CONFIG,
		.doit = mtr_nl_get_config,
	},
	{
		.cmd = MEMTRACK_CMD_SET_CONFIG,
		.doit = mtr_nl_set_config,
		.flags = GENL_ADMIN_PERM,
	},
	/* Leak commands check ptrace-like permission themselves. */
	{
		.cmd = MEMTRACK_CMD_LEAK_ATTACH,
		.doit = mtr_nl_leak_attach,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_DETACH,
		.doit = mtr_nl_leak_detach,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_STACKS,
		.start = mtr_nl_leak_stacks_start,
		.dumpit = mtr_nl_leak_stacks,
		.done = mtr_nl_leak_stacks_done,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_STATS,
		.doit = mtr_nl_leak_stats,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_UNWIND,
		.doit = mtr_nl_leak_unwind,
	},
	{
		.cmd = MEMTRACK_CMD_LEAK_BLOCKS,
		.start = mtr_nl_leak_blocks_start,
		.dumpit = mtr_nl_leak_blocks,
		.done = mtr_nl_leak_stacks_done,
	},
};

/* Records show what other users' processes do: root only, like tracefs. */
static const struct genl_multicast_group mtr_genl_mcgrps[] = {
	[MTR_MCGRP_EVENTS] = { .name = MEMTRACK_GENL_MCGRP_EVENTS,
			       MTR_GENL_MCGRP_CAP_SYS_ADMIN },
};

static struct genl_family mtr_genl_family __ro_after_init = {
	.name = MEMTRACK_GENL_NAME,
	.version = MEMTRACK_GENL_VERSION,
	.maxattr = MEMTRACK_ATTR_MAX,
	.policy = mtr_policy,
	.module = THIS_MODULE,
	.parallel_ops = true,
	.ops = mtr_genl_ops,
	.n_ops = ARRAY_SIZE(mtr_genl_ops),
	.mcgrps = mtr_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mtr_genl_mcgrps),
};

int mtr_netlink_init(void)
{
	int err;

	if (WARN_ON(mtr_nr_groups > MTR_MAX_HOOK_GROUPS))
		return -EINVAL;
	mtr_relay_buf = kmalloc(MTR_RELAY_BUF_SIZE, GFP_KERNEL);
	if (!mtr_relay_buf)
		return -ENOMEM;
	err = genl_register_family(&mtr_genl_family);
	if (err) {
		kfree(mtr_relay_buf);
		return err;
	}
	schedule_delayed_work(&mtr_relay_work, MTR_RELAY_INTERVAL);
	return 0;
}

/* The relay stops first: it must not multicast on an unregistered family. */
void mtr_netlink_exit(void)
{
	cancel_delayed_work_sync(&mtr_relay_work);
	mtr_relay_stop();
	genl_unregister_family(&mtr_genl_family);
	kfree(mtr_relay_buf);
}
