// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer's sessions: uprobes and uretprobes on a process's
 * allocator entry points (leak_probe.c handles them), and per traced
 * process (a session) tables of the blocks it has allocated and not freed,
 * each with the call stack that allocated it (leak_table.c).  This file
 * starts, follows and ends sessions: attach, permission, children,
 * thread and process exits, detach.
 *
 * Apart from the handlers and the tables because its work is of another
 * kind: it runs in process context, may sleep (registering and
 * unregistering uprobes does), and owns the list of sessions and its locks.
 *
 * A session is freed by LEAK_DETACH, when the socket that attached closes,
 * and at unload.  When the target exits or execs, the session ends: its
 * probes go, but its tables stay, as they were at that moment, for the
 * tracer's last report, until it detaches or leak_keep_ms passes.
 * Unregistering uprobes sleeps, so the hooks that notice an exit, an exec
 * or a closed socket only mark the session and queue the reaper; a session
 * is freed only after its uprobes are gone and no handler can run any more.
 */
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include "mtr.h"
#include "leak.h"

/* mtr_leak_sessions changes under both locks: readers need either. */
static DEFINE_MUTEX(mtr_leak_lock);		/* attach, detach, netlink */
static DEFINE_SPINLOCK(mtr_leak_list_lock);	/* hooks that cannot sleep */
static LIST_HEAD(mtr_leak_sessions);
static atomic_t mtr_leak_nr_sessions = ATOMIC_INIT(0);
static bool mtr_leak_closing;			/* unload: no new sessions */

static void mtr_leak_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(mtr_leak_reap_work, mtr_leak_reap_fn);

/* From any context: reap now (ends, exits of children, closed sockets). */
static void mtr_leak_reap_soon(void)
{
	mod_delayed_work(system_wq, &mtr_leak_reap_work, 0);
}

unsigned int mtr_leak_keep_ms = MEMTRACK_LEAK_KEEP_MS;
module_param_named(leak_keep_ms, mtr_leak_keep_ms, uint, 0444);
MODULE_PARM_DESC(leak_keep_ms,
		 "How long an ended leak session's tables are kept (ms)");

bool mtr_leak_keep_valid(unsigned int ms)
{
	return ms >= MEMTRACK_LEAK_KEEP_MS_MIN &&
	       ms <= MEMTRACK_LEAK_KEEP_MS_MAX;
}

/*
 * config.c, after a new leak_keep_ms: expiries are computed again.  Only
 * while sessions are listed, as for the hooks: once mtr_leak_exit() has
 * emptied the list, nothing may queue the work again.
 */
void mtr_leak_keep_changed(void)
{
	mutex_lock(&mtr_leak_lock);
	if (!list_empty(&mtr_leak_sessions))
		mtr_leak_reap_soon();
	mutex_unlock(&mtr_leak_lock);
}

/* Caller holds s->lock: is this process (or, mm NULL, tgid) traced by s? */
static bool mtr_leak_traces(struct mtr_leak_session *s, pid_t tgid,
			    struct mm_struct *mm)
{
	if (tgid == s->tgid && (!mm || mm == s->mm))
		return true;
	return s->flags & MEMTRACK_LEAK_F_CHILDREN &&
	       mtr_leak_kid_find(s, tgid, mm);
}

/* Caller holds mtr_leak_lock. */
static struct mtr_leak_session *mtr_leak_find(pid_t tgid)
{
	struct mtr_leak_session *s;

	list_for_each_entry(s, &mtr_leak_sessions, node)
		if (s->tgid == tgid && !READ_ONCE(s->dead))
			return s;
	return NULL;
}

/*
 * Caller holds mtr_leak_lock.  A session's stacks show where the target
 * allocates: only the user who attached (or a tracer with CAP_SYS_PTRACE)
 * may read or end it.
 */
static struct mtr_leak_session *mtr_leak_find_mine(pid_t tgid, int *err)
{
	struct mtr_leak_session *s = mtr_leak_find(tgid);

	*err = -ENOENT;
	if (!s)
		return NULL;
	if (!uid_eq(current_uid(), s->owner) && !capable(CAP_SYS_PTRACE)) {
		*err = -EPERM;
		return NULL;
	}
	*err = 0;
	return s;
}

/*
 * For readers outside this file (leak_blocks.c, leak_stacks.c): the
 * caller's session with mtr_leak_lock held, so it cannot go away; NULL
 * (lock not held) with *err.
 */
