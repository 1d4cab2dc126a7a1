// SPDX-License-Identifier: GPL-2.0
/*
 * Dumpability lives in task->exec_state (7.x); before, in mm->flags
 * (get_dumpable()).
 */
#include <linux/sched.h>
#include <linux/sched/exec_state.h>

static bool __used check(struct task_struct *task)
{
	struct task_exec_state *es = rcu_dereference(task->exec_state);

	return es->dumpable == TASK_DUMPABLE_OWNER;
}
