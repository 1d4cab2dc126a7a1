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
#include <linux/uprobes.h>
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

/*
 * Uprobes: 6.1 registers by (inode, offset) and unregisters synchronously;
 * 6.12 returns a handle, unregisters without waiting and waits once for all
 * (uprobe_unregister_sync), and its filter lost the context argument.
 */
#ifdef MTR_HAVE_UPROBE_UNREGISTER_NOSYNC
#define MTR_UPROBE_FILTER_PROTO struct uprobe_consumer *uc, struct mm_struct *mm
struct mtr_uprobe {
	struct uprobe *uprobe;
};

static inline int mtr_uprobe_register(struct mtr_uprobe *u, struct inode *inode,
				      loff_t offset, struct uprobe_consumer *uc)
{
	struct uprobe *up = uprobe_register(inode, offset, 0, uc);

	if (IS_ERR(up))
		return PTR_ERR(up);
	u->uprobe = up;
	return 0;
}

/* Handlers may still run until mtr_uprobe_unregister_sync(). */
static inline void mtr_uprobe_unregister(struct mtr_uprobe *u,
					 struct inode *inode, loff_t offset,
					 struct uprobe_consumer *uc)
{
	uprobe_unregister_nosync(u->uprobe, uc);
}

static inline void mtr_uprobe_unregister_sync(void)
{
	uprobe_unregister_sync();
}
#else
#define MTR_UPROBE_FILTER_PROTO struct uprobe_consumer *uc, \
	enum uprobe_filter_ctx ctx, struct mm_struct *mm
struct mtr_uprobe {
	int unused;
};

static inline int mtr_uprobe_register(struct mtr_uprobe *u, struct inode *inode,
				      loff_t offset, struct uprobe_consumer *uc)
{
	return uprobe_register(inode, offset, uc);
}

/* Takes the probe's rwsem for writing: no handler runs after it returns. */
static inline void mtr_uprobe_unregister(struct mtr_uprobe *u,
					 struct inode *inode, loff_t offset,
					 struct uprobe_consumer *uc)
{
	uprobe_unregister(inode, offset, uc);
}

static inline void mtr_uprobe_unregister_sync(void)
{
}
#endif

#endif /* MEMTRACK_COMPAT_H */
