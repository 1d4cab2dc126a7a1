/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memtrack: the interface between memtrack.ko and user space.
 *
 * Everything user space may rely on is defined here (and the counter list in
 * memtrack_counters.h) and nowhere else: the records of /dev/memtrack and of
 * the netlink "events" group, the ioctls, the generic netlink family, and the
 * text files under /proc/memtrack, whose column and key names only ever grow.
 * MEMTRACK_ABI_VERSION changes when anything changes meaning or goes away.
 *
 * Structures only grow at their end; a reader checks the size it is given
 * (record size, attribute length) and ignores what it does not know.
 */
#ifndef _UAPI_LINUX_MEMTRACK_H
#define _UAPI_LINUX_MEMTRACK_H

#include <linux/types.h>
#include <linux/ioctl.h>

#include "memtrack_unwind.h"

/*
 * 2: struct memtrack_task's counters[] moved to its end, so that a counter
 * appended to memtrack_counters.h grows it at its end.
 */
#define MEMTRACK_ABI_VERSION	2

#define MEMTRACK_PROC_DIR	"/proc/memtrack"
#define MEMTRACK_DEVICE		"/dev/memtrack"

/* Limits of the writable knobs in /proc/memtrack/config and SET_CONFIG. */
#define MEMTRACK_RETENTION_MS_DEFAULT	15000
#define MEMTRACK_RETENTION_MS_MAX	3600000
/*
 * RSS growth alerts (MEMTRACK_REC_RSS_GROWTH), sampled once a second: a
 * process whose RSS crosses rss_alert_kb, or grows by more than
 * rss_growth_kbps KiB per second.  0 turns either off.
 */
#define MEMTRACK_RSS_ALERT_KB_DEFAULT		0
#define MEMTRACK_RSS_GROWTH_KBPS_DEFAULT	65536

/* Per-CPU buffer of each reader, KiB: a power of two in this range. */
#define MEMTRACK_RING_KB_DEFAULT	256
#define MEMTRACK_RING_KB_MIN		8
#define MEMTRACK_RING_KB_MAX		65536

/* ---- counters -------------------------------------------------------- */

#define MEMTRACK_COUNTER(id, ...) MEMTRACK_CTR_##id,
enum memtrack_counter {
#include "memtrack_counters.h"
	MEMTRACK_NR_COUNTERS
};
#undef MEMTRACK_COUNTER

/* What a counter's number is (memtrack_counters.h's UNIT). */
enum memtrack_counter_unit {
	MEMTRACK_UNIT_COUNT,		/* events */
	MEMTRACK_UNIT_BYTES,
	MEMTRACK_UNIT_NS,		/* nanoseconds */
	MEMTRACK_UNIT_NET_BYTES,	/* signed, two's complement: net growth */
};

#define MEMTRACK_COMM_LEN	16

/* A process's address space, in bytes (as in /proc/PID/status). */
struct memtrack_mm {
	__u64 rss_anon;
	__u64 rss_file;
	__u64 rss_shmem;
	__u64 swap;
	__u64 rss_peak;
	__u64 vm_total;
	__u64 vm_data;
	__u64 vm_stack;
	__u64 vm_exec;
	__u64 pgtables;
};

/* One row of /proc/memtrack/tasks or threads, binary. */
struct memtrack_task {
	__s32 pid;			/* tid for a thread */
	__s32 tgid;
	__u32 uid;
	__u32 threads;			/* live threads; 1 for a thread */
	__u8 exited;			/* kept for the retention time */
	__u8 detailed;			/* counters[] beyond faults are valid */
	__u8 oom_victim;
	__u8 pad;
	__u32 fail_gfp;			/* gfp of the last failed page alloc */
	char comm[MEMTRACK_COMM_LEN];
	struct memtrack_mm mm;
	/* As /proc/PID/stat and /proc/PID/cgroup; 0 for an exited task. */
	__s32 ppid;			/* tgid of the parent */
	__u32 pad2;
	__u64 cgroup_id;		/* cgroup v2 id = its directory's inode */
	__u64 utime_ns;			/* for a process: all threads, dead too */
	__u64 stime_ns;
	__u64 start_ns;			/* start, ns since boot (CLOCK_BOOTTIME) */
	/*
	 * Last, so that a counter appended grows the structure at its end:
	 * a reader given fewer bytes has the counters before them.
	 */
	__u64 counters[MEMTRACK_NR_COUNTERS];
};

