/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack.ko's own declarations, shared by the module's files: its prefix
 * mtr_ (user space's ABI is <linux/memtrack.h>, libmemtrack's API
 * libmemtrack.h).
 */
#ifndef MTR_H
#define MTR_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/hashtable.h>
#include <linux/spinlock.h>
#include <linux/rcupdate.h>
#include <linux/percpu.h>
#include <linux/jump_label.h>
#include <linux/sched.h>
#include <linux/kprobes.h>
#include <linux/wait.h>
#include <linux/gfp.h>
#include <uapi/linux/memtrack.h>

#define MTR_NAME "memtrack"

#define MEMTRACK_COUNTER(id, ...) MTR_C_##id,
enum mtr_counter {
#include <uapi/linux/memtrack_counters.h>
	MTR_NR_COUNTERS
};
#undef MEMTRACK_COUNTER

extern const char *const mtr_counter_names[MTR_NR_COUNTERS];

/* What the mm of a process looks like; page counts except pgtables_bytes. */
struct mtr_mm_snap {
	unsigned long rss_anon;
	unsigned long rss_file;
	unsigned long rss_shmem;
	unsigned long swap;
	unsigned long rss_peak;
	unsigned long vm_total;
	unsigned long vm_data;
	unsigned long vm_stack;
	unsigned long vm_exec;
	unsigned long pgtables_bytes;
};

struct mtr_proc;

/*
 * A tracked thread.  Looked up under RCU by tid; counters written only by the
 * thread itself from task context, so a probe needs no atomics.
 */
struct mtr_thread {
	struct hlist_node hnode;	/* mtr_thread_hash, by tid */
	struct list_head node;		/* mtr_thread_list (RCU) */
	struct list_head sibling;	/* proc->threads, under proc->lock */
	struct rcu_head rcu;
	struct mtr_proc *proc;
	struct pid *pid;		/* identifies this incarnation */
	pid_t tid;
	u64 exit_ns;			/* 0 while alive */
	u64 reclaim_start_ns;		/* direct reclaim in progress */
	u32 fail_gfp;			/* gfp of the last failed page alloc */
	u64 c[MTR_NR_COUNTERS];
	char comm[TASK_COMM_LEN];	/* valid once exited */
};

struct mtr_proc {
	struct hlist_node hnode;	/* mtr_proc_hash, by tgid */
	struct list_head node;		/* mtr_proc_list (RCU) */
	struct rcu_head rcu;
	spinlock_t lock;		/* threads, nr_live, dead, exit data */
	struct list_head threads;
	pid_t tgid;
	kuid_t uid;
	unsigned int nr_live;
	u64 exit_ns;			/* 0 while a thread lives */
	u32 fail_gfp;
	bool oom_victim;
	u64 dead[MTR_NR_COUNTERS];	/* folded in from exited threads */
	struct mtr_mm_snap exit_mm;	/* last mm state seen at exit */
	unsigned long growth_rss;	/* growth.c: last sample, pages */
	u64 growth_ns;
	char comm[TASK_COMM_LEN];	/* valid once exited */
};

/* table.c: the task table. */
int mtr_table_init(void);
void mtr_table_exit(void);
int mtr_table_scan_existing(void);
/*
 * The lookups every probe makes are inline: under the kernels' return-thunk
 * mitigations a call and return are a noticeable part of a probe's cost.
 */
#define MTR_HASH_BITS 14
extern struct hlist_head mtr_thread_hash[1 << MTR_HASH_BITS];

/* RCU; live threads only. */
static inline struct mtr_thread *mtr_thread_find(pid_t tid)
{
	struct mtr_thread *t;

	hash_for_each_possible_rcu(mtr_thread_hash, t, hnode, tid)
		if (t->tid == tid && !READ_ONCE(t->exit_ns))
			return t;
	return NULL;
}

/*
 * The thread each CPU's probes last found: a task's events come in runs (a
 * page fault's allocation, the frees of its munmap), and checking the last
 * one costs less than the hash.  The reaper takes exited entries out of
 * every CPU's slot before it frees any (mtr_thread_last_sweep()).
 */
DECLARE_PER_CPU(struct mtr_thread *, mtr_thread_last);

/*
 * Events in interrupt context belong to no task (mtr_current_task(): the
 * caller has checked in_task()).  Probes run with preemption disabled, which
 * is an RCU read-side section (compat.h's MTR_TP_PROBE disables it where a
 * kernel's tracepoints do not).
 */
