/* SPDX-License-Identifier: LGPL-2.1 */
/* Inside the data source: the /proc readers (source_sys.c, source_proc.c). */
#ifndef MEMTRACK_USER_LIB_SOURCE_H
#define MEMTRACK_USER_LIB_SOURCE_H

#include "memtrack.h"

/* /proc/meminfo and /proc/vmstat into si (sum.* without the module). */
int mt_proc_meminfo(struct mt_sysinfo *si);
int mt_proc_vmstat(struct memtrack_summary *s);

/* Every /proc/PID, or /proc/TGID/task/TID; growing arrays of rows. */
int mt_proc_tasks(struct memtrack_task **out, size_t *n);
int mt_proc_threads(pid_t tgid, struct memtrack_task **out, size_t *n);
/* mt_proc_tasks(), and without cgroup_id (no /proc/PID/cgroup read). */
#define MT_PROC_NO_CGROUP	(1U << 0)
int mt_proc_tasks_flags(struct memtrack_task **out, size_t *n,
			unsigned int flags);

#endif
