// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload: the allocator the hooks pass calls on to, apart
 * from the hooks (which call it) and the core (which has it looked up when
 * it starts): preloaded, the definitions after this library's
 * (RTLD_NEXT); injected, those the program's GOT slots were bound to,
 * which inject.c puts in place before it points a slot at a hook.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "real.h"
#include "state.h"

/*
 * glibc's own entry points: what the hooks call until the first of them
 * has looked up the allocator that comes after this library (normally
 * the same glibc; another malloc preloaded after us, else).
 */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);
extern void __libc_free(void *p);

/* Until then, the rest as glibc defines them on its own entry points. */
static int libc_posix_memalign(void **pp, size_t align, size_t n)
{
	void *p;

	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*pp = p;
	return 0;
}

static void *libc_aligned_alloc(size_t align, size_t n)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return __libc_memalign(align, n);
}

static void *libc_reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, bytes);
}

struct pl_real pl_real = {
	__libc_malloc, __libc_calloc, __libc_realloc, libc_reallocarray,
	libc_posix_memalign, libc_aligned_alloc, __libc_memalign,
	__libc_valloc, __libc_pvalloc, __libc_free,
};

#define NEXT(field, name) do {						\
	void *f_ = dlsym(RTLD_NEXT, name);				\
	if (f_)								\
		*(void **)&pl_real.field = f_;				\
} while (0)

void pl_real_resolve(void)
{
	NEXT(malloc, "malloc");
	NEXT(calloc, "calloc");
	NEXT(realloc, "realloc");
	NEXT(reallocarray, "reallocarray");
	NEXT(posix_memalign, "posix_memalign");
	NEXT(aligned_alloc, "aligned_alloc");
	NEXT(memalign, "memalign");
	NEXT(valloc, "valloc");
	NEXT(pvalloc, "pvalloc");
	NEXT(free, "free");
}


void (*pl_objects_changed)(bool unloaded);

void *pl_next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!f) {
		int busy = pl_self.busy;

		pl_self.busy = 1;
		f = dlsym(RTLD_NEXT, name);
		pl_self.busy = busy;
		__atomic_store_n(cache, f, __ATOMIC_RELAXED);
	}
	return f;
}
