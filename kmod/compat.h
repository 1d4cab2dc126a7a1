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
#include <linux/sched.h>
#include <linux/kprobes.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/uprobes.h>
#include "memtrack_features.h"
#ifdef MTR_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
#else
#include <linux/sched/coredump.h>
#endif

/*
 * Tracepoints call their probes with preemption disabled up to 6.x; 7.x's
 * call them inside an SRCU-fast read section, preemptible.  The probes keep
 * per-CPU state (the totals, the last thread found) and find the task
 * table's entries under RCU: where the kernel no longer does, they disable
 * preemption themselves (an RCU read-side section too).
 * MTR_TP_PROBE(name, (proto), (args)) defines the probe mtr_probe_NAME(void
 * *data, proto) calling mtr_NAME(args) so.
 */
#ifdef MTR_HAVE_TP_SRCU_FAST
#define mtr_tp_enter() preempt_disable_notrace()
#define mtr_tp_exit() preempt_enable_notrace()
#else
#define mtr_tp_enter() do { } while (0)
#define mtr_tp_exit() do { } while (0)
#endif
#define MTR_UNPAREN(...) __VA_ARGS__
#define MTR_TP_PROBE(name, proto, args)					\
static notrace void mtr_probe_##name(void *data, MTR_UNPAREN proto)	\
{									\
	mtr_tp_enter();							\
	mtr_##name args;						\
	mtr_tp_exit();							\
}

/* oom:mark_victim took (int pid) before 6.1.130 and (task, uid) since. */
#ifdef MTR_HAVE_MARK_VICTIM_TASK
#define MTR_MARK_VICTIM_PROTO struct task_struct *victim, uid_t victim_uid
#define mtr_mark_victim_task() (victim)
#else
#define MTR_MARK_VICTIM_PROTO int victim_pid
#define mtr_mark_victim_task() pid_task(find_vpid(victim_pid), PIDTYPE_PID)
#endif

/*
 * kmem:kmalloc passes the NUMA node since 6.1; 5.10 traces kmalloc_node()
 * calls apart, in kmem:kmalloc_node (the same arguments plus the node).
 */
#ifdef MTR_HAVE_KMALLOC_NODE_ARG
#define MTR_KMALLOC_PROTO unsigned long call_site, const void *ptr, \
	size_t bytes_req, size_t bytes_alloc, gfp_t gfp, int node
#else
#define MTR_KMALLOC_PROTO unsigned long call_site, const void *ptr, \
	size_t bytes_req, size_t bytes_alloc, gfp_t gfp
#define MTR_HAVE_KMALLOC_NODE_TP 1
#endif

/* task:task_newtask's clone_flags became a u64 in 7.x. */
#ifdef MTR_HAVE_NEWTASK_U64
#define MTR_NEWTASK_PROTO struct task_struct *task, u64 clone_flags
#else
#define MTR_NEWTASK_PROTO struct task_struct *task, unsigned long clone_flags
#endif

/* sched:sched_process_exit gained group_dead in 7.x. */
#ifdef MTR_HAVE_PROCESS_EXIT_GROUP_DEAD
#define MTR_PROCESS_EXIT_PROTO struct task_struct *task, bool group_dead
#else
#define MTR_PROCESS_EXIT_PROTO struct task_struct *task
#endif

/*
 * vmscan:mm_vmscan_direct_reclaim_begin/end: 7.x passes the memcg (begin:
 * gfp first, then order); before, (order, gfp) and (nr_reclaimed).
 */
#ifdef MTR_HAVE_RECLAIM_BEGIN_MEMCG
#define MTR_RECLAIM_BEGIN_PROTO gfp_t gfp, int order, struct mem_cgroup *memcg
#else
#define MTR_RECLAIM_BEGIN_PROTO int order, gfp_t gfp
#endif
#ifdef MTR_HAVE_RECLAIM_END_MEMCG
#define MTR_RECLAIM_END_PROTO unsigned long nr_reclaimed, \
	struct mem_cgroup *memcg
#else
#define MTR_RECLAIM_END_PROTO unsigned long nr_reclaimed
#endif

/* A kretprobe instance names its kretprobe through get_kretprobe() (5.11+). */
#ifdef MTR_HAVE_GET_KRETPROBE
#define mtr_get_kretprobe(ri) get_kretprobe(ri)
#else
#define mtr_get_kretprobe(ri) ((ri)->rp)
#endif

/* A proc entry's data: pde_data() since 5.17, PDE_DATA() before. */
#ifdef MTR_HAVE_PDE_DATA
#define mtr_pde_data(inode) pde_data(inode)
#else
#define mtr_pde_data(inode) PDE_DATA(inode)
#endif

/*
 * seq_file over an RCU list, with the head as the first record (5.17+ has
 * seq_list_start_head_rcu() and seq_list_next_rcu(); 5.10 does not).
 * Called under rcu_read_lock().
 */
