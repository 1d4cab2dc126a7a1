/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The shared state of memtrack-leak's in-process engine: the layout of the
 * memory that libmemtrack-preload.so (loaded into the traced program with
 * LD_PRELOAD) writes and memtrack-leak reads, its one interface.
 *
 * The tool creates a memfd of MTP_SIZE bytes (sparse: only what is used is
 * ever touched), puts its header in place and starts the program with
 *   LD_PRELOAD=.../libmemtrack-preload.so  MEMTRACK_PRELOAD=FD:PID:FLAGS
 * The library maps it MAP_SHARED on the first allocator call and then only
 * writes to it: no system call and no lock shared by all threads per call.
 * With -p the memfd is made in the running target, the library loaded
 * into it and told the descriptor (memtrack_inject_attach(), the fields
 * after the counters).
 * The state survives the program (the tool holds the memfd), so a program
 * that calls _exit or is killed still gets its report.  Forked children
 * share the mapping: with MTP_F_FOLLOW they record under their own tgid,
 * otherwise they stop recording.
 *
 * Everything below is offsets into the mapping (the two sides map it at
 * different addresses), little-endian, naturally aligned; the tool checks
 * every offset and count it reads against MTP_SIZE, so a corrupt state
 * gives an error, never a crash of the tool.
 */
#ifndef MEMTRACK_PRELOAD_H
#define MEMTRACK_PRELOAD_H

#include <stdint.h>

#define MTP_MAGIC	0x6c70746dU	/* "mtpl" */
#define MTP_VERSION	4
#define MTP_ENV		"MEMTRACK_PRELOAD"
#define MTP_MEMFD_NAME	"memtrack-leak"
/* injected (memtrack-leak -p): the library's memfd in the target */
#define MTP_LIB_MEMFD_NAME	"memtrack-preload"
/*
 * Its entry points, which the tool calls in the target:
 *   memtrack_inject_attach(int lib_fd, uint32_t flags, int watch_fd)
 *   memtrack_inject_detach(void)
 * watch_fd: the read end of a pipe whose only write end the tool holds;
 * its hangup ends the session.
 * and what the attach answers (struct mtp_inject_info), read by the tool
 * in the target's memory.
 */
#define MTP_INJECT_ATTACH	"memtrack_inject_attach"
#define MTP_INJECT_DETACH	"memtrack_inject_detach"
#define MTP_INJECT_INFO		"memtrack_inject_info"

/* Virtual size of the state; pages are touched only as they are used. */
#define MTP_SIZE		(4ULL << 30)
#define MTP_MAX_FRAMES		64	/* MEMTRACK_LEAK_MAX_FRAMES */
#define MTP_MAX_STACKS		(1U << 20)
#define MTP_STACK_SLOTS		(1U << 21)	/* hash slots, power of 2 */
#define MTP_SHARDS		256	/* block table shards, power of 2 */
#define MTP_SHARD_MIN		256	/* slots of a new shard table */
#define MTP_MAX_OBJECTS		1024
#define MTP_PATH_MAX		512
#define MTP_MAX_EXECED		256	/* followed children that exec'd */
/*
 * A thread's young blocks, a power of 2: direct-mapped, a new block evicts
 * a live one to the shared table with the chance live/slots (256 slots: 9%
 * of the pairs of a loop keeping 32 blocks live; 1024: 2.3%).  32 KiB of the
 * sparse state a thread.
 */
#define MTP_YOUNG_SLOTS		1024
#define MTP_MAX_YOUNG		4096	/* young buffers (threads at once) */
#define MTP_CLOCK_MS		10	/* mtp_header.now_ns's period */

/* MEMTRACK_PRELOAD's FLAGS (hex), set by the tool. */
#define MTP_F_FOLLOW	(1U << 0)	/* -f: forked children too */
#define MTP_F_FDS	(1U << 1)	/* --fds: descriptors, not memory */
#define MTP_F_EXIT_WAIT	(1U << 2)	/* at exit, wait for the tool (--scan) */

/*
 * mtp_header.inject: where an injected library's session is (the tool
 * reads it after each of its calls into the target).
 */
enum mtp_inject {
	MTP_INJECT_NONE,		/* the library has not answered */
	MTP_INJECT_ATTACHED,		/* slots taken, recording */
	MTP_INJECT_FAILED,		/* attach refused: inject_err */
	MTP_INJECT_DETACHED,		/* slots restored; the state is still mapped */
	MTP_INJECT_RELEASED,		/* ... and unmapped, its descriptors closed */
};

struct mtp_inject_info {
	uint32_t seq;			/* the attach's number, 1 up */
	uint32_t status;		/* enum mtp_inject */
	int32_t err;			/* -errno of a refusal */
	int32_t state_fd;		/* the state's memfd, in the target */
	uint32_t nr_slots;		/* GOT slots taken */
};

/* mtp_header.state: where the program is. */
enum mtp_state {
	MTP_STATE_NEW,			/* the library has not run yet */
	MTP_STATE_RUNNING,		/* recording */
	MTP_STATE_EXITING,		/* in exit(), after its handlers */
	MTP_STATE_EXECED,		/* the program exec'd another */
};

/*
 * One call stack: frames[0] is the allocator's caller.  Written once
 * before it is published in the hash; then only the counters change.
 */
