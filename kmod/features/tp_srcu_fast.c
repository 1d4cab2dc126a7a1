// SPDX-License-Identifier: GPL-2.0
/*
 * SRCU-fast notrace readers as a guard: the kernels that have them (7.x)
 * call tracepoint probes inside one, preemptible, where earlier kernels
 * call them with preemption disabled.
 */
#include <linux/srcu.h>
#include <linux/tracepoint.h>

static void __used check(void)
{
	guard(srcu_fast_notrace)(&tracepoint_srcu);
}