#ifdef MTR_HAVE_SEQ_LIST_RCU
#define mtr_seq_list_start_head_rcu(head, pos) seq_list_start_head_rcu(head, pos)
#define mtr_seq_list_next_rcu(v, head, ppos) seq_list_next_rcu(v, head, ppos)
#else
static inline struct list_head *
mtr_seq_list_start_head_rcu(struct list_head *head, loff_t pos)
{
	struct list_head *lh;

	if (!pos)
		return head;
	for (lh = rcu_dereference(list_next_rcu(head)); lh != head;
	     lh = rcu_dereference(list_next_rcu(lh)))
		if (--pos == 0)
			return lh;
	return NULL;
}

static inline struct list_head *
mtr_seq_list_next_rcu(void *v, struct list_head *head, loff_t *ppos)
{
	struct list_head *lh = rcu_dereference(list_next_rcu((struct list_head *)v));

	++*ppos;
	return lh == head ? NULL : lh;
}
#endif

/*
 * Whether @task (with @mm) may be traced by its owner: not made undumpable
 * by a setuid exec or prctl.  7.x keeps dumpability in task->exec_state,
 * earlier kernels in mm->flags.
 */
#ifdef MTR_HAVE_TASK_EXEC_STATE
static inline bool mtr_dumpable_by_owner(struct task_struct *task,
					 struct mm_struct *mm)
{
	const struct task_exec_state *es;
	bool ok;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	ok = es && es->dumpable == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ok;
}
#else
static inline bool mtr_dumpable_by_owner(struct task_struct *task,
					 struct mm_struct *mm)
{
	return get_dumpable(mm) == SUID_DUMP_USER;
}
#endif

/*
 * CAP_SYS_PTRACE of current, without an audit record: 5.10 does not export
 * has_capability_noaudit(); ns_capable_noaudit() asks the same of current's
 * subjective credentials (and marks the task as having used privilege).
 */
#ifdef MTR_HAVE_EXPORT_HAS_CAPABILITY_NOAUDIT
#define mtr_capable_noaudit(cap) has_capability_noaudit(current, cap)
#else
#define mtr_capable_noaudit(cap) ns_capable_noaudit(&init_user_ns, cap)
#endif

/*
 * Generic netlink.  Multicast groups only CAP_SYS_ADMIN may join: a group
 * flag since 6.8 (and 6.1.y); 5.10.y's backport of that fix took a bit.
 */
#if defined(MTR_HAVE_GENL_MCAST_CAP_FLAG)
#define MTR_GENL_MCGRP_CAP_SYS_ADMIN .flags = GENL_MCAST_CAP_SYS_ADMIN
#elif defined(MTR_HAVE_GENL_MCAST_CAP_BIT)
#define MTR_GENL_MCGRP_CAP_SYS_ADMIN .cap_sys_admin = 1
#else
#error "memtrack: this kernel cannot restrict a multicast group to CAP_SYS_ADMIN"
#endif

/*
 * A required attribute: GENL_REQ_ATTR_CHECK() (6.0+) also names the missing
 * attribute in the extack; before, only a message says so.
 */
#ifndef MTR_HAVE_GENL_REQ_ATTR_CHECK
#define GENL_REQ_ATTR_CHECK(info, attr) ({				\
	const struct genl_info *__info = (info);			\
	bool __missing = !__info->attrs[attr];				\
									\
	if (__missing)							\
		NL_SET_ERR_MSG(__info->extack, "missing attribute");	\
	__missing;							\
})
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

/* NR_PAGETABLE moved from the zone to the node counters in 5.11. */
#ifdef MTR_HAVE_PAGETABLE_NODE_STAT
#define mtr_page_tables() global_node_page_state(NR_PAGETABLE)
#else
#define mtr_page_tables() global_zone_page_state(NR_PAGETABLE)
#endif

/* NR_ANON_THPS counts pages since 5.13; before, huge pages. */
#if defined(MTR_HAVE_THP_STAT_PAGES) || !defined(CONFIG_TRANSPARENT_HUGEPAGE)
#define mtr_anon_thp_pages() global_node_page_state(NR_ANON_THPS)
#else
#define mtr_anon_thp_pages() \
	(global_node_page_state(NR_ANON_THPS) * HPAGE_PMD_NR)
#endif

/* A dump's parsed request attributes: in a struct genl_info since 6.6. */
#ifdef MTR_HAVE_GENL_INFO_DUMP
#define mtr_genl_dump_attrs(cb) (genl_info_dump(cb)->attrs)
#else
#define mtr_genl_dump_attrs(cb) (genl_dumpit_info(cb)->attrs)
#endif

/* Uprobe handlers: 6.13+ pass a per-hit __u64 *data, shared with the return. */
#ifdef MTR_HAVE_UPROBE_HANDLER_DATA
#define MTR_UPROBE_HANDLER_PROTO struct uprobe_consumer *uc, \
	struct pt_regs *regs, __u64 *data
#define MTR_URETPROBE_HANDLER_PROTO struct uprobe_consumer *uc, \
	unsigned long func, struct pt_regs *regs, __u64 *data
#else
#define MTR_UPROBE_HANDLER_PROTO struct uprobe_consumer *uc, \
	struct pt_regs *regs
#define MTR_URETPROBE_HANDLER_PROTO struct uprobe_consumer *uc, \
	unsigned long func, struct pt_regs *regs
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