struct mtr_leak_session *mtr_leak_lock_mine(pid_t tgid, int *err)
{
	struct mtr_leak_session *s;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, err);
	if (!s)
		mutex_unlock(&mtr_leak_lock);
	return s;
}

void mtr_leak_unlock(void)
{
	mutex_unlock(&mtr_leak_lock);
}


/*
 * Caller holds mtr_leak_lock.  Removes the probes and waits for running
 * handlers: none will touch the session again.  The unwind tables served
 * only them.
 */
static void mtr_leak_unprobe(struct mtr_leak_session *s)
{
	struct mtr_leak_probe *p;
	unsigned int i;
	bool any = false;

	for (i = 0; i < s->nr_probes; i++) {
		p = &s->probes[i];
		if (!p->registered)
			continue;
		mtr_uprobe_unregister(&p->handle, p->inode, p->offset, &p->uc);
		p->registered = false;
		any = true;
	}
	if (any)
		mtr_uprobe_unregister_sync();
	/* No handler runs now; stacks they left to complete may still. */
	wait_var_event(&s->refills, !atomic_read(&s->refills));
	mtr_leak_unwind_free(s);
}

/* Caller holds mtr_leak_lock; s is unlinked.  Frees the session. */
static void mtr_leak_destroy(struct mtr_leak_session *s)
{
	unsigned int i;

	mtr_leak_unprobe(s);
	for (i = 0; i < s->nr_probes; i++)
		path_put(&s->probes[i].path);
	mtr_leak_tables_free(s);
	for (i = 0; i < MTR_LEAK_MAX_CHILDREN; i++)
		if (s->kids[i].mm)
			mmdrop(s->kids[i].mm);
	mmdrop(s->mm);
	kvfree(s);
}

/* Caller holds mtr_leak_lock. */
static void mtr_leak_unlink(struct mtr_leak_session *s)
{
	spin_lock(&mtr_leak_list_lock);
	list_del(&s->node);
	spin_unlock(&mtr_leak_list_lock);
	atomic_dec(&mtr_leak_nr_sessions);
}

/*
 * Caller holds mtr_leak_lock: free every session marked dead or ended
 * longer than leak_keep_ms ago, unprobe those ended since.  Returns in how
 * many jiffies the next ended one expires (0: none left).
 */
static unsigned long mtr_leak_reap_dead(void)
{
	struct mtr_leak_session *s, *tmp;
	unsigned long next = 0, left;
	unsigned long keep = msecs_to_jiffies(READ_ONCE(mtr_leak_keep_ms));

	list_for_each_entry_safe(s, tmp, &mtr_leak_sessions, node) {
		if (READ_ONCE(s->ended) && !READ_ONCE(s->dead)) {
			left = s->ended_at + keep - jiffies;
			if (time_before(jiffies, s->ended_at + keep)) {
				mtr_leak_unprobe(s);
				next = next ? min(next, left) : max(left, 1UL);
				continue;
			}
		} else if (!READ_ONCE(s->dead)) {
			continue;
		}
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	return next;
}

/* Frees the state of one child that exited or exec'd; false: none left. */
static bool mtr_leak_reap_kid(struct mtr_leak_session *s)
{
	struct mtr_leak_kid *k = NULL;
	struct mm_struct *mm;
	unsigned int i;

	spin_lock(&s->lock);
	for (i = 0; i < MTR_LEAK_MAX_CHILDREN && !k; i++)
		if (s->kids[i].tgid && s->kids[i].gone)
			k = &s->kids[i];
	if (!k) {
		s->kids_gone = false;
		spin_unlock(&s->lock);
		return false;
	}
	mtr_leak_tables_drop(s, k->tgid);
	mm = k->mm;
	k->mm = NULL;
	k->tgid = 0;
	k->gone = false;
	s->st.nr_children--;
	spin_unlock(&s->lock);
	mmdrop(mm);
	return true;
}

static void mtr_leak_reap_fn(struct work_struct *work)
{
	struct mtr_leak_session *s;
	unsigned long next;

	mutex_lock(&mtr_leak_lock);
	next = mtr_leak_reap_dead();
	list_for_each_entry(s, &mtr_leak_sessions, node)
		while (READ_ONCE(s->kids_gone) && mtr_leak_reap_kid(s))
			;
	/* Not queued again if a hook queued it meanwhile: it runs soon. */
	if (next)
		schedule_delayed_work(&mtr_leak_reap_work, next);
	mutex_unlock(&mtr_leak_lock);
}

/* Caller holds s->lock: the child @tgid is no longer followed. */
static bool mtr_leak_kid_gone(struct mtr_leak_session *s, pid_t tgid)
{
	struct mtr_leak_kid *k = mtr_leak_kid_find(s, tgid, NULL);

	if (!k)
		return false;
	k->gone = true;
	WRITE_ONCE(s->kids_gone, true);
	return true;
}

/*
 * From hooks that cannot sleep: process @tgid exited or exec'd (@why).  Its
 * session ends, its tables kept as they are now; a child followed by a
 * session is no longer followed, its blocks dropped.  Reaped later.
 */
static void mtr_leak_end(pid_t tgid, u32 why)
{
	struct mtr_leak_session *s;
	bool any = false;

	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		if (READ_ONCE(s->ended))
			continue;
		spin_lock(&s->lock);
		if (s->tgid == tgid) {
			WRITE_ONCE(s->ended, why);
			s->ended_at = jiffies;
			s->st.ended = why;
			any = true;
		} else if (s->flags & MEMTRACK_LEAK_F_CHILDREN) {
			any |= mtr_leak_kid_gone(s, tgid);
		}
		spin_unlock(&s->lock);
	}
	spin_unlock(&mtr_leak_list_lock);
	if (any)
		mtr_leak_reap_soon();
}

