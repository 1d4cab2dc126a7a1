// SPDX-License-Identifier: GPL-2.0
/*
 * What /proc/PID/stat and /proc/PID/cgroup show of a task and that a top
 * needs for every row: parent, cgroup, CPU time and start time.  Everything
 * here is public in /proc, so it is not restricted to tracers.
 *
 * thread_group_cputime_adjusted(), which /proc/PID/stat uses, is not
 * exported; the per-thread task_cputime_adjusted() is.  A process's time is
 * therefore the sum of its live threads' adjusted times and of what its dead
 * threads left in signal_struct, adjusted the same way: their exact run time
 * split as their sampled ticks split.  The ticks alone can fall well short
 * of the run time when ticks are irregular (a loaded VM).  The total is
 * /proc's; the split between user and system may differ by rounding.
 */
#include <linux/sched.h>
#include <linux/sched/cputime.h>
#include <linux/sched/signal.h>
#include <linux/cgroup.h>
#include <linux/math64.h>
#include "mtr.h"

/* Caller holds rcu_read_lock(). */
static void mtr_stat_identity(struct task_struct *task,
			      struct task_struct *started, struct mtr_stat *st)
{
	if (!pid_alive(task))
		return;
	st->ppid = task_tgid_nr(rcu_dereference(task->real_parent));
	st->start_ns = READ_ONCE(started->start_boottime);
	st->cgroup_id = cgroup_id(task_dfl_cgroup(task));
}

/* Adds a live thread's CPU time. */
void mtr_stat_add_thread(struct task_struct *task, struct mtr_stat *st)
{
	u64 utime, stime;

	task_cputime_adjusted(task, &utime, &stime);
	st->utime_ns += utime;
	st->stime_ns += stime;
}

/* A thread's own row; mtr_stat_add_thread() adds its time.  RCU held. */
void mtr_stat_identity_of_thread(struct task_struct *task, struct mtr_stat *st)
{
	mtr_stat_identity(task, task, st);
}

/*
 * A process's identity, through one of its live threads (its leader when
 * alive, as /proc/PID names a process after it), plus the CPU time of its
 * dead threads; mtr_stat_add_thread() adds the live ones.  Caller holds
 * rcu_read_lock().
 */
void mtr_stat_of_proc(struct task_struct *task, struct mtr_stat *st)
{
	struct signal_struct *sig;
	u64 utime, stime, rtime;

	mtr_stat_identity(task, task->group_leader, st);
	if (!pid_alive(task))
		return;
	sig = task->signal;
	utime = READ_ONCE(sig->utime);
	stime = READ_ONCE(sig->stime);
	rtime = READ_ONCE(sig->sum_sched_runtime);
	/* as cputime_adjust() does */
	if (stime && utime)
		stime = mul_u64_u64_div_u64(stime, rtime, utime + stime);
	else if (stime)
		stime = rtime;
	else
		stime = 0;
	st->utime_ns += rtime - stime;
	st->stime_ns += stime;
}
