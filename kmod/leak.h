/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The leak tracer's internals, shared by its files.  Calls point one way:
 * the netlink commands (nl_leak.c) call the sessions (leak_session.c) and
 * the reports (leak_stacks.c, leak_blocks.c); the sessions install the
 * handlers (leak_probe.c); the handlers read their call's descriptors and
 * stack through leak_fd.c and leak_unwind.c; and all of them keep their
 * books in the session's tables (leak_table.c), which call nothing back.
 */
#ifndef MEMTRACK_LEAK_H
#define MEMTRACK_LEAK_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/list.h>
#include <linux/path.h>
#include <linux/uprobes.h>
#include <linux/uidgid.h>
#include <uapi/linux/memtrack.h>
#include "compat.h"

/*
 * Every bound of the tracer, in one place.  A session's memory is at most
 * about MAX_BLOCKS * 64 bytes + MAX_STACKS * (64 + 8 * MAX_FRAMES) bytes
 * (~100 MiB worst case); anything beyond a bound is dropped and counted.
 */
#define MTR_LEAK_MAX_BLOCKS	(1U << 20)	/* outstanding allocations */
#define MTR_LEAK_MAX_STACKS	(1U << 16)	/* distinct call stacks */
#define MTR_LEAK_MAX_THREADS	4096		/* threads with call state */
#define MTR_LEAK_MAX_PROBES	64		/* per session */
#define MTR_LEAK_MAX_SESSIONS	64		/* traced processes */
#define MTR_LEAK_MAX_DEPTH	4		/* nested allocator calls kept */
#define MTR_LEAK_MAX_CHILDREN	64		/* F_CHILDREN: processes at once */
#define MTR_LEAK_MAX_SPARE	256		/* freed blocks kept for reuse */
#define MTR_LEAK_BLOCK_BITS	16		/* block hash buckets (log2) */
#define MTR_LEAK_STACK_BITS	12
#define MTR_LEAK_THREAD_BITS	8

struct mtr_leak_session;
struct mtr_unwind;
struct netlink_ext_ack;
struct pt_regs;
struct net;
struct task_struct;

struct mtr_leak_probe {
	struct uprobe_consumer uc;
	struct mtr_leak_session *sess;
	struct path path;		/* pins the inode the probe is on */
	struct inode *inode;
	loff_t offset;
	struct mtr_uprobe handle;
	u32 api;
	bool registered;
};

struct mtr_leak_stack {
	struct hlist_node hnode;
	u32 hash;
	u32 id;
	pid_t tgid;
	u32 api;
	u32 nr_frames;
	u32 mismatched;
	u32 free_api, free_stack_id;	/* of the last mismatched free */
	u64 total_allocs, total_bytes;
	/* Filled under the session lock by a LEAK_STACKS snapshot. */
	u64 snap_bytes, snap_blocks, snap_oldest;
	u64 frames[];
};

struct mtr_leak_block {
	struct hlist_node hnode;
	unsigned long addr;
	u64 size;
	u64 time_ns;
	struct mtr_leak_stack *stack;
	u32 api;
	pid_t tgid;			/* with addr, the key: children share addresses */
};

/*
 * Descriptors live in the block table under keys no user pointer has (the
 * kernel half of the address space), so memory and fds never collide.
 */
#define MTR_LEAK_FD_KEY		(1UL << 63)

static inline bool mtr_leak_is_fd_key(unsigned long key)
{
	return key & MTR_LEAK_FD_KEY;
}

static inline bool mtr_leak_api_is_fd(u32 api)
{
	return api >= MEMTRACK_API_OPEN && api < __MEMTRACK_API_MAX;
}

static inline bool mtr_leak_api_frees(u32 api)
{
	return api == MEMTRACK_API_FREE || api == MEMTRACK_API_DELETE ||
	       api == MEMTRACK_API_DELETE_ARRAY || api == MEMTRACK_API_CLOSE;
}

/* One allocator call in flight on a thread. */
struct mtr_leak_call {
	unsigned long sp;		/* at entry: identifies the call */
	unsigned long arg;		/* realloc's old block, posix_memalign's out */
	u64 size;
	struct mtr_leak_stack *stack;
	u32 api;
	bool nested;			/* inside another allocator call: ignored */
};