/* From the netlink notifier: the attaching socket closed. */
static void mtr_leak_socket_gone(struct net *net, u32 portid)
{
	struct mtr_leak_session *s;
	bool any = false;

	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		if (s->net != net || s->portid != portid)
			continue;
		WRITE_ONCE(s->dead, true);
		any = true;
	}
	spin_unlock(&mtr_leak_list_lock);
	if (any)
		mtr_leak_reap_soon();
}

/* A thread's call state goes with it, so the thread bound is of live ones. */
static void mtr_leak_thread_gone(struct task_struct *task)
{
	struct mtr_leak_thread *t = NULL;
	struct mtr_leak_session *s;

	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		spin_lock(&s->lock);
		t = mtr_leak_thread_unlink(s, task->pid);
		spin_unlock(&s->lock);
		if (t)
			break;
	}
	spin_unlock(&mtr_leak_list_lock);
	kfree(t);
}

void mtr_leak_task_exit(struct task_struct *task)
{
	if (!atomic_read(&mtr_leak_nr_sessions))
		return;
	mtr_leak_thread_gone(task);
	/* Not the last thread yet: the process and its allocator live on. */
	if (!atomic_read(&task->signal->live))
		mtr_leak_end(task->tgid, MEMTRACK_LEAK_ENDED_EXIT);
}

/* The new program has another allocator: the probes mean nothing now. */
void mtr_leak_task_exec(struct task_struct *task)
{
	if (atomic_read(&mtr_leak_nr_sessions))
		mtr_leak_end(task->tgid, MEMTRACK_LEAK_ENDED_EXEC);
}

/*
 * A process forked by one traced with F_CHILDREN is traced too.  It has
 * the parent's breakpoints already (fork copies the patched text pages);
 * its slot is preallocated in the session, as nothing may sleep here.
 * CLONE_VM children (vfork) share the parent's heap and only exec or exit.
 */
void mtr_leak_task_fork(struct task_struct *task, unsigned long clone_flags)
{
	struct mtr_leak_session *s;
	unsigned int i;

	if (!atomic_read(&mtr_leak_nr_sessions) ||
	    clone_flags & (CLONE_THREAD | CLONE_VM) || !task->mm)
		return;
	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		if (!(s->flags & MEMTRACK_LEAK_F_CHILDREN) ||
		    READ_ONCE(s->dead) || READ_ONCE(s->ended))
			continue;
		spin_lock(&s->lock);
		if (!mtr_leak_traces(s, current->tgid, current->mm)) {
			spin_unlock(&s->lock);
			continue;
		}
		/* A slot of an exited process with this pid is not reaped yet. */
		for (i = 0; i < MTR_LEAK_MAX_CHILDREN; i++)
			if (!s->kids[i].tgid || s->kids[i].tgid == task->tgid)
				break;
		if (i < MTR_LEAK_MAX_CHILDREN && !s->kids[i].tgid) {
			mmgrab(task->mm);
			s->kids[i].mm = task->mm;
			s->kids[i].tgid = task->tgid;
			s->kids[i].gone = false;
			s->st.nr_children++;
			s->st.children++;
		} else {
			s->st.dropped_children++;
		}
		spin_unlock(&s->lock);
		break;
	}
	spin_unlock(&mtr_leak_list_lock);
}

