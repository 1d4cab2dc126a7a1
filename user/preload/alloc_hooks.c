// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's allocator hooks: the APIs memtrack-leak's uprobe
 * engine probes (user/lib/elfsyms.c), defined here so the dynamic loader
 * binds the program's calls to them first.  Each calls the allocator it
 * replaces, then records the block under its caller's stack; a release
 * takes the block out before the allocator gets it back (another thread
 * could be handed the same address at once).  A call made while the
 * thread is in a hook already (libstdc++'s new calling malloc, dlsym's
 * calloc, the unwinder) goes straight to the allocator: it is the outer
 * call's, or ours, and never recorded.
 *
 * Each hook must have a frame pointer (-fno-omit-frame-pointer): the
 * unwinder starts from its frame (pl_regs_here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <linux/memtrack.h>

#include "hooks.h"
#include "real.h"
#include "state.h"

/* After a hook's allocation: the block under its caller's stack. */
#define RECORD(ptr, size, api) do {					\
	struct pl_regs r_;						\
	pl_regs_here(&r_);						\
	pl_record((uint64_t)(ptr), (size), (api), &r_);			\
} while (0)

/* Before a hook's release: the block out, a wrong API noted. */
#define RELEASE(ptr, api, out)						\
	pl_block_del((uint64_t)(ptr), (api), &PL_FRAME_HERE, (out))

void *malloc(size_t n)
{
	void *p;

	if (!pl_enter(PL_MEM))
		return pl_real.malloc(n);
	p = pl_real.malloc(n);
	if (p)
		RECORD(p, n, MEMTRACK_API_MALLOC);
	pl_leave();
	return p;
}
PL_HOOK_ALIAS(malloc);

void *calloc(size_t n, size_t size)
{
	void *p;

	if (!pl_enter(PL_MEM))
		return pl_real.calloc(n, size);
	p = pl_real.calloc(n, size);
	if (p)
		RECORD(p, n * size, MEMTRACK_API_CALLOC);
	pl_leave();
	return p;
}
PL_HOOK_ALIAS(calloc);

void free(void *p)
{
	struct mtp_block b;

	if (!p || !pl_enter(PL_MEM)) {
		pl_real.free(p);
		return;
	}
	RELEASE(p, MEMTRACK_API_FREE, &b);
	pl_real.free(p);
	pl_leave();
}
PL_HOOK_ALIAS(free);

/*
 * The old block goes out before the call (its address may be someone
 * else's the moment realloc returns) and comes back if realloc fails
 * (NULL for a size other than 0; realloc(p, 0) frees p and returns NULL).
 */
static void *realloc_as(void *old, size_t n, size_t size, uint32_t api,
			const struct pl_frame *frame)
{
	struct mtp_block b;
	bool had = old && pl_block_del((uint64_t)old, api, frame, &b);
	void *p;

	if (api == MEMTRACK_API_REALLOCARRAY)
		p = pl_real.reallocarray(old, n, size);
	else
		p = pl_real.realloc(old, n * size);
	if (!p && had && n && size)
		pl_block_restore(&b);
	return p;
}

void *realloc(void *old, size_t n)
{
	struct pl_regs r;
	void *p;

	if (!pl_enter(PL_MEM))
		return pl_real.realloc(old, n);
	pl_regs_here(&r);
	p = realloc_as(old, n, 1, MEMTRACK_API_REALLOC,
		       &PL_FRAME_HERE);
	if (p)
		pl_record((uint64_t)p, n, MEMTRACK_API_REALLOC, &r);
	pl_leave();
	return p;
}
PL_HOOK_ALIAS(realloc);

void *reallocarray(void *old, size_t n, size_t size)
{
	struct pl_regs r;
	void *p;

	if (!pl_enter(PL_MEM))
		return pl_real.reallocarray(old, n, size);
	pl_regs_here(&r);
	p = realloc_as(old, n, size, MEMTRACK_API_REALLOCARRAY,
		       &PL_FRAME_HERE);
	if (p)
		pl_record((uint64_t)p, n * size, MEMTRACK_API_REALLOCARRAY,
			  &r);
	pl_leave();
	return p;
}
PL_HOOK_ALIAS(reallocarray);

int posix_memalign(void **pp, size_t align, size_t n)
{
	int err;

	if (!pl_enter(PL_MEM))
		return pl_real.posix_memalign(pp, align, n);
	err = pl_real.posix_memalign(pp, align, n);
	if (!err)
		RECORD(*pp, n, MEMTRACK_API_POSIX_MEMALIGN);
	pl_leave();
	return err;
}
PL_HOOK_ALIAS(posix_memalign);

/* aligned_alloc, memalign: (align, size) -> ptr. */
#define ALIGNED_HOOK(name, api)						\
void *name(size_t align, size_t n)					\
{									\
	void *p;							\
									\
	if (!pl_enter(PL_MEM))						\
		return pl_real.name(align, n);				\
	p = pl_real.name(align, n);					\
	if (p)								\
		RECORD(p, n, api);					\
	pl_leave();							\
	return p;							\
}