struct mtr_leak_thread {
	struct hlist_node hnode;
	pid_t tid;
	pid_t tgid;
	unsigned int depth;		/* calls in flight, kept or not */
	/*
	 * What operator delete last released here: libstdc++'s deletes end
	 * in free() (some through another delete), which must not count the
	 * block a second time, as a free of a block never seen.
	 */
	unsigned long released;
	struct mtr_leak_call calls[MTR_LEAK_MAX_DEPTH];
};

/* A forked child followed with F_CHILDREN; tgid 0: a free slot. */
struct mtr_leak_kid {
	pid_t tgid;
	bool gone;			/* exited or exec'd: state to free */
	struct mm_struct *mm;		/* mmgrab()ed: compared, never used */
};

struct mtr_leak_session {
	struct list_head node;		/* mtr_leak_sessions */
	pid_t tgid;
	struct mm_struct *mm;		/* mmgrab()ed: compared, never used */
	struct net *net;		/* of the attaching socket: compared only */
	u32 portid;
	kuid_t owner;			/* uid of the attaching caller */
	bool dead;			/* to free: detach, socket closed, expired */
	/*
	 * MEMTRACK_LEAK_ENDED_*: the process exited or exec'd; its probes go,
	 * its tables stay for the last report (set under s->lock too).
	 */
	u32 ended;
	unsigned long ended_at;		/* jiffies */
	bool armed;			/* the probes were put in */
	u32 flags;			/* MEMTRACK_LEAK_F_* */
	spinlock_t lock;		/* everything below */
	u32 next_stack_id;
	bool kids_gone;			/* some kids[].gone: reap them */
	struct mtr_leak_kid kids[MTR_LEAK_MAX_CHILDREN];
	struct hlist_head *blocks;	/* MTR_LEAK_BLOCK_BITS buckets */
	/*
	 * Blocks freed, kept for the next allocation: a malloc/free pair then
	 * costs no trip through the slab allocator.
	 */
	struct hlist_head spare;
	unsigned int nr_spare;
	struct hlist_head stacks[1 << MTR_LEAK_STACK_BITS];
	struct hlist_head threads[1 << MTR_LEAK_THREAD_BITS];
	unsigned int nr_threads;
	struct memtrack_leak_stats st;
	struct mtr_unwind *unwind;	/* leak_unwind.c; under mtr_leak_lock */
	/*
	 * Stacks being completed in their thread's own context once the CFI
	 * pages they need are faulted in (leak_probe.c): the session's
	 * probes are not gone until these are done.
	 */
	atomic_t refills;
	unsigned int nr_probes;
	struct mtr_leak_probe probes[];
};

/* leak_table.c: the session's tables; the caller holds s->lock. */
int mtr_leak_table_init(void);
void mtr_leak_table_exit(void);
struct mtr_leak_block *mtr_leak_block_alloc(void);	/* no lock needed */
void mtr_leak_block_free(struct mtr_leak_block *b);	/* no lock needed */
struct mtr_leak_block *mtr_leak_block_spare(struct mtr_leak_session *s);
void mtr_leak_block_recycle(struct mtr_leak_session *s,
			    struct mtr_leak_block *b);
struct mtr_leak_block *mtr_leak_block_find(struct mtr_leak_session *s,
					   pid_t tgid, unsigned long addr);
void mtr_leak_block_drop(struct mtr_leak_session *s, struct mtr_leak_block *b);
u32 mtr_leak_stack_hash(pid_t tgid, u32 api, const u64 *frames, u32 nr);
struct mtr_leak_stack *mtr_leak_stack_find(struct mtr_leak_session *s,
					   u32 hash, pid_t tgid, u32 api,
					   const u64 *frames, u32 nr);
struct mtr_leak_stack *mtr_leak_stack_get(struct mtr_leak_session *s,
					  u32 hash, pid_t tgid, u32 api,
					  const u64 *frames, u32 nr,
					  struct mtr_leak_stack **fresh);
struct mtr_leak_thread *mtr_leak_thread_find(struct mtr_leak_session *s,
					     pid_t tid);
struct mtr_leak_thread *
mtr_leak_thread_get(struct mtr_leak_session *s, struct mtr_leak_thread **tfresh);
struct mtr_leak_thread *mtr_leak_thread_unlink(struct mtr_leak_session *s,
					       pid_t tid);
struct mtr_leak_stack *mtr_leak_remove(struct mtr_leak_session *s,
				       pid_t tgid, unsigned long addr,
				       u32 api);