static int mtr_leak_netlink_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC &&
	    atomic_read(&mtr_leak_nr_sessions))
		mtr_leak_socket_gone(n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block mtr_leak_netlink_nb = {
	.notifier_call = mtr_leak_netlink_event,
};

/*
 * Like ptrace's PTRACE_MODE_REALCREDS check, which modules cannot call:
 * CAP_SYS_PTRACE, or the same real/effective/saved uid and gid as the target
 * and a target that did not become undumpable (setuid, prctl).
 */
static bool mtr_leak_may_trace(struct task_struct *task, struct mm_struct *mm)
{
	const struct cred *cred = current_cred(), *tcred;
	bool ok;

	if (capable(CAP_SYS_PTRACE))
		return true;
	rcu_read_lock();
	tcred = __task_cred(task);
	ok = uid_eq(cred->uid, tcred->uid) && uid_eq(cred->uid, tcred->euid) &&
	     uid_eq(cred->uid, tcred->suid) && gid_eq(cred->gid, tcred->gid) &&
	     gid_eq(cred->gid, tcred->egid) && gid_eq(cred->gid, tcred->sgid);
	rcu_read_unlock();
	return ok && mtr_dumpable_by_owner(task, mm);
}

/* The target's mm, mmgrab()ed, after the permission check. */
static int mtr_leak_target_mm(pid_t tgid, struct mm_struct **out)
{
	struct task_struct *task;
	struct mm_struct *mm;
	int err = 0;

	rcu_read_lock();
	task = pid_task(find_vpid(tgid), PIDTYPE_TGID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);		/* NULL for kernel threads, zombies */
	if (!mm) {
		err = -ESRCH;
	} else if (!mtr_leak_may_trace(task, mm)) {
		err = -EPERM;
	} else {
		mmgrab(mm);
		*out = mm;
	}
	if (mm)
		mmput(mm);
	put_task_struct(task);
	return err;
}

static int mtr_leak_probe_init(struct mtr_leak_probe *p,
			       const struct mtr_leak_probe_req *r,
			       struct netlink_ext_ack *extack)
{
	int err;

	err = kern_path(r->path, LOOKUP_FOLLOW, &p->path);
	if (err) {
		NL_SET_ERR_MSG(extack, "probe path not found");
		return err;
	}
	p->inode = d_real_inode(p->path.dentry);
	if (!S_ISREG(p->inode->i_mode)) {
		path_put(&p->path);
		NL_SET_ERR_MSG(extack, "probe path is not a regular file");
		return -EINVAL;
	}
	p->offset = r->offset;
	p->api = r->api;
	mtr_leak_probe_handlers(p);
	return 0;
}

/*
 * Caller holds mtr_leak_lock; s is listed.  Puts the probes in; on failure
 * the session is freed.  A process that ends meanwhile has its probes
 * taken out by the reaper, which waits for the lock.
 */
static int mtr_leak_register(struct mtr_leak_session *s,
			     struct netlink_ext_ack *extack)
{
	unsigned int i;
	int err = 0;

	s->armed = true;
	for (i = 0; i < s->nr_probes; i++) {
		struct mtr_leak_probe *p = &s->probes[i];

		err = mtr_uprobe_register(&p->handle, p->inode, p->offset,
					  &p->uc);
		if (err) {
			NL_SET_ERR_MSG(extack, "registering a uprobe failed");
			break;
		}
		p->registered = true;
	}
	if (err) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
		return err;
	}
	spin_lock(&s->lock);
	s->st.nr_probes = s->nr_probes;
	spin_unlock(&s->lock);
	return 0;
}