static inline struct mtr_thread *mtr_current_task(void)
{
	struct mtr_thread *t = __this_cpu_read(mtr_thread_last);
	pid_t tid = current->pid;

	if (likely(t && READ_ONCE(t->tid) == tid && !READ_ONCE(t->exit_ns)))
		return t;
	t = mtr_thread_find(tid);
	if (t)
		__this_cpu_write(mtr_thread_last, t);
	return t;
}

static inline struct mtr_thread *mtr_current(void)
{
	return in_task() ? mtr_current_task() : NULL;
}
void mtr_track_task(struct task_struct *task, gfp_t gfp);
bool mtr_thread_exit(struct mtr_thread *t, struct task_struct *task);
void mtr_thread_exec(struct task_struct *task, pid_t old_tid);
void mtr_table_reap(u64 now_ns, u64 retention_ns);
extern struct list_head mtr_thread_list;
extern struct list_head mtr_proc_list;
bool mtr_proc_listed(pid_t tgid, const struct list_head *node);	/* RCU */
bool mtr_thread_listed(pid_t tid, const struct list_head *node);	/* RCU */

struct mtr_table_stats {
	unsigned int threads, threads_exited;
	unsigned int procs, procs_exited;
	u64 untracked;
	size_t bytes;
};
void mtr_table_stats(struct mtr_table_stats *st);

static inline void mtr_count(struct mtr_thread *t, enum mtr_counter c, u64 v)
{
	WRITE_ONCE(t->c[c], t->c[c] + v);
}

/* task_stat.c: what /proc/PID/stat and cgroup show; zero once exited. */
struct mtr_stat {
	pid_t ppid;
	u64 cgroup_id;
	u64 utime_ns;
	u64 stime_ns;
	u64 start_ns;
};
void mtr_stat_add_thread(struct task_struct *task, struct mtr_stat *st);
void mtr_stat_identity_of_thread(struct task_struct *task, struct mtr_stat *st);
void mtr_stat_of_proc(struct task_struct *task, struct mtr_stat *st);

/* snapshot.c: reading live state of tasks and processes. */
bool mtr_task_mm_snap(struct task_struct *task, struct mtr_mm_snap *s);
void mtr_mm_to_abi(const struct mtr_mm_snap *s, struct memtrack_mm *m);
struct mtr_proc_view {
	u64 c[MTR_NR_COUNTERS];
	struct mtr_mm_snap mm;
	char comm[TASK_COMM_LEN];
	kuid_t uid;
	unsigned int nr_threads;
	bool exited;
	bool detailed;		/* reader may see event counters */
	struct mtr_stat stat;
};
void mtr_proc_view(struct mtr_proc *p, struct mtr_proc_view *v);
void mtr_thread_view(struct mtr_thread *t, struct mtr_proc_view *v);

/*
 * summary.c: global totals since load, per CPU; events from any context.
 * The hooks and the rings count, the summary sums.
 */
#define MTR_MAX_ORDER_SLOTS 16
struct mtr_totals {
	u64 pg_alloc_events;
	u64 pg_free_events;
	u64 pg_alloc_fail;
	u64 pg_alloc_fail_order[MTR_MAX_ORDER_SLOTS];
	u64 kmalloc_events;
	u64 kfree_events;
	u64 mmap_events;
	u64 reclaim_stalls;
	u64 reclaim_ns;
	u64 reclaim_scanned;
	u64 reclaim_reclaimed;
	u64 reclaim_dirty;
	u64 reclaim_writeback;
	u64 oom_victims;
	u64 forks;
	u64 exits;
	u64 records_generated;
	u64 records_lost;
};
DECLARE_PER_CPU(struct mtr_totals, mtr_totals);
#define mtr_total_add(field, v) this_cpu_add(mtr_totals.field, (v))
/*
 * The same totals counted by probes in task context, with preemption off:
 * a plain add (an atomic one is several instructions on arm64, on the
 * hottest events).  An interrupt's probe adds to mtr_totals, never to the
 * word this one is in the middle of changing.
 */
DECLARE_PER_CPU(struct mtr_totals, mtr_totals_task);
#define mtr_total_add_task(field, v) raw_cpu_add(mtr_totals_task.field, (v))

/*
 * A probe's event: one more in the total @field, and the thread it belongs
 * to (NULL in an interrupt, or for a task not tracked).
 */
#define mtr_event_thread(field)					\
({								\
	struct mtr_thread *__t = NULL;				\
								\
	if (likely(in_task())) {				\
		mtr_total_add_task(field, 1);			\
		__t = mtr_current_task();			\
	} else {						\
		mtr_total_add(field, 1);			\
	}							\
	__t;							\
})