/* ---- records: read(2) on /dev/memtrack, and netlink "events" ----------- */

struct memtrack_rec_hdr {
	__u16 type;			/* enum memtrack_rec_type */
	__u16 size;			/* whole record, a multiple of 8 */
	__u32 cpu;
	__u64 time_ns;			/* CLOCK_MONOTONIC */
	__s32 pid;			/* the thread that caused it */
	__s32 tgid;
};

enum memtrack_rec_type {
	MEMTRACK_REC_LOST = 1,		/* memtrack_rec_lost */
	MEMTRACK_REC_TASK_NEW,		/* memtrack_rec_task_new */
	MEMTRACK_REC_TASK_EXIT,		/* memtrack_rec_task_exit */
	MEMTRACK_REC_MMAP,		/* memtrack_rec_map */
	MEMTRACK_REC_MUNMAP,		/* memtrack_rec_map */
	MEMTRACK_REC_MREMAP,		/* memtrack_rec_mremap */
	MEMTRACK_REC_BRK,		/* memtrack_rec_brk */
	MEMTRACK_REC_SHM,		/* memtrack_rec_shm */
	MEMTRACK_REC_OOM_VICTIM,	/* memtrack_rec_oom */
	MEMTRACK_REC_RECLAIM_STALL,	/* memtrack_rec_reclaim */
	MEMTRACK_REC_PAGE_ALLOC_FAIL,	/* memtrack_rec_page */
	MEMTRACK_REC_RSS_GROWTH,	/* memtrack_rec_rss */
	MEMTRACK_REC_PAGE_ALLOC,	/* memtrack_rec_page */
	MEMTRACK_REC_PAGE_FREE,		/* memtrack_rec_page */
	MEMTRACK_REC_KMALLOC,		/* memtrack_rec_kmalloc */
	MEMTRACK_REC_KFREE,		/* memtrack_rec_kmalloc */
	__MEMTRACK_REC_MAX
};

/*
 * Event classes a reader subscribes to.  LOST is always delivered.  PAGE and
 * KMALLOC are high-volume: they are only delivered with a pid or tgid filter.
 */
#define MEMTRACK_CLASS_TASK		(1U << 0)	/* TASK_NEW, TASK_EXIT */
#define MEMTRACK_CLASS_MMAP		(1U << 1)	/* MMAP MUNMAP MREMAP BRK */
#define MEMTRACK_CLASS_SHM		(1U << 2)
#define MEMTRACK_CLASS_OOM		(1U << 3)
#define MEMTRACK_CLASS_RECLAIM		(1U << 4)
#define MEMTRACK_CLASS_ALLOC_FAIL	(1U << 5)
#define MEMTRACK_CLASS_RSS		(1U << 6)
#define MEMTRACK_CLASS_PAGE		(1U << 7)	/* PAGE_ALLOC, PAGE_FREE */
#define MEMTRACK_CLASS_KMALLOC		(1U << 8)	/* KMALLOC, KFREE */
#define MEMTRACK_CLASS_ALL		((1U << 9) - 1)
#define MEMTRACK_CLASS_DEFAULT		(MEMTRACK_CLASS_ALL & \
	~(MEMTRACK_CLASS_PAGE | MEMTRACK_CLASS_KMALLOC))

struct memtrack_rec_lost {
	struct memtrack_rec_hdr h;
	__u64 lost;			/* records dropped before this one */
};

struct memtrack_rec_task_new {
	struct memtrack_rec_hdr h;	/* pid/tgid: the new task */
	__s32 parent_pid;
	__u32 uid;
	__u64 clone_flags;
	char comm[MEMTRACK_COMM_LEN];
};

struct memtrack_rec_task_exit {
	struct memtrack_rec_hdr h;
	__u32 uid;
	__u32 process_exit;		/* 1: last thread, counters are the process's */
	char comm[MEMTRACK_COMM_LEN];
	struct memtrack_mm mm;		/* at exit, before teardown */
	__u64 counters[MEMTRACK_NR_COUNTERS];	/* final */
};

