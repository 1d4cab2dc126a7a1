// SPDX-License-Identifier: GPL-2.0
/* sched:sched_process_exit passes (task, group_dead) (7.x); before, (task). */
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <trace/events/sched.h>

static void probe(void *data, struct task_struct *p, bool group_dead)
{
}

static void __used check(void)
{
	check_trace_callback_type_sched_process_exit(probe);
}
