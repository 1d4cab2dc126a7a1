// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a process or thread as the /proc files show it: event counters from
 * the table, memory and faults live from task_struct and mm_struct, the way
 * /proc/PID/status reads them, so the two agree.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/string.h>
#include "mtr.h"
#include "compat.h"

static void mtr_mm_read(struct mm_struct *mm, struct mtr_mm_snap *s)
{
	s->rss_anon = mtr_mm_counter(mm, MM_ANONPAGES);
	s->rss_file = mtr_mm_counter(mm, MM_FILEPAGES);
	s->rss_shmem = mtr_mm_counter(mm, MM_SHMEMPAGES);
	s->swap = mtr_mm_counter(mm, MM_SWAPENTS);
	s->rss_peak = max(READ_ONCE(mm->hiwater_rss),
			  s->rss_anon + s->rss_file + s->rss_shmem);
	s->vm_total = READ_ONCE(mm->total_vm);
	s->vm_data = READ_ONCE(mm->data_vm);
	s->vm_stack = READ_ONCE(mm->stack_vm);
	s->vm_exec = READ_ONCE(mm->exec_vm);
	s->pgtables_bytes = mm_pgtables_bytes(mm);
}

/* The ABI's form of an mm: bytes. */
void mtr_mm_to_abi(const struct mtr_mm_snap *s, struct memtrack_mm *m)
{
	m->rss_anon = (u64)s->rss_anon << PAGE_SHIFT;
	m->rss_file = (u64)s->rss_file << PAGE_SHIFT;
	m->rss_shmem = (u64)s->rss_shmem << PAGE_SHIFT;
	m->swap = (u64)s->swap << PAGE_SHIFT;
	m->rss_peak = (u64)s->rss_peak << PAGE_SHIFT;
	m->vm_total = (u64)s->vm_total << PAGE_SHIFT;
	m->vm_data = (u64)s->vm_data << PAGE_SHIFT;
	m->vm_stack = (u64)s->vm_stack << PAGE_SHIFT;
	m->vm_exec = (u64)s->vm_exec << PAGE_SHIFT;
	m->pgtables = s->pgtables_bytes;
}

/* task_lock() keeps the mm attached while we read it.  False: no user mm. */
bool mtr_task_mm_snap(struct task_struct *task, struct mtr_mm_snap *s)
{
	struct mm_struct *mm;

	task_lock(task);
	mm = task->mm;
	if (mm && !(task->flags & PF_KTHREAD))
		mtr_mm_read(mm, s);
	else
		mm = NULL;
	task_unlock(task);
	return mm;
}

/*
 * Event counters reveal what a process does, which /proc keeps to those who
 * may ptrace it; memory sizes and fault counts are public in /proc/PID/stat
 * and status.  ptrace_may_access() is not exported, so approximate it by
 * owner and CAP_SYS_PTRACE.
 */
static bool mtr_may_see_details(kuid_t owner)
{
	return uid_eq(current_fsuid(), owner) ||
	       mtr_capable_noaudit(CAP_SYS_PTRACE);
}

static void mtr_add_live_thread(struct mtr_thread *t, struct task_struct *task,
			       struct mtr_proc_view *v, bool *have_mm)
{
	int i;

	for (i = 0; i < MTR_NR_COUNTERS; i++)
		v->c[i] += READ_ONCE(t->c[i]);
	if (!task)
		return;
	v->c[MTR_C_MIN_FLT] += READ_ONCE(task->min_flt);
	v->c[MTR_C_MAJ_FLT] += READ_ONCE(task->maj_flt);
	mtr_stat_add_thread(task, &v->stat);
	if (!*have_mm)
		*have_mm = mtr_task_mm_snap(task, &v->mm);
}

/* RSS of a live process in pages, 0 if none.  Caller holds rcu_read_lock(). */
unsigned long mtr_proc_rss(struct mtr_proc *p)
{
	struct mtr_mm_snap s = {};
	struct task_struct *task;
	struct mtr_thread *t;
	bool found = false;

	spin_lock(&p->lock);
	list_for_each_entry(t, &p->threads, sibling) {
		if (t->exit_ns)
			continue;
		task = pid_task(t->pid, PIDTYPE_PID);
		if (task && mtr_task_mm_snap(task, &s)) {
			found = true;
			break;
		}
	}
	spin_unlock(&p->lock);
	return found ? s.rss_anon + s.rss_file + s.rss_shmem : 0;
}

/* Caller holds rcu_read_lock(). */
void mtr_proc_view(struct mtr_proc *p, struct mtr_proc_view *v)
{
	struct task_struct *task, *named = NULL;
	bool have_mm = false;
	struct mtr_thread *t;

	memset(v, 0, sizeof(*v));
	spin_lock(&p->lock);
	memcpy(v->c, p->dead, sizeof(v->c));
	v->exited = p->exit_ns;
	v->uid = p->uid;
	if (v->exited) {
		v->mm = p->exit_mm;
		memcpy(v->comm, p->comm, sizeof(v->comm));
	}
	list_for_each_entry(t, &p->threads, sibling) {
		if (t->exit_ns)
			continue;
		task = pid_task(t->pid, PIDTYPE_PID);
		v->nr_threads++;
		mtr_add_live_thread(t, task, v, &have_mm);
		/* /proc/PID names a process after its leader. */
		if (task && (!named || t->tid == p->tgid))
			named = task;
	}
	if (named) {
		get_task_comm(v->comm, named);
		v->uid = task_uid(named);
		mtr_stat_of_proc(named, &v->stat);
	}
	spin_unlock(&p->lock);
	v->detailed = mtr_may_see_details(v->uid);
}

/* Caller holds rcu_read_lock(). */
void mtr_thread_view(struct mtr_thread *t, struct mtr_proc_view *v)
{
	struct mtr_proc *p = t->proc;
	struct task_struct *task = NULL;
	bool have_mm = false;

	memset(v, 0, sizeof(*v));
	spin_lock(&p->lock);
	v->uid = p->uid;
	v->nr_threads = 1;
	v->exited = t->exit_ns;
	if (v->exited) {
		memcpy(v->c, t->c, sizeof(v->c));
		memcpy(v->comm, t->comm, sizeof(v->comm));
		v->mm = p->exit_mm;
	} else {
		task = pid_task(t->pid, PIDTYPE_PID);
		mtr_add_live_thread(t, task, v, &have_mm);
		if (task) {
			get_task_comm(v->comm, task);
			v->uid = task_uid(task);
			mtr_stat_identity_of_thread(task, &v->stat);
		} else {
			memcpy(v->comm, t->comm, sizeof(v->comm));
		}
	}
	spin_unlock(&p->lock);
	v->detailed = mtr_may_see_details(v->uid);
}