struct memtrack_rec_map {
	struct memtrack_rec_hdr h;
	__u64 addr;			/* mmap: the address returned */
	__u64 len;
	__u32 prot;			/* mmap only */
	__u32 flags;			/* mmap only */
};

struct memtrack_rec_mremap {
	struct memtrack_rec_hdr h;
	__u64 old_addr;
	__u64 old_len;
	__u64 new_addr;
	__u64 new_len;
};

struct memtrack_rec_brk {
	struct memtrack_rec_hdr h;
	__u64 old_brk;
	__u64 new_brk;
};

enum memtrack_shm_op {
	MEMTRACK_SHM_GET = 1,
	MEMTRACK_SHM_AT,
	MEMTRACK_SHM_DT,
};

struct memtrack_rec_shm {
	struct memtrack_rec_hdr h;
	__u32 op;			/* enum memtrack_shm_op */
	__s32 shmid;			/* GET: returned; AT: argument */
	__u64 addr;			/* AT: returned; DT: argument */
	__u64 size;			/* GET: argument */
};

struct memtrack_rec_oom {
	struct memtrack_rec_hdr h;	/* pid/tgid: who triggered the OOM */
	__s32 victim_pid;
	__s32 victim_tgid;
	__u32 victim_uid;
	__u32 pad;
	__u64 victim_rss;		/* bytes */
	char victim_comm[MEMTRACK_COMM_LEN];
};

struct memtrack_rec_reclaim {
	struct memtrack_rec_hdr h;
	__u64 duration_ns;
	__u64 nr_reclaimed;
};

struct memtrack_rec_page {
	struct memtrack_rec_hdr h;
	__u64 pfn;			/* ~0 for a failed allocation */
	__u32 order;
	__u32 gfp;
};

/* A task whose RSS grew past the threshold, or faster than the rate. */
struct memtrack_rec_rss {
	struct memtrack_rec_hdr h;
	__u64 rss;			/* bytes, now */
	__u64 prev_rss;			/* bytes, window_ns ago */
	__u64 window_ns;
};

struct memtrack_rec_kmalloc {
	struct memtrack_rec_hdr h;
	__u64 call_site;		/* 0 unless the reader may see it */
	__u64 ptr;			/* 0 unless the reader may see it */
	__u64 bytes_req;		/* KMALLOC only */
	__u64 bytes_alloc;		/* KMALLOC only */
	__u32 gfp;
	__u32 pad;
};

/* ---- /dev/memtrack ioctls ---------------------------------------------- */

struct memtrack_filter {
	__u32 classes;			/* MEMTRACK_CLASS_* */
	__u32 flags;			/* must be 0 */
	__s32 pid;			/* only this thread, 0: any */
	__s32 tgid;			/* only this process, 0: any */
};

struct memtrack_ring_stats {
	__u64 delivered;		/* records read by this opener */
	__u64 lost;			/* records dropped for this opener */
	__u64 pending;			/* bytes waiting in its buffers */
	__u32 ring_bytes;		/* size of each per-CPU buffer */
	__u32 nr_cpus;
	__u64 generated;		/* records for it; = delivered + lost once drained */
};

#define MEMTRACK_IOC_MAGIC	0xB7
#define MEMTRACK_IOC_GET_VERSION	_IOR(MEMTRACK_IOC_MAGIC, 0, __u32)
#define MEMTRACK_IOC_SET_FILTER		_IOW(MEMTRACK_IOC_MAGIC, 1, struct memtrack_filter)
#define MEMTRACK_IOC_GET_FILTER		_IOR(MEMTRACK_IOC_MAGIC, 2, struct memtrack_filter)
#define MEMTRACK_IOC_GET_STATS		_IOR(MEMTRACK_IOC_MAGIC, 3, struct memtrack_ring_stats)

/* ---- generic netlink family "memtrack" ---------------------------------- */

#define MEMTRACK_GENL_NAME		"memtrack"
#define MEMTRACK_GENL_VERSION		1
#define MEMTRACK_GENL_MCGRP_EVENTS	"events"