int mtr_leak_attach(pid_t tgid, const struct mtr_leak_probe_req *req,
		    unsigned int nr, u32 flags, struct net *net, u32 portid,
		    struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s;
	struct mm_struct *mm;
	unsigned int i;
	int err;

	if (!nr || nr > MTR_LEAK_MAX_PROBES) {
		NL_SET_ERR_MSG(extack, "between 1 and 64 probes needed");
		return -EINVAL;
	}
	err = mtr_leak_target_mm(tgid, &mm);
	if (err) {
		if (err == -EPERM)
			NL_SET_ERR_MSG(extack, "not allowed to trace this process");
		else
			NL_SET_ERR_MSG(extack, "no such user process");
		return err;
	}
	s = kvzalloc(struct_size(s, probes, nr), GFP_KERNEL);
	if (!s) {
		mmdrop(mm);
		return -ENOMEM;
	}
	s->tgid = tgid;
	s->flags = flags;
	s->mm = mm;
	s->net = net;
	s->portid = portid;
	s->owner = current_uid();
	spin_lock_init(&s->lock);
	err = mtr_leak_tables_alloc(s);
	if (err)
		goto free;
	for (i = 0; i < nr; i++) {
		s->probes[i].sess = s;
		err = mtr_leak_probe_init(&s->probes[i], &req[i], extack);
		if (err)
			goto free;
		s->nr_probes++;
	}

	mutex_lock(&mtr_leak_lock);
	/* A session whose end is queued must not hold up its successor. */
	mtr_leak_reap_dead();
	if (mtr_leak_closing) {
		err = -ESHUTDOWN;
	} else if (mtr_leak_find(tgid)) {
		/* An ended session too, until its tracer read the last report. */
		NL_SET_ERR_MSG(extack, "process already traced");
		err = -EBUSY;
	} else if (atomic_read(&mtr_leak_nr_sessions) >= MTR_LEAK_MAX_SESSIONS) {
		NL_SET_ERR_MSG(extack, "too many traced processes");
		err = -ENOSPC;
	}
	if (err) {
		mutex_unlock(&mtr_leak_lock);
		goto free;
	}
	/* Listed first so that an exit or exec during registration is seen. */
	spin_lock(&mtr_leak_list_lock);
	list_add(&s->node, &mtr_leak_sessions);
	spin_unlock(&mtr_leak_list_lock);
	atomic_inc(&mtr_leak_nr_sessions);
	if (!(flags & MEMTRACK_LEAK_F_ARM_LATER))
		err = mtr_leak_register(s, extack);
	mutex_unlock(&mtr_leak_lock);
	return err;

free:
	mtr_leak_tables_free(s);
	for (i = 0; i < s->nr_probes; i++)
		path_put(&s->probes[i].path);
	mmdrop(mm);
	kvfree(s);
	return err;
}

/*
 * Caller holds mtr_leak_lock: the caller's session of a process still
 * running, or NULL with *err and the reason in @extack.
 */
static struct mtr_leak_session *
mtr_leak_find_running(pid_t tgid, int *err, struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s = mtr_leak_find_mine(tgid, err);

	if (!s) {
		NL_SET_ERR_MSG(extack, "process not traced by this user");
	} else if (READ_ONCE(s->ended)) {
		NL_SET_ERR_MSG(extack, "the process exited or exec'd");
		*err = -ESRCH;
		s = NULL;
	}
	return s;
}

/* The probes of an attach with F_ARM_LATER, once its tables are in. */
int mtr_leak_arm(pid_t tgid, struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_running(tgid, &err, extack);
	if (s && s->armed) {
		NL_SET_ERR_MSG(extack, "the probes are in already");
		err = -EALREADY;
	} else if (s) {
		err = mtr_leak_register(s, extack);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_detach(pid_t tgid)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (s) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_set_unwind(pid_t tgid, const struct mtr_unwind_chunk *c,
			struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	/* An ended session's probes are gone: no stack is walked again. */
	s = mtr_leak_find_running(tgid, &err, extack);
	if (s)
		err = mtr_leak_unwind_add(s, c, extack);
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_get_stats(pid_t tgid, struct memtrack_leak_stats *st)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (s) {
		spin_lock(&s->lock);
		*st = s->st;
		spin_unlock(&s->lock);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;
}




int mtr_leak_init(void)
{
	int err;

	err = mtr_leak_table_init();
	if (err)
		return err;
	err = mtr_leak_unwind_init();
	if (err)
		goto err_table;
	err = netlink_register_notifier(&mtr_leak_netlink_nb);
	if (err)
		goto err_unwind;
	return 0;
err_unwind:
	mtr_leak_unwind_exit();
err_table:
	mtr_leak_table_exit();
	return err;
}

/* Before the netlink family goes: no session outlives the module. */
void mtr_leak_exit(void)
{
	struct mtr_leak_session *s, *tmp;

	netlink_unregister_notifier(&mtr_leak_netlink_nb);
	mutex_lock(&mtr_leak_lock);
	mtr_leak_closing = true;
	list_for_each_entry_safe(s, tmp, &mtr_leak_sessions, node) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	mutex_unlock(&mtr_leak_lock);
	/* Nothing is listed, so the hooks cannot queue it again. */
	cancel_delayed_work_sync(&mtr_leak_reap_work);
	mtr_leak_unwind_exit();
	mtr_leak_table_exit();
}
