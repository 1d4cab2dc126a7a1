/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload: the allocator its hooks call (real.c): glibc's own
 * entry points until pl_real_resolve() has looked up the ones that come
 * after this library.
 */
#ifndef MEMTRACK_PRELOAD_REAL_H
#define MEMTRACK_PRELOAD_REAL_H

#include <stdbool.h>
#include <stddef.h>

struct pl_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*free)(void *);
};

extern struct pl_real pl_real __attribute__((visibility("hidden")));

/* Once, from pl_start() (busy set: dlsym's own calloc passes). */
void pl_real_resolve(void) __attribute__((visibility("hidden")));

/*
 * The definition of name after this library's (a C++ operator, an exec
 * function), looked up on first use into *cache, the thread busy meanwhile.
 * Injected, the caches are filled at the attach (inject.c); one left empty
 * is looked up the same way: libc's, this library's dependency.
 */
void *pl_next(void **cache, const char *name)
	__attribute__((visibility("hidden")));

/*
 * Injected: what the dlopen hooks (inject_dl.c) call once objects were
 * loaded (unloaded: false) or unloaded (true), set by inject.c while a
 * session is on; NULL otherwise.
 */
extern void (*pl_objects_changed)(bool unloaded)
	__attribute__((visibility("hidden")));

#endif
