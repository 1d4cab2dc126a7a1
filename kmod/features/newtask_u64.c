// SPDX-License-Identifier: GPL-2.0
/* task:task_newtask passes clone_flags as u64 (7.x); before, unsigned long. */
#include <linux/sched.h>
#include <trace/events/task.h>

static void probe(void *data, struct task_struct *task, u64 clone_flags)
{
}

static void __used check(void)
{
	check_trace_callback_type_task_newtask(probe);
}