/* hook_oom.c: the most recent OOM victims. */
#define MTR_OOM_RING 8
struct mtr_oom_victim {
	u64 time_ns;
	pid_t pid, tgid, trigger_pid;
	uid_t uid;
	unsigned long rss_pages;
	char comm[TASK_COMM_LEN];
};
unsigned int mtr_oom_victims(struct mtr_oom_victim *out, unsigned int max);

/* hooks.c: groups of tracepoints and kprobes switched on and off together. */
struct mtr_tracepoint {
	const char *name;
	void *probe;
	struct tracepoint *tp;		/* resolved at load */
	bool attached;
};

/* Kprobes are optional: a symbol the kernel lacks is skipped and reported. */
struct mtr_kprobe {
	struct kprobe kp;
	bool attached;
};

/* Most kretprobes in one group (unregistered in one batch). */
#define MTR_MAX_KRETPROBES 8

struct mtr_kretprobe {
	struct kretprobe rp;
	bool attached;
};

struct mtr_hook_group {
	const char *name;
	struct mtr_tracepoint *tps;
	unsigned int nr_tps;
	struct mtr_kprobe *kps;
	unsigned int nr_kps;
	struct mtr_kretprobe *krps;
	unsigned int nr_krps;
	bool always_on;			/* the task lifecycle cannot be off */
	bool enabled;
};

extern struct mtr_hook_group mtr_group_task, mtr_group_pages, mtr_group_kmalloc,
	mtr_group_mmap, mtr_group_reclaim, mtr_group_oom;
extern struct mtr_hook_group *const mtr_groups[];
extern const unsigned int mtr_nr_groups;

unsigned long mtr_mmap_missed(void);

int mtr_hooks_init(void);
int mtr_hook_group_set(struct mtr_hook_group *g, bool on);
void mtr_hooks_detach_all(void);
unsigned int mtr_hook_group_attached(const struct mtr_hook_group *g);
unsigned int mtr_hook_group_size(const struct mtr_hook_group *g);

extern unsigned int mtr_retention_ms;	/* config.c */

/*
 * config.c: the settings and the one way to change them.  A request carries
 * only what it changes (value[k] where bit k of set is on; enable[g] >= 0);
 * each value is range-checked as it is added, and mtr_config_apply() changes
 * all of it or nothing.
 */
enum mtr_config_key_id {
	MTR_CFG_RETENTION_MS,
	MTR_CFG_RING_KB,
	MTR_CFG_RSS_ALERT_KB,
	MTR_CFG_RSS_GROWTH_KBPS,
	MTR_CFG_LEAK_KEEP_MS,
	MTR_CFG_NR
};

struct mtr_config_key {
	const char *name;
	unsigned int *var;
	bool (*valid)(unsigned int v);
};

#define MTR_MAX_HOOK_GROUPS	16
struct mtr_config_req {
	u32 set;
	unsigned int value[MTR_CFG_NR];
	s8 enable[MTR_MAX_HOOK_GROUPS];
};

extern struct mutex mtr_config_lock;		/* hooks.c */
/*
 * The one capability that changes a setting, by any path (the proc file,
 * SET_CONFIG), asked of both the file's opener and the caller, as netlink
 * does: a descriptor handed to a less privileged process, or opened by one,
 * changes nothing.  Not CAP_NET_ADMIN, which containers get for their
 * networking alone.
 */
#define MTR_CONFIG_CAP	CAP_SYS_ADMIN
extern const struct mtr_config_key mtr_config_keys[MTR_CFG_NR];
int mtr_config_check_params(void);
int mtr_config_key_index(const char *name);
int mtr_config_group_index(const char *name);
void mtr_config_req_init(struct mtr_config_req *req);
/* -ERANGE for a value out of its documented range. */
int mtr_config_req_value(struct mtr_config_req *req, enum mtr_config_key_id k,
			 unsigned int v);
/* -EINVAL for switching off a group that cannot be. */
int mtr_config_req_group(struct mtr_config_req *req, unsigned int g, bool on);
int mtr_config_apply(const struct mtr_config_req *req);

/*
 * events.c, ring.c: records.  A reader (an opener of /dev/memtrack, or the
 * netlink relay) has its own per-CPU ring buffers and filter; probes write
 * each record into every reader that wants it, dropping and counting when a
 * buffer is full.  Readers are created and destroyed in process context.
 */
