// SPDX-License-Identifier: GPL-2.0
/*
 * Task lifecycle: start tracking at fork, fold counters at exit, follow the
 * tid change of a multi-threaded exec, and keep the mm state a process had
 * when it exited (do_exit() detaches the mm before sched_process_exit fires,
 * so that snapshot comes from a kprobe on taskstats_exit(), which runs just
 * before exit_mm()).
 */
#include <linux/sched.h>
#include <linux/binfmts.h>
#include <trace/events/task.h>
#include <trace/events/sched.h>
#include "mtr.h"
#include "compat.h"
#include "leak.h"

/* Before the child first runs, so none of its events are missed. */
static void mtr_newtask(struct task_struct *task, u64 clone_flags)
{
	mtr_total_add(forks, 1);
	mtr_track_task(task, GFP_NOWAIT | __GFP_NOWARN);
	mtr_ev_task_new(task, clone_flags);
	mtr_leak_task_fork(task, clone_flags);
}

static void mtr_process_exit(struct task_struct *task)
{
	struct mtr_thread *t = mtr_thread_find(task->pid);

	mtr_total_add(exits, 1);
	if (t)
		mtr_ev_task_exit(t, task, mtr_thread_exit(t, task));
	mtr_leak_task_exit(task);
}

static void mtr_process_exec(struct task_struct *task, pid_t old_pid)
{
	mtr_thread_exec(task, old_pid);
	mtr_leak_task_exec(task);
}

MTR_TP_PROBE(newtask, (MTR_NEWTASK_PROTO), (task, clone_flags))
MTR_TP_PROBE(process_exit, (MTR_PROCESS_EXIT_PROTO), (task))
MTR_TP_PROBE(process_exec, (struct task_struct *task, pid_t old_pid,
			    struct linux_binprm *bprm), (task, old_pid))

static int mtr_kp_exit_mm(struct kprobe *kp, struct pt_regs *regs)
{
	struct mtr_mm_snap s;
	struct mtr_thread *t;

	if (!mtr_task_mm_snap(current, &s))
		return 0;
	t = mtr_thread_find(current->pid);
	if (t) {
		spin_lock(&t->proc->lock);
		t->proc->exit_mm = s;
		spin_unlock(&t->proc->lock);
	}
	return 0;
}

static void __used mtr_task_check_types(void)
{
	check_trace_callback_type_task_newtask(mtr_probe_newtask);
	check_trace_callback_type_sched_process_exit(mtr_probe_process_exit);
	check_trace_callback_type_sched_process_exec(mtr_probe_process_exec);
}

static struct mtr_tracepoint mtr_task_tps[] = {
	{ .name = "task_newtask", .probe = mtr_probe_newtask },
	{ .name = "sched_process_exit", .probe = mtr_probe_process_exit },
	{ .name = "sched_process_exec", .probe = mtr_probe_process_exec },
};

static struct mtr_kprobe mtr_task_kps[] = {
	{ .kp = { .symbol_name = "taskstats_exit", .pre_handler = mtr_kp_exit_mm } },
};

struct mtr_hook_group mtr_group_task = {
	.name = "task",
	.tps = mtr_task_tps,
	.nr_tps = ARRAY_SIZE(mtr_task_tps),
	.kps = mtr_task_kps,
	.nr_kps = ARRAY_SIZE(mtr_task_kps),
	.always_on = true,
};
