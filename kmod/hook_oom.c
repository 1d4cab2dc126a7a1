// SPDX-License-Identifier: GPL-2.0
/*
 * OOM victims: how many, and the last few with pid, comm and RSS at the time
 * they were chosen.  The OOM killer calls mark_victim with task_lock(victim)
 * held (or on current), so the victim's mm is read without taking it.
 */
#include <linux/mm.h>
#include <linux/cred.h>
#include <linux/timekeeping.h>
#include <trace/events/oom.h>
#include "mtr.h"
#include "compat.h"

static DEFINE_SPINLOCK(mtr_oom_lock);
static struct mtr_oom_victim mtr_oom_ring[MTR_OOM_RING];
static unsigned int mtr_oom_head;	/* victims recorded, ever */

static void mtr_mark_victim(struct task_struct *task)
{
	struct mtr_oom_victim *v;
	struct mtr_thread *t;
	unsigned long flags, rss;

	mtr_total_add(oom_victims, 1);
	if (!task)
		return;
	t = mtr_thread_find(task->pid);
	if (t)
		WRITE_ONCE(t->proc->oom_victim, true);

	rss = task->mm ? get_mm_rss(task->mm) : 0;
	mtr_ev_oom(task, rss);
	spin_lock_irqsave(&mtr_oom_lock, flags);
	v = &mtr_oom_ring[mtr_oom_head++ % MTR_OOM_RING];
	v->time_ns = ktime_get_ns();
	v->pid = task->pid;
	v->tgid = task->tgid;
	v->trigger_pid = current->pid;
	v->uid = from_kuid_munged(&init_user_ns, task_uid(task));
	v->rss_pages = rss;
	strscpy(v->comm, task->comm, sizeof(v->comm));
	spin_unlock_irqrestore(&mtr_oom_lock, flags);
}

MTR_TP_PROBE(mark_victim, (MTR_MARK_VICTIM_PROTO), (mtr_mark_victim_task()))

/* Newest first. */
unsigned int mtr_oom_victims(struct mtr_oom_victim *out, unsigned int max)
{
	unsigned int n, i;
	unsigned long flags;

	spin_lock_irqsave(&mtr_oom_lock, flags);
	n = min3(max, mtr_oom_head, (unsigned int)MTR_OOM_RING);
	for (i = 0; i < n; i++)
		out[i] = mtr_oom_ring[(mtr_oom_head - 1 - i) % MTR_OOM_RING];
	spin_unlock_irqrestore(&mtr_oom_lock, flags);
	return n;
}

static void __used mtr_oom_check_types(void)
{
	check_trace_callback_type_mark_victim(mtr_probe_mark_victim);
}

static struct mtr_tracepoint mtr_oom_tps[] = {
	{ .name = "mark_victim", .probe = mtr_probe_mark_victim },
};

struct mtr_hook_group mtr_group_oom = {
	.name = "oom",
	.tps = mtr_oom_tps,
	.nr_tps = ARRAY_SIZE(mtr_oom_tps),
};