void mtr_leak_insert(struct mtr_leak_session *s,
		     struct mtr_leak_block *b, pid_t tgid,
		     unsigned long addr, const struct mtr_leak_call *c);
struct mtr_leak_kid *mtr_leak_kid_find(struct mtr_leak_session *s,
				       pid_t tgid, struct mm_struct *mm);
void mtr_leak_tables_drop(struct mtr_leak_session *s, pid_t tgid);
int mtr_leak_tables_alloc(struct mtr_leak_session *s);
void mtr_leak_tables_free(struct mtr_leak_session *s);

/* leak_probe.c: the uprobe handlers. */
void mtr_leak_probe_handlers(struct mtr_leak_probe *p);

/* leak_session.c: sessions, and the hooks that end them. */
int mtr_leak_init(void);
void mtr_leak_exit(void);
void mtr_leak_task_exit(struct task_struct *task);
void mtr_leak_task_exec(struct task_struct *task);
void mtr_leak_task_fork(struct task_struct *task, unsigned long clone_flags);

/* leak_fd.c */
bool mtr_leak_fd_request(u32 api, struct pt_regs *regs,
			 struct mtr_leak_call *c);
unsigned int mtr_leak_fd_result(const struct mtr_leak_call *c,
				unsigned long ret, unsigned long keys[2]);
void mtr_leak_fd_validate(struct mtr_leak_session *s);

struct mtr_leak_probe_req {
	const char *path;
	u64 offset;
	u32 api;
};

int mtr_leak_attach(pid_t tgid, const struct mtr_leak_probe_req *req,
		    unsigned int nr, u32 flags, struct net *net, u32 portid,
		    struct netlink_ext_ack *extack);
int mtr_leak_arm(pid_t tgid, struct netlink_ext_ack *extack);
int mtr_leak_detach(pid_t tgid);
int mtr_leak_get_stats(pid_t tgid, struct memtrack_leak_stats *st);

struct mtr_leak_session *mtr_leak_lock_mine(pid_t tgid, int *err);
void mtr_leak_unlock(void);

/* A LEAK_STACKS or LEAK_BLOCKS snapshot: attribute payloads back to back. */
struct mtr_leak_snap {
	size_t len;
	size_t pos;			/* next to send */
	u8 data[];
};

/* leak_stacks.c: a LEAK_STACKS snapshot, struct memtrack_leak_stack each. */
int mtr_leak_snapshot(pid_t tgid, u64 min_age_ns, bool all,
		      struct mtr_leak_snap **out);

/* leak_blocks.c: a LEAK_BLOCKS snapshot, struct memtrack_leak_block each. */
int mtr_leak_blocks_snapshot(pid_t tgid, struct mtr_leak_snap **out);

/* One LEAK_UNWIND message: a chunk of a mapping's unwind table. */
struct mtr_unwind_chunk {
	u64 start, end, bias;
	u64 eh_frame_hdr;		/* rules from there, not rows (nr 0) */
	u32 nr_rows, first_row;
	u32 nr;				/* rows in this chunk */
	const struct memtrack_unwind_row *rows;
};

int mtr_leak_set_unwind(pid_t tgid, const struct mtr_unwind_chunk *c,
			struct netlink_ext_ack *extack);

/* leak_unwind.c */
int mtr_leak_unwind_init(void);
void mtr_leak_unwind_exit(void);
u32 mtr_leak_unwind_user(struct mtr_leak_session *s, struct pt_regs *regs,
			 unsigned long ra, u64 *frames, unsigned long *fault);
int mtr_leak_unwind_add(struct mtr_leak_session *s,
			const struct mtr_unwind_chunk *c,
			struct netlink_ext_ack *extack);
void mtr_leak_unwind_free(struct mtr_leak_session *s);

/* leak_ehframe.c: a mapping whose rules are read from its .eh_frame_hdr */
struct mtr_ehframe {
	unsigned long hdr;		/* where it is in the target; 0: rows */
	unsigned long table;		/* its search table once read, else 0 */
	u32 count;			/* entries of the table */
	bool broken;			/* not a header we read: no rules */
};

int mtr_leak_ehframe_init(void);
void mtr_leak_ehframe_exit(void);
int mtr_leak_ehframe_row(struct mtr_ehframe *eh, unsigned long pc,
			 struct memtrack_unwind_row *row, unsigned long *fault);

#endif /* MEMTRACK_LEAK_H */
