/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels memtrack builds for, in one place.  The
 * MTR_HAVE_* macros come from kmod/features/, which try-compiles each
 * candidate against the target's headers.
 */
#ifndef MEMTRACK_COMPAT_H
#define MEMTRACK_COMPAT_H

#include <linux/pid.h>
#include <linux/mm.h>
#include "memtrack_features.h"

/* Syscall entry points, for kprobes: the arch's syscall wrapper names. */
#if defined(CONFIG_X86_64)
#define MTR_SYSCALL_SYM(name) "__x64_sys_" #name
#elif defined(CONFIG_ARM64)
#define MTR_SYSCALL_SYM(name) "__arm64_sys_" #name
#else
#error "memtrack: no syscall wrapper prefix known for this architecture"
#endif

/* oom:mark_victim took (int pid) before 6.1.130 and (task, uid) since. */
#ifdef MTR_HAVE_MARK_VICTIM_TASK
#define MTR_MARK_VICTIM_PROTO struct task_struct *victim, uid_t victim_uid
#define mtr_mark_victim_task() (victim)
#else
#define MTR_MARK_VICTIM_PROTO int victim_pid
#define mtr_mark_victim_task() pid_task(find_vpid(victim_pid), PIDTYPE_PID)
#endif

/*
 * RSS counters: 6.1 keeps atomics (plus per-task caches /proc reads the same
 * way); 6.2+ keeps percpu_counters, whose plain read misses the per-CPU
 * batches, and /proc/PID/status sums them exactly: so do we.
 */
#ifdef MTR_HAVE_GET_MM_COUNTER_SUM
#define mtr_mm_counter(mm, member) get_mm_counter_sum(mm, member)
#else
#define mtr_mm_counter(mm, member) get_mm_counter(mm, member)
#endif

/* A dump's parsed request attributes: in a struct genl_info since 6.6. */
#ifdef MTR_HAVE_GENL_INFO_DUMP
#define mtr_genl_dump_attrs(cb) (genl_info_dump(cb)->attrs)
#else
#define mtr_genl_dump_attrs(cb) (genl_dumpit_info(cb)->attrs)
#endif

#endif /* MEMTRACK_COMPAT_H */