struct mtr_reader;
struct mtr_reader *mtr_reader_create(size_t ring_bytes);
void mtr_reader_destroy(struct mtr_reader *r);
int mtr_reader_set_filter(struct mtr_reader *r, const struct memtrack_filter *f);
void mtr_reader_get_filter(struct mtr_reader *r, struct memtrack_filter *f);
void mtr_reader_stats(struct mtr_reader *r, struct memtrack_ring_stats *st);
/* Copy whole records, oldest first, into a kernel buffer; 0: none. */
size_t mtr_reader_drain(struct mtr_reader *r, void *buf, size_t len);
ssize_t mtr_reader_read_user(struct mtr_reader *r, char __user *buf, size_t len);
bool mtr_reader_empty(struct mtr_reader *r);
void mtr_reader_want_wakeup(struct mtr_reader *r);
wait_queue_head_t *mtr_reader_waitq(struct mtr_reader *r);
void mtr_emit(struct memtrack_rec_hdr *h, u32 class);
void mtr_emit_as(struct memtrack_rec_hdr *h, u32 class, kuid_t uid);
extern struct list_head mtr_readers;	/* ring.c; RCU */
/* On while a reader is listed: the probes' check is a patched branch. */
DECLARE_STATIC_KEY_FALSE(mtr_readers_on);
static inline bool mtr_have_readers(void)
{
	return static_branch_unlikely(&mtr_readers_on) &&
	       !list_empty(&mtr_readers);
}

/* Whether a record is wanted at all: a reader exists, in task context. */
static inline bool mtr_ev_wanted(void)
{
	return mtr_have_readers() && in_task();
}

/* events.c: building records in the probes (task context only). */
void mtr_ev_task_new(struct task_struct *task, unsigned long clone_flags);
void mtr_ev_task_exit(struct mtr_thread *t, struct task_struct *task,
		      bool process_exit);
void mtr_ev_map(u16 type, unsigned long addr, unsigned long len,
		unsigned long prot, unsigned long flags);
void mtr_ev_mremap(unsigned long old_addr, unsigned long old_len,
		   unsigned long new_addr, unsigned long new_len);
void mtr_ev_brk(unsigned long old_brk, unsigned long new_brk);
void mtr_ev_shm(u32 op, int shmid, unsigned long addr, unsigned long size);
void mtr_ev_oom(struct task_struct *victim, unsigned long rss_pages);
void mtr_ev_reclaim(u64 duration_ns, unsigned long nr_reclaimed);
/* The two per-page and per-kmalloc ones: the caller checks mtr_ev_wanted(). */
void mtr_ev_page(u16 type, struct page *page, unsigned int order, gfp_t gfp);
void mtr_ev_rss(struct mtr_proc *p, unsigned long rss, unsigned long prev,
		u64 window_ns);
void mtr_ev_kmalloc(u16 type, unsigned long call_site, const void *ptr,
		    size_t bytes_req, size_t bytes_alloc, gfp_t gfp);
extern unsigned int mtr_ring_kb;	/* per-CPU buffer of a new reader */
bool mtr_ring_kb_valid(unsigned int kb);

/* leak_session.c: how long an ended session's tables are kept. */
extern unsigned int mtr_leak_keep_ms;
bool mtr_leak_keep_valid(unsigned int ms);
void mtr_leak_keep_changed(void);

/* dev.c: /dev/memtrack. */
int mtr_dev_init(void);
void mtr_dev_exit(void);

/* growth.c: RSS growth alerts. */
extern unsigned int mtr_rss_alert_kb, mtr_rss_growth_kbps;
void mtr_growth_sample(u64 now);
unsigned long mtr_proc_rss(struct mtr_proc *p);

/* netlink.c: the generic netlink family "memtrack". */
int mtr_netlink_init(void);
void mtr_netlink_exit(void);

/* summary.c: the numbers both /proc/memtrack/summary and netlink report. */
void mtr_summary_init(void);		/* at load: uptime counts from here */
void mtr_summary_fill(struct memtrack_summary *s);
void mtr_summary_fill_totals(struct memtrack_summary *s, struct mtr_totals *t);

/* proc_*.c */
int mtr_proc_init(void);
void mtr_proc_exit(void);
int mtr_summary_show(struct seq_file *m, void *v);
extern const struct proc_ops mtr_config_ops;
extern const struct seq_operations mtr_tasks_seq_ops, mtr_threads_seq_ops;
void mtr_sysmem_fill(struct memtrack_summary *s);
void mtr_sysmem_show(struct seq_file *m, const struct memtrack_summary *s);

#endif /* MTR_H */