enum memtrack_cmd {
	MEMTRACK_CMD_UNSPEC,
	MEMTRACK_CMD_GET_SUMMARY,	/* -> MEMTRACK_ATTR_SUMMARY */
	MEMTRACK_CMD_GET_TASK,		/* PID -> TASK (a process, or a thread with THREAD) */
	MEMTRACK_CMD_GET_TASKS,		/* dump; optional TGID or COMM filter -> TASK each */
	MEMTRACK_CMD_GET_THREADS,	/* dump; TGID -> TASK per thread */
	MEMTRACK_CMD_GET_CONFIG,	/* -> RETENTION_MS, HOOKS */
	MEMTRACK_CMD_SET_CONFIG,	/* RETENTION_MS and/or HOOKS (CAP_SYS_ADMIN) */
	MEMTRACK_CMD_EVENT,		/* multicast: RECORDS */
	MEMTRACK_CMD_LEAK_ATTACH,	/* TGID, LEAK_PROBES [, LEAK_FLAGS] */
	MEMTRACK_CMD_LEAK_DETACH,	/* TGID */
	MEMTRACK_CMD_LEAK_STACKS,	/* dump: TGID [, MIN_AGE_MS] [, LEAK_ALL] -> LEAK_STACK each */
	MEMTRACK_CMD_LEAK_STATS,	/* TGID -> LEAK_STATS */
	MEMTRACK_CMD_LEAK_UNWIND,	/* TGID, LEAK_UNWIND: unwind tables of a mapping */
	MEMTRACK_CMD_LEAK_BLOCKS,	/* dump: TGID -> LEAK_BLOCKS (outstanding blocks) */
	MEMTRACK_CMD_LEAK_ARM,		/* TGID: the probes of an attach with F_ARM_LATER */
	__MEMTRACK_CMD_MAX
};
#define MEMTRACK_CMD_MAX (__MEMTRACK_CMD_MAX - 1)

enum memtrack_attr {
	MEMTRACK_ATTR_UNSPEC,
	MEMTRACK_ATTR_PID,		/* u32 */
	MEMTRACK_ATTR_TGID,		/* u32 */
	MEMTRACK_ATTR_COMM,		/* string, < MEMTRACK_COMM_LEN */
	MEMTRACK_ATTR_THREAD,		/* flag: GET_TASK of a thread */
	MEMTRACK_ATTR_TASK,		/* binary struct memtrack_task */
	MEMTRACK_ATTR_SUMMARY,		/* binary struct memtrack_summary */
	MEMTRACK_ATTR_RETENTION_MS,	/* u32, 0..MEMTRACK_RETENTION_MS_MAX */
	MEMTRACK_ATTR_HOOKS,		/* nested: MEMTRACK_HOOK_ATTR_* per group */
	MEMTRACK_ATTR_RECORDS,		/* binary: whole records, back to back */
	MEMTRACK_ATTR_ABI_VERSION,	/* u32 */
	MEMTRACK_ATTR_PAD,
	MEMTRACK_ATTR_LEAK_PROBES,	/* nested: MEMTRACK_PROBE_ATTR_PROBE each */
	MEMTRACK_ATTR_LEAK_FLAGS,	/* u32: MEMTRACK_LEAK_F_* */
	MEMTRACK_ATTR_MIN_AGE_MS,	/* u32 */
	MEMTRACK_ATTR_LEAK_STACK,	/* binary struct memtrack_leak_stack + frames */
	MEMTRACK_ATTR_LEAK_STATS,	/* binary struct memtrack_leak_stats */
	MEMTRACK_ATTR_LEAK_UNWIND,	/* nested: MEMTRACK_UNWIND_ATTR_* */
	MEMTRACK_ATTR_LEAK_BLOCKS,	/* binary: struct memtrack_leak_block, back to back */
	MEMTRACK_ATTR_LEAK_ALL,		/* flag: LEAK_STACKS also of stacks with no block left */
	__MEMTRACK_ATTR_MAX
};
#define MEMTRACK_ATTR_MAX (__MEMTRACK_ATTR_MAX - 1)

/* Inside MEMTRACK_ATTR_HOOKS: one nest per group. */
enum memtrack_hook_attr {
	MEMTRACK_HOOK_ATTR_UNSPEC,
	MEMTRACK_HOOK_ATTR_GROUP,	/* nested: NAME, ENABLED, ATTACHED, TOTAL */
	MEMTRACK_HOOK_ATTR_NAME,	/* string */
	MEMTRACK_HOOK_ATTR_ENABLED,	/* u8 0/1 */
	MEMTRACK_HOOK_ATTR_ATTACHED,	/* u32, reply only */
	MEMTRACK_HOOK_ATTR_TOTAL,	/* u32, reply only */
	__MEMTRACK_HOOK_ATTR_MAX
};
#define MEMTRACK_HOOK_ATTR_MAX (__MEMTRACK_HOOK_ATTR_MAX - 1)