struct mtp_stack {
	uint64_t hash;
	uint32_t nr_frames;
	uint32_t api;			/* enum memtrack_leak_api */
	uint64_t total_allocs;		/* atomic */
	uint64_t total_bytes;		/* atomic */
	uint32_t mismatched;		/* atomic */
	uint32_t free_api;		/* of the last mismatched free */
	uint32_t free_stack_id;
	uint32_t pad;
	uint64_t frames[];
};

/*
 * One outstanding block (or descriptor: addr is the fd, size 0).  addr 0
 * is an empty slot, MTP_TOMB a freed one.
 */
#define MTP_TOMB	1ULL
struct mtp_block {
	uint64_t addr;
	uint64_t size;
	uint64_t time_ns;		/* mtp_header.now_ns then */
	uint32_t stack_id;		/* 0: no stack */
	uint32_t tgid;
};

/* An open-addressing table of blocks, under its shard's lock. */
struct mtp_shard {
	uint32_t lock;			/* 0 free, 1 taken */
	/*
	 * Odd while a rehash moves the table (under the lock), bumped again
	 * when table and slots are the new ones: a reader (the tool) copies
	 * the table between two equal even reads, for the old table goes
	 * back to the arena's free tables, where any shard may take it.
	 */
	uint32_t seq;
	uint64_t table;			/* offset of struct mtp_block[slots] */
	uint64_t slots;			/* power of 2 */
	uint64_t used;			/* live + tombstones */
	uint64_t live;
};

/*
 * A thread's young blocks: what it allocated last, direct-mapped by hash,
 * before they go to the shared table (a block freed young, by the thread
 * that allocated it, never takes a lock).  Another thread freeing one
 * claims it with a compare-and-swap of addr; a thread's buffer is
 * emptied into the table when the thread ends and is then free to take.
 * A block may be both here and in a shard for a moment: the tool counts
 * it once.
 */
struct mtp_young {
	uint32_t tgid;
	uint32_t owned;			/* a live thread uses it */
	/*
	 * The thread's allocations from one stack not yet added to its
	 * totals (added when it allocates from another, or ends): the tool
	 * adds them itself.
	 */
	uint32_t calls_id;
	uint32_t pad;
	uint64_t calls, call_bytes;
	struct mtp_block e[MTP_YOUNG_SLOTS];
};

/* An object the unwinder met: for symbolization after the program ends. */
struct mtp_object {
	uint64_t base;			/* load bias */
	uint64_t lo, hi;		/* an executable range */
	uint32_t tgid;			/* which process saw it */
	uint32_t pad;
	char path[MTP_PATH_MAX];
};

/* Only what is rare is counted: nothing shared is written per call. */
struct mtp_counters {
	uint64_t unknown_frees;
	uint64_t mismatched_frees;
	uint64_t dropped_allocs;	/* out of state memory */
	uint64_t dropped_stacks;	/* stack table full */
	uint64_t unknown_closes;
	uint64_t fds_closed_unseen;	/* found closed at the exit */
};

struct mtp_header {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	/* by the tool */
	uint32_t flags;			/* MTP_F_* */
	int32_t target;			/* the pid it started */
	/*
	 * CLOCK_MONOTONIC, set every MTP_CLOCK_MS while the program runs: a
	 * block's time is a load of it, not a clock read per allocation
	 * (the vDSO's coarse clock was 6% of an allocation-bound program's
	 * time), and a report's ages need no finer grain.
	 */
	uint64_t now_ns;
	/* by the library */
	uint32_t state;			/* enum mtp_state; a futex word */
	uint32_t tool_done;		/* futex word: the tool answered an exit wait */
	int32_t exit_tid;		/* the thread in exit() (MTP_F_EXIT_WAIT) */
	uint32_t nr_exit_frames;	/* its stack there: */
	uint64_t exit_pcs[MTP_MAX_FRAMES], exit_sps[MTP_MAX_FRAMES];
	uint32_t nr_stacks;		/* ids 1..nr_stacks (atomic) */
	uint32_t nr_objects;		/* (atomic) */
	uint32_t objects_lock;
	uint64_t arena;			/* bump pointer: next free offset (atomic) */
	uint64_t arena_lock;		/* free lists of shard tables */
	uint64_t free_tables[48];	/* by log2 of slots: a list of offsets */
	struct mtp_counters c;		/* atomic */
	/* injected (memtrack_inject_attach(), inject.c): by the library */
	uint32_t inject;		/* enum mtp_inject */
	int32_t inject_err;		/* -errno of a refused attach */
	uint32_t nr_slots;		/* GOT slots taken */
	int32_t watch_tid;		/* the watchdog thread, once it runs */
	uint32_t nr_restored;		/* GOT slots given back at the detach */
	uint32_t pad3;
	/*
	 * Followed children (-f) that exec'd: their blocks belong to a program
	 * that is gone, and are not reported (as the uprobe engine drops them).
	 */
	uint32_t nr_execed;		/* (atomic) */
	int32_t execed[MTP_MAX_EXECED];
	uint32_t nr_young;		/* (atomic) */
	uint32_t pad2;
	/* offsets of struct mtp_young; 0: counted, not published yet */
	uint64_t young[MTP_MAX_YOUNG];
	struct mtp_shard shards[MTP_SHARDS];
	uint64_t stack_off[MTP_MAX_STACKS + 1];		/* by id */
	uint32_t stack_slot[MTP_STACK_SLOTS];		/* hash -> id */
	struct mtp_object objects[MTP_MAX_OBJECTS];
};

#endif
