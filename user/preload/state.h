/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload's core (state.c): the shared state, the tables in it,
 * and what each thread keeps.  The hooks (alloc_hooks.c, fd_hooks.c) call
 * only this and the unwinder (cfi.h).
 */
#ifndef MEMTRACK_PRELOAD_STATE_H
#define MEMTRACK_PRELOAD_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "memtrack_preload.h"
#include "cfi.h"

#define PL_TLS	__attribute__((tls_model("initial-exec")))
#define PL_HIDDEN	__attribute__((visibility("hidden")))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * The walks a thread recorded, by where they started (the hook's caller's
 * pc and sp): a place that allocates again over the same stack words has
 * its stack for a compare per word, without a walk or an intern.  Several
 * of them: an interpreter's loop allocates from a few places in turn.
 */
#define PL_WALKS_BITS	5
struct pl_walked {
	uint32_t id, api;		/* id 0: none */
	struct pl_walk w;
};

/*
 * A thread's caches (~58 KiB), in memory of their own (thread.c), not in
 * the TLS: glibc puts a library's static TLS in every thread's stack, and
 * refuses a thread whose stack cannot hold it (EINVAL for a
 * PTHREAD_STACK_MIN stack) or leaves it that much less stack.  A thread
 * takes one at its first walk and gives it back at its end; the next
 * thread of the process takes it over.
 */
struct pl_cache {
	struct pl_cfi_memo memo;
	struct pl_walked walks[1 << PL_WALKS_BITS];
	uint32_t owned;			/* by a live thread */
};

/*
 * What a thread keeps: busy while it is inside a hook (nested calls pass);
 * the rest is of the session gen (injected, a process has one per attach:
 * a thread's first call of a session starts it afresh, pl_thread_join()).
 */
struct pl_thread {
	int busy;
	uint32_t gen;
	uint32_t last_id;		/* the last stack it recorded */
	uint64_t last_hash;
	/* its young blocks and its call counts (NULL: none yet) */
	struct mtp_young *young;
	struct pl_cache *cache;		/* its caches (NULL: none yet) */
};

extern __thread struct pl_thread pl_self PL_TLS PL_HIDDEN;

/* The thread's caches: its own, or one taken now; NULL if none can be. */
PL_HIDDEN struct pl_cache *pl_cache_get(void);
static inline struct pl_cache *pl_cache(void)
{
	struct pl_cache *c = pl_self.cache;

	return likely(c) ? c : pl_cache_get();
}

/* At the start (pthread keys) and in a forked child (the others' freed). */
PL_HIDDEN void pl_cache_init(void);
PL_HIDDEN void pl_cache_after_fork(void);
/* At a detach, once no thread is in a hook: every cache unmapped. */
PL_HIDDEN void pl_caches_release(void);

/*
 * The session (thread.c): a new one begins at each attach and ends at its
 * detach, when pl_gen moves on; 0 before the first.  A thread entering a
 * hook of a session it has not seen joins it: its per-session state is
 * dropped and it is registered, so that a detach can see whether it is
 * inside a hook (pl_threads_idle()).  false: no room to register it (its
 * calls then pass unrecorded).
 */
extern uint32_t pl_gen PL_HIDDEN;
PL_HIDDEN bool pl_thread_join(void);
PL_HIDDEN bool pl_threads_idle(void);
/* A new session: the registry emptied (no thread is in a hook). */
PL_HIDDEN void pl_threads_reset(void);

/* What the program's calls are recorded for (pl_on, pl_enter()). */
#define PL_MEM		(1 << 0)	/* the allocator */
#define PL_FD		(1 << 1)	/* descriptors (--fds) */

/* PL_* bits: recording; 0: not started yet; < 0: never (not our process). */
extern int pl_on PL_HIDDEN;
extern struct mtp_header *pl_hdr PL_HIDDEN;

/*
 * Start once, from the first hook any thread enters (before main: the
 * constructors of libraries allocate).  Returns pl_on.  Called with
 * pl_self.busy set: what it allocates goes to the real allocator.
 */
PL_HIDDEN int pl_start(void);

/*
 * The state's memfd fd mapped and claimed (0, or a negative errno:
 * -EPROTO if it is not a fresh state of this version); then started:
 * tables, keys, a new session.  Returns the value for pl_on.  Released:
 * unmapped, fd closed, the threads' caches unmapped (no thread may be in
 * a hook).
 */
PL_HIDDEN int pl_state_map(int fd);
PL_HIDDEN int pl_state_start(void);
PL_HIDDEN void pl_state_release(void);

/*
 * Hooks enter: true if this call is to be recorded as kind (PL_*; busy is
 * then set until pl_leave()).
 */
static inline bool pl_enter(int kind)
{
	int on;

	if (pl_self.busy)
		return false;
	pl_self.busy = 1;
	on = __atomic_load_n(&pl_on, __ATOMIC_ACQUIRE);
	if (unlikely(!on))
		on = pl_start();
	if (likely(on > 0 && (on & kind)) &&
	    likely(pl_self.gen == __atomic_load_n(&pl_gen, __ATOMIC_RELAXED) ||
		   pl_thread_join()))
		return true;
	pl_self.busy = 0;
	return false;
}

static inline void pl_leave(void)
{
	pl_self.busy = 0;
}

/* The stack of the hook's caller, interned: its id (0: none, table full). */
PL_HIDDEN uint32_t pl_stack(const struct pl_regs *r, uint32_t api);
/* A block (or descriptor, fd key) allocated through stack id. */
PL_HIDDEN void pl_block_add(uint64_t addr, uint64_t size, uint32_t stack_id);
/* pl_block_add(addr, size, pl_stack(r, api)) in one call: the hooks' path. */
PL_HIDDEN void pl_record(uint64_t addr, uint64_t size, uint32_t api,
			 const struct pl_regs *r);
/*
 * Take a block out as it is released by api; a release by the wrong API is
 * noted on its allocating stack with the releasing stack (frame: the
 * hook's PL_FRAME_HERE, walked only then).  Returns whether it was there;
 * *out gets it (for realloc's failure).
 */
PL_HIDDEN bool pl_block_del(uint64_t addr, uint32_t api,
			    const struct pl_frame *frame,
			    struct mtp_block *out);
/* Add the thread's call counts (in its young buffer) to their stack. */
PL_HIDDEN void pl_flush_calls(void);
/* Take out a descriptor replaced by dup2()/dup3(), not a release: silently. */
PL_HIDDEN void pl_block_forget(uint64_t addr);
/* Put back a block pl_block_del() took (realloc failed). */
PL_HIDDEN void pl_block_restore(const struct mtp_block *b);

/* Descriptors share the block table under keys blocks cannot have. */
#define PL_FD_KEY(fd)	((1ULL << 62) | (uint32_t)(fd))

/* At the program's exit (exit(), _exit()): wait for the tool if asked. */
PL_HIDDEN void pl_exiting(void);
/* Before an exec (before: true), and after one that failed (false). */
PL_HIDDEN void pl_execing(bool before);

#endif