/* ---- leak tracer ---------------------------------------------------------- */

/*
 * The allocator entry points memtrack-leak can probe.  User space finds them
 * in the objects the target has mapped (ELF symbols -> file offsets) and
 * hands (path, offset, api) triples to LEAK_ATTACH; the module puts uprobes
 * (and uretprobes where the result matters) on them, for the target only.
 */
enum memtrack_leak_api {
	MEMTRACK_API_MALLOC = 1,	/* (size) -> ptr */
	MEMTRACK_API_CALLOC,		/* (n, size) -> ptr */
	MEMTRACK_API_REALLOC,		/* (ptr, size) -> ptr */
	MEMTRACK_API_REALLOCARRAY,	/* (ptr, n, size) -> ptr */
	MEMTRACK_API_FREE,		/* (ptr) */
	MEMTRACK_API_POSIX_MEMALIGN,	/* (&ptr, align, size) -> 0 */
	MEMTRACK_API_ALIGNED_ALLOC,	/* (align, size) -> ptr */
	MEMTRACK_API_MEMALIGN,		/* (align, size) -> ptr */
	MEMTRACK_API_VALLOC,		/* (size) -> ptr */
	MEMTRACK_API_PVALLOC,		/* (size) -> ptr */
	MEMTRACK_API_NEW,		/* operator new(size[, align][, nothrow]) */
	MEMTRACK_API_NEW_ARRAY,		/* operator new[](...) */
	MEMTRACK_API_DELETE,		/* operator delete(ptr[, size][, align]) */
	MEMTRACK_API_DELETE_ARRAY,	/* operator delete[](...) */
	/*
	 * File descriptors (memtrack-leak --fds): each opens one descriptor,
	 * the result, except PIPE and SOCKETPAIR (two, in the int[2] passed),
	 * and CLOSE releases one.  Their "blocks" have size 0 and are counted
	 * apart from memory (the fd_* stats).
	 */
	MEMTRACK_API_OPEN,		/* open, openat, creat (and *64) */
	MEMTRACK_API_SOCKET,		/* socket */
	MEMTRACK_API_SOCKETPAIR,	/* socketpair(d, t, p, int[2]) */
	MEMTRACK_API_PIPE,		/* pipe(int[2]), pipe2 */
	MEMTRACK_API_DUP,		/* dup, dup2, dup3 */
	MEMTRACK_API_ACCEPT,		/* accept, accept4 */
	MEMTRACK_API_EVENTFD,		/* eventfd */
	MEMTRACK_API_MEMFD,		/* memfd_create */
	MEMTRACK_API_EPOLL,		/* epoll_create, epoll_create1 */
	MEMTRACK_API_TIMERFD,		/* timerfd_create */
	MEMTRACK_API_SIGNALFD,		/* signalfd(-1, ...) */
	MEMTRACK_API_INOTIFY,		/* inotify_init, inotify_init1 */
	MEMTRACK_API_FCNTL,		/* fcntl(fd, F_DUPFD[_CLOEXEC], min) */
	MEMTRACK_API_CLOSE,		/* close(fd) */
	__MEMTRACK_API_MAX
};

/*
 * Whether a block allocated through @alloc may be released through
 * @release: new by delete, new[] by delete[], the rest by free() or
 * realloc().  Both tracers (the module's and the in-process one) note a
 * release that does not as mismatched.
 */
static inline int memtrack_leak_api_matches(__u32 alloc, __u32 release)
{
	switch (alloc) {
	case MEMTRACK_API_NEW:
		return release == MEMTRACK_API_DELETE;
	case MEMTRACK_API_NEW_ARRAY:
		return release == MEMTRACK_API_DELETE_ARRAY;
	default:
		return release != MEMTRACK_API_DELETE &&
		       release != MEMTRACK_API_DELETE_ARRAY;
	}
}