ALIGNED_HOOK(aligned_alloc, MEMTRACK_API_ALIGNED_ALLOC)
ALIGNED_HOOK(memalign, MEMTRACK_API_MEMALIGN)
PL_HOOK_ALIAS(aligned_alloc);
PL_HOOK_ALIAS(memalign);

/* valloc, pvalloc: (size) -> a page-aligned ptr; size(n): what it holds. */
#define PAGE_HOOK(name, api, size)					\
void *name(size_t n)							\
{									\
	void *p;							\
									\
	if (!pl_enter(PL_MEM))						\
		return pl_real.name(n);					\
	p = pl_real.name(n);						\
	if (p)								\
		RECORD(p, size, api);					\
	pl_leave();							\
	return p;							\
}

/* pvalloc rounds up to whole pages (at least one) */
static inline size_t pages(size_t n)
{
	size_t page = (size_t)getpagesize();

	return n ? (n + page - 1) & ~(page - 1) : page;
}

PAGE_HOOK(valloc, MEMTRACK_API_VALLOC, n)
PAGE_HOOK(pvalloc, MEMTRACK_API_PVALLOC, pages(n))
PL_HOOK_ALIAS(valloc);
PL_HOOK_ALIAS(pvalloc);

/*
 * libstdc++'s operators.  Every variant takes its size (new) or pointer
 * (delete) first and at most two more word-sized arguments (alignment,
 * size, nothrow tag); a hook passes all three on, which the x86-64 calling
 * convention makes exact for the variants with fewer, so one definition
 * serves each family.  The operator a hook replaces is looked up the first
 * time it is called (pl_next): libstdc++ may be loaded after this library.
 */
typedef void *(*new_fn)(size_t, uintptr_t, uintptr_t);
typedef void (*delete_fn)(void *, uintptr_t, uintptr_t);

/* A throwing new leaves the hook by an exception: the thread is let go. */
static void leave_on_unwind(int *entered)
{
	if (*entered)
		pl_leave();
}

#define NEW_HOOK(sym, api)						\
PL_NEXT_DEF(sym);							\
void *sym(size_t n, uintptr_t a, uintptr_t b)				\
{									\
	new_fn f = (new_fn)PL_NEXT(sym);				\
	int in __attribute__((cleanup(leave_on_unwind))) = pl_enter(PL_MEM);	\
	void *p = f(n, a, b);						\
									\
	if (in && p)							\
		RECORD(p, n, api);					\
	return p;							\
}									\
PL_HOOK_ALIAS(sym)

#define DELETE_HOOK(sym, api)						\
PL_NEXT_DEF(sym);							\
void sym(void *p, uintptr_t a, uintptr_t b)				\
{									\
	delete_fn f = (delete_fn)PL_NEXT(sym);				\
	struct mtp_block blk;						\
									\
	if (!p || !pl_enter(PL_MEM)) {					\
		f(p, a, b);						\
		return;							\
	}								\
	RELEASE(p, api, &blk);						\
	f(p, a, b);							\
	pl_leave();							\
}									\
PL_HOOK_ALIAS(sym)

NEW_HOOK(_Znwm, MEMTRACK_API_NEW);
NEW_HOOK(_ZnwmRKSt9nothrow_t, MEMTRACK_API_NEW);
NEW_HOOK(_ZnwmSt11align_val_t, MEMTRACK_API_NEW);
NEW_HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t, MEMTRACK_API_NEW);
NEW_HOOK(_Znam, MEMTRACK_API_NEW_ARRAY);
NEW_HOOK(_ZnamRKSt9nothrow_t, MEMTRACK_API_NEW_ARRAY);
NEW_HOOK(_ZnamSt11align_val_t, MEMTRACK_API_NEW_ARRAY);
NEW_HOOK(_ZnamSt11align_val_tRKSt9nothrow_t, MEMTRACK_API_NEW_ARRAY);
DELETE_HOOK(_ZdlPv, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdlPvm, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdlPvSt11align_val_t, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdlPvmSt11align_val_t, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdlPvRKSt9nothrow_t, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdlPvSt11align_val_tRKSt9nothrow_t, MEMTRACK_API_DELETE);
DELETE_HOOK(_ZdaPv, MEMTRACK_API_DELETE_ARRAY);
DELETE_HOOK(_ZdaPvm, MEMTRACK_API_DELETE_ARRAY);
DELETE_HOOK(_ZdaPvSt11align_val_t, MEMTRACK_API_DELETE_ARRAY);
DELETE_HOOK(_ZdaPvmSt11align_val_t, MEMTRACK_API_DELETE_ARRAY);
DELETE_HOOK(_ZdaPvRKSt9nothrow_t, MEMTRACK_API_DELETE_ARRAY);
DELETE_HOOK(_ZdaPvSt11align_val_tRKSt9nothrow_t, MEMTRACK_API_DELETE_ARRAY);
