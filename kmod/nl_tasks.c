// SPDX-License-Identifier: GPL-2.0
/*
 * GET_TASK, GET_TASKS and GET_THREADS: the rows of /proc/memtrack/tasks and
 * threads as struct memtrack_task, one attribute per task (no text to
 * parse), one task or a dump that resumes where it stopped.
 *
 * Apart from the family (netlink.c) because a dump's resumption over lists
 * that change while it runs is a job of its own.
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "mtr.h"
#include "compat.h"
#include "netlink.h"

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

int mtr_nl_get_task(struct sk_buff *skb, struct genl_info *info)
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
	hdr = mtr_nl_reply_put(msg, info, MEMTRACK_CMD_GET_TASK);
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

/* Puts one task message; false when the skb is full. */
static bool mtr_dump_task(struct sk_buff *skb, struct netlink_callback *cb,
			  const struct memtrack_task *task, u8 cmd)
{
	struct memtrack_task *room;
	void *hdr;

	hdr = mtr_nl_dump_put(skb, cb, cmd);
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

int mtr_nl_dump_tasks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_dump_filter f;

	mtr_dump_filter_get(cb, &f);
	return mtr_dump_list(skb, cb, &mtr_proc_list, mtr_proc_node_pid,
			     mtr_proc_listed, mtr_dump_fill_proc, &f,
			     MEMTRACK_CMD_GET_TASKS);
}

/* Refuse a threads dump without TGID before it starts, with an ack. */
int mtr_nl_threads_start(struct netlink_callback *cb)
{
	if (!mtr_genl_dump_attrs(cb)[MEMTRACK_ATTR_TGID]) {
		NL_SET_ERR_MSG(cb->extack, "TGID required");
		return -EINVAL;
	}
	return 0;
}

int mtr_nl_dump_threads(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mtr_dump_filter f;

	mtr_dump_filter_get(cb, &f);
	f.comm = NULL;
	return mtr_dump_list(skb, cb, &mtr_thread_list, mtr_thread_node_pid,
			     mtr_thread_listed, mtr_dump_fill_thread, &f,
			     MEMTRACK_CMD_GET_THREADS);
}