enum memtrack_probe_attr {
	MEMTRACK_PROBE_ATTR_UNSPEC,
	MEMTRACK_PROBE_ATTR_PROBE,	/* nested: PATH, OFFSET, API */
	MEMTRACK_PROBE_ATTR_PATH,	/* string: the mapped object */
	MEMTRACK_PROBE_ATTR_OFFSET,	/* u64: file offset of the entry point */
	MEMTRACK_PROBE_ATTR_API,	/* u32: enum memtrack_leak_api */
	__MEMTRACK_PROBE_ATTR_MAX
};
#define MEMTRACK_PROBE_ATTR_MAX (__MEMTRACK_PROBE_ATTR_MAX - 1)

/*
 * Follow the processes the target forks (and theirs) until they exec or
 * exit, in the same session; each stack says its process (tgid).
 */
#define MEMTRACK_LEAK_F_CHILDREN	(1U << 0)
/*
 * Put no probe in at LEAK_ATTACH but at LEAK_ARM: the unwind tables go in
 * between, so that no stack is taken without them (cut at the first frame
 * built without frame pointers).
 */
#define MEMTRACK_LEAK_F_ARM_LATER	(1U << 1)
#define MEMTRACK_LEAK_F_ALL		(MEMTRACK_LEAK_F_CHILDREN | \
					 MEMTRACK_LEAK_F_ARM_LATER)
#define MEMTRACK_LEAK_MAX_FRAMES	64

/*
 * One call stack holding outstanding allocations, or involved in a
 * mismatched free: its allocating stack (mismatched > 0, perhaps no blocks
 * left) and the freeing stack it names (api: free, delete or delete[];
 * never holds blocks).
 */
struct memtrack_leak_stack {
	__u32 stack_id;
	__u32 nr_frames;		/* user return addresses that follow */
	__u64 bytes;			/* outstanding */
	__u64 blocks;
	__u64 oldest_ns;		/* CLOCK_MONOTONIC of the oldest block */
	__u32 api;			/* enum memtrack_leak_api of the allocations */
	__u32 mismatched;		/* frees by the wrong API seen for this stack */
	__u32 free_api;			/* the wrong API of the last mismatched free */
	__u32 free_stack_id;		/* and the stack that called it (0: none) */
	__u64 total_allocs;		/* allocations through this stack, freed or not */
	__u64 total_bytes;
	__u32 tgid;			/* the process (a child with F_CHILDREN) */
	__u32 reserved;
	__u64 frames[];			/* [0]: the allocator's caller */
};

/* One outstanding allocation (LEAK_BLOCKS, for --scan). */
struct memtrack_leak_block {
	__u64 addr;
	__u64 size;
	__u64 time_ns;			/* CLOCK_MONOTONIC of the allocation */
	__u32 stack_id;			/* 0: stack not recorded */
	__u32 api;
};

struct memtrack_leak_stats {
	__u64 allocs;
	__u64 frees;
	__u64 outstanding_bytes;
	__u64 outstanding_blocks;
	__u64 unknown_frees;		/* frees of blocks we never saw allocated */
	__u64 mismatched_frees;		/* new[] freed by delete, malloc by delete, ... */
	__u64 dropped_allocs;		/* table full */
	__u64 dropped_stacks;		/* stack table full */
	__u32 nr_stacks;
	__u32 nr_probes;		/* in place (0 until LEAK_ARM) */
	/* Descriptors: not in the memory counters above. */
	__u64 fd_opens;
	__u64 fd_closes;
	__u64 outstanding_fds;
	__u64 unknown_closes;		/* closes of descriptors never seen opened */
	__u64 fds_closed_unseen;	/* found closed at a report (close_range, ...) */
	/* F_CHILDREN */
	__u32 nr_children;		/* children traced now */
	__u32 children;			/* children followed since attach */
	__u32 dropped_children;		/* not followed: table full */
	__u32 ended;			/* MEMTRACK_LEAK_ENDED_*, 0: running */
	/*
	 * Pages of the target's CFI (LEAK_UNWIND's EH_FRAME_HDR) faulted in
	 * to complete a stack, in the thread's own context.
	 */
	__u64 unwind_faults;
};

/*
 * The traced process exited (its last thread) or exec'd: its probes are
 * gone and the tables hold what was outstanding at that moment, kept for
 * the tracer's last report until it detaches, its socket closes, or
 * leak_keep_ms pass (a setting of /proc/memtrack/config: by default
 * MEMTRACK_LEAK_KEEP_MS, in MEMTRACK_LEAK_KEEP_MS_MIN..MAX).
 */
