/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload's hooks as a table (hook_table.c), for injection
 * (inject.c, got.c): each hooked name, the hook, where the hook finds the
 * function it passes the call on to, and what kind of call it is.
 * Preloaded, the dynamic loader binds the program's calls to the hooks by
 * name and the table is not used; injected, the GOT slots of those names
 * are pointed at the hooks, in the table's order of kinds.
 */
#ifndef MEMTRACK_PRELOAD_HOOKS_H
#define MEMTRACK_PRELOAD_HOOKS_H

#include <stdbool.h>

/*
 * Kinds, in the order their slots are patched (and the reverse of the
 * order they are restored in): a block recorded by a hook is always
 * released through a hook, whatever a thread calls meanwhile.
 */
enum pl_hook_kind {
	PL_HOOK_RELEASE,	/* free, delete, realloc: give memory back */
	PL_HOOK_FD_CLOSE,	/* close */
	PL_HOOK_ALLOC,		/* the allocators */
	PL_HOOK_FD,		/* the calls that open descriptors */
	PL_HOOK_PROC,		/* _exit, exec: the program's end */
	PL_HOOK_DL,		/* dlopen, dlmopen, dlclose: objects come and go */
	PL_HOOK_KINDS
};

struct pl_hook {
	const char *name;
	void *hook;		/* this library's definition */
	void **real;		/* the definition it calls */
	enum pl_hook_kind kind;
};

extern const struct pl_hook pl_hooks[] __attribute__((visibility("hidden")));
extern const unsigned int pl_nr_hooks __attribute__((visibility("hidden")));

/* The entry of name, or NULL. */
const struct pl_hook *pl_hook_find(const char *name)
	__attribute__((visibility("hidden")));

/*
 * A hook's own name for this library's definition, bound inside the
 * library whatever the program defines (hidden): the table's address of
 * the hook.  After the hook's definition.
 */
#define PL_HOOK_ALIAS(sym)						\
	extern __typeof__(sym) pl_hook_##sym				\
		__attribute__((copy(sym), alias(#sym), visibility("hidden")))

/* The cache of the function a hook passes its calls to (pl_next()). */
#define PL_NEXT_DECL(sym)						\
	extern void *pl_next_##sym __attribute__((visibility("hidden")))
#define PL_NEXT_DEF(sym)						\
	void *pl_next_##sym __attribute__((visibility("hidden")))
#define PL_NEXT(sym)	pl_next(&pl_next_##sym, #sym)

#endif
