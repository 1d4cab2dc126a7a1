// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer's file descriptors (memtrack-leak --fds): what a probed
 * call opens, and at report time which of the descriptors still in the
 * table the process has really closed.
 *
 * Descriptors go through the same probes, call state and tables as memory
 * blocks (leak_probe.c, leak_table.c), under keys MTR_LEAK_FD_KEY | fd.
 * close() is their free; descriptors closed where no probe sees it
 * (close_range, a raw syscall, closefrom) would stay listed for ever, so a
 * report first checks each against the process's descriptor table.
 *
 * A leaf below the handlers: it calls only the tables (leak_table.c).
 */
#include <linux/fcntl.h>
#include <linux/fdtable.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include "leak.h"
#include "arch.h"

/* Whether the call opens anything, and where its result will be. */
bool mtr_leak_fd_request(u32 api, struct pt_regs *regs,
			 struct mtr_leak_call *c)
{
	c->size = 0;
	c->arg = 0;
	switch (api) {
	case MEMTRACK_API_PIPE:
		c->arg = mtr_arg(regs, 0);
		return true;
	case MEMTRACK_API_SOCKETPAIR:
		c->arg = mtr_arg(regs, 3);
		return true;
	case MEMTRACK_API_FCNTL:
		return (int)mtr_arg(regs, 1) == F_DUPFD ||
		       (int)mtr_arg(regs, 1) == F_DUPFD_CLOEXEC;
	case MEMTRACK_API_SIGNALFD:
		/* Another fd changes the mask of an existing signalfd. */
		return (int)mtr_arg(regs, 0) == -1;
	default:
		return true;
	}
}

/* The keys of the descriptors the call opened, from its int result. */
unsigned int mtr_leak_fd_result(const struct mtr_leak_call *c,
				unsigned long ret, unsigned long keys[2])
{
	int fds[2];

	if ((int)ret < 0)
		return 0;
	if (c->api != MEMTRACK_API_PIPE && c->api != MEMTRACK_API_SOCKETPAIR) {
		keys[0] = MTR_LEAK_FD_KEY | (u32)ret;
		return 1;
	}
	if ((int)ret || copy_from_user_nofault(fds, (void __user *)c->arg,
					       sizeof(fds)) ||
	    fds[0] < 0 || fds[1] < 0)
		return 0;
	keys[0] = MTR_LEAK_FD_KEY | (u32)fds[0];
	keys[1] = MTR_LEAK_FD_KEY | (u32)fds[1];
	return 2;
}

static struct task_struct *mtr_leak_fd_task(pid_t tgid)
{
	struct task_struct *task;

	rcu_read_lock();
	task = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	return task;
}

/* Drops @tgid's descriptors that its fd table no longer has. */
static void mtr_leak_fd_validate_one(struct mtr_leak_session *s, pid_t tgid,
				     struct mm_struct *mm)
{
	struct task_struct *task = mtr_leak_fd_task(tgid);
	struct mtr_leak_block *b;
	struct hlist_node *tmp;
	unsigned int i;

	if (!task)
		return;
	/* task_lock keeps ->files from being freed; RCU its fd array. */
	task_lock(task);
	if (task->mm == mm && task->files) {
		rcu_read_lock();
		spin_lock(&s->lock);
		for (i = 0; i < (1U << MTR_LEAK_BLOCK_BITS); i++)
			hlist_for_each_entry_safe(b, tmp, &s->blocks[i], hnode) {
				if (b->tgid != tgid || !mtr_leak_is_fd_key(b->addr) ||
				    files_lookup_fd_raw(task->files,
							(u32)b->addr))
					continue;
				s->st.fds_closed_unseen++;
				mtr_leak_block_drop(s, b);
			}
		spin_unlock(&s->lock);
		rcu_read_unlock();
	}
	task_unlock(task);
	put_task_struct(task);
}

/* Caller holds mtr_leak_lock, so kids are neither reaped nor reused. */
void mtr_leak_fd_validate(struct mtr_leak_session *s)
{
	struct mm_struct *mm;
	pid_t tgid;
	int i;

	for (i = -1; i < MTR_LEAK_MAX_CHILDREN; i++) {
		spin_lock(&s->lock);
		if (!s->st.outstanding_fds) {
			spin_unlock(&s->lock);
			return;
		}
		tgid = i < 0 ? s->tgid : s->kids[i].gone ? 0 : s->kids[i].tgid;
		mm = i < 0 ? s->mm : s->kids[i].mm;
		spin_unlock(&s->lock);
		if (tgid)
			mtr_leak_fd_validate_one(s, tgid, mm);
	}
}