#define MEMTRACK_LEAK_ENDED_EXIT	1
#define MEMTRACK_LEAK_ENDED_EXEC	2
#define MEMTRACK_LEAK_KEEP_MS		60000
#define MEMTRACK_LEAK_KEEP_MS_MIN	1000
#define MEMTRACK_LEAK_KEEP_MS_MAX	3600000

/*
 * LEAK_UNWIND: the unwind table of one executable mapping of the target, so
 * that the module can walk stacks of code built without frame pointers.
 * User space derives it from the object's .eh_frame/.debug_frame; a table
 * too big for one message goes in several, in order, FIRST_ROW counting the
 * rows already sent (0 starts a table; the last chunk installs it, replacing
 * any table overlapping [START, END)).
 *
 * Or, instead of NR_ROWS, FIRST_ROW and ROWS, EH_FRAME_HDR: where the
 * object's .eh_frame_hdr (PT_GNU_EH_FRAME) is in the target's memory.  The
 * module then reads the rules of the frames it walks there and in the
 * .eh_frame it indexes, as the program's own unwinder would, and nothing
 * is built or sent per row.
 */
enum memtrack_unwind_attr {
	MEMTRACK_UNWIND_ATTR_UNSPEC,
	MEMTRACK_UNWIND_ATTR_START,	/* u64: first address of the mapping */
	MEMTRACK_UNWIND_ATTR_END,	/* u64: past its last address */
	MEMTRACK_UNWIND_ATTR_BIAS,	/* u64: address - ELF vaddr */
	MEMTRACK_UNWIND_ATTR_NR_ROWS,	/* u32: rows of the whole table */
	MEMTRACK_UNWIND_ATTR_FIRST_ROW,	/* u32: index of this chunk's first row */
	MEMTRACK_UNWIND_ATTR_ROWS,	/* binary: struct memtrack_unwind_row[] */
	MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR, /* u64: instead of rows, see above */
	__MEMTRACK_UNWIND_ATTR_MAX
};
#define MEMTRACK_UNWIND_ATTR_MAX (__MEMTRACK_UNWIND_ATTR_MAX - 1)

#define MEMTRACK_UNWIND_MAX_ROWS	(1U << 21)	/* per table */
#define MEMTRACK_UNWIND_MAX_BYTES	(64U << 20)	/* of tables per session */
#define MEMTRACK_UNWIND_MAX_CHUNK	4096		/* rows per message */

/* struct memtrack_unwind_row, the rows of LEAK_UNWIND: memtrack_unwind.h */

/* What GET_SUMMARY returns (the numbers of /proc/memtrack/summary). */
struct memtrack_summary {
	__u32 abi_version;
	__u32 nr_cpus;
	__u64 uptime_ns;		/* since load */
	/* system memory, bytes */
	__u64 mem_total;
	__u64 mem_free;
	__u64 file_pages;
	__u64 active_anon;
	__u64 inactive_anon;
	__u64 active_file;
	__u64 inactive_file;
	__u64 unevictable;
	__u64 dirty;
	__u64 writeback;
	__u64 anon_pages;
	__u64 mapped;
	__u64 shmem;
	__u64 slab_reclaimable;
	__u64 slab_unreclaimable;
	__u64 page_tables;
	__u64 anon_huge;
	__u64 swap_free;
	/* since load */
	__u64 page_alloc_failures;
	__u64 reclaim_scanned;
	__u64 reclaim_reclaimed;
	__u64 reclaim_dirty;
	__u64 reclaim_writeback;
	__u64 direct_reclaim_stalls;
	__u64 direct_reclaim_ns;
	__u64 page_allocs;
	__u64 page_frees;
	__u64 kmallocs;
	__u64 kfrees;
	__u64 address_space_syscalls;
	__u64 forks;
	__u64 exits;
	__u64 oom_kills;
	__u64 records_generated;
	__u64 records_lost;
	/* tasks tracked */
	__u32 processes;
	__u32 processes_exited;
	__u32 threads;
	__u32 threads_exited;
	__u64 untracked;
};

#endif /* _UAPI_LINUX_MEMTRACK_H */
