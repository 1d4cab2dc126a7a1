/* SPDX-License-Identifier: LGPL-2.1 */
/* Inside the data source: the /proc readers (source_sys.c, source_proc.c). */
#ifndef MEMTRACK_USER_LIB_SOURCE_H
#define MEMTRACK_USER_LIB_SOURCE_H

#include "libmemtrack.h"

/* /proc/meminfo and /proc/vmstat into si (sum.* without the module). */
int mt_proc_meminfo(struct mt_sysinfo *si);
int mt_proc_vmstat(struct mt_sysinfo *si);

/*
 * Every /proc/PID, or /proc/TGID/task/TID; growing arrays of rows.
 * no_cgroup: cgroup_id left 0 (no /proc/PID/cgroup read).
 */
int mt_proc_tasks(struct memtrack_task **out, size_t *n, bool no_cgroup);
int mt_proc_threads(pid_t tgid, struct memtrack_task **out, size_t *n);

#endif
