// SPDX-License-Identifier: GPL-2.0
/* oom:mark_victim passes (struct task_struct *, uid_t). */
#include <linux/sched.h>
#include <trace/events/oom.h>

static void probe(void *data, struct task_struct *task, uid_t uid)
{
}

static void __used check(void)
{
	check_trace_callback_type_mark_victim(probe);
}
