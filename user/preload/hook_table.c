// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload: the table of its hooks (hooks.h), apart from the
 * hooks themselves because only injection needs it: the GOT patcher
 * (got.c) looks every relocated name of every object up here, and a
 * program has tens of thousands of them, so the names are found through
 * a hash table made once, not by comparing strings one by one.
 */
#include <string.h>

#include "hooks.h"
#include "real.h"

/* The hooks' own definitions (their hidden aliases) and their caches. */
#define DECL(sym)	PL_NEXT_DECL(sym); extern char pl_hook_##sym[]	\
			__attribute__((visibility("hidden")))
#define DECL_REAL(sym)	extern char pl_hook_##sym[]			\
			__attribute__((visibility("hidden")))

DECL_REAL(malloc); DECL_REAL(calloc); DECL_REAL(realloc);
DECL_REAL(reallocarray); DECL_REAL(free); DECL_REAL(posix_memalign);
DECL_REAL(aligned_alloc); DECL_REAL(memalign); DECL_REAL(valloc);
DECL_REAL(pvalloc);
DECL(_Znwm); DECL(_ZnwmRKSt9nothrow_t); DECL(_ZnwmSt11align_val_t);
DECL(_ZnwmSt11align_val_tRKSt9nothrow_t); DECL(_Znam);
DECL(_ZnamRKSt9nothrow_t); DECL(_ZnamSt11align_val_t);
DECL(_ZnamSt11align_val_tRKSt9nothrow_t);
DECL(_ZdlPv); DECL(_ZdlPvm); DECL(_ZdlPvSt11align_val_t);
DECL(_ZdlPvmSt11align_val_t); DECL(_ZdlPvRKSt9nothrow_t);
DECL(_ZdlPvSt11align_val_tRKSt9nothrow_t);
DECL(_ZdaPv); DECL(_ZdaPvm); DECL(_ZdaPvSt11align_val_t);
DECL(_ZdaPvmSt11align_val_t); DECL(_ZdaPvRKSt9nothrow_t);
DECL(_ZdaPvSt11align_val_tRKSt9nothrow_t);
DECL(open); DECL(open64); DECL(openat); DECL(openat64); DECL(creat);
DECL(creat64); DECL(socket); DECL(socketpair); DECL(pipe); DECL(pipe2);
DECL(dup); DECL(dup2); DECL(dup3); DECL(accept); DECL(accept4);
DECL(eventfd); DECL(memfd_create); DECL(epoll_create); DECL(epoll_create1);
DECL(timerfd_create); DECL(inotify_init); DECL(inotify_init1);
DECL(signalfd); DECL(fcntl); DECL(fcntl64); DECL(close);
DECL(_exit); DECL(_Exit); DECL(execve); DECL(execv); DECL(execvp);
DECL(execvpe); DECL(fexecve); DECL(execveat); DECL(execl); DECL(execlp);
DECL(execle);
DECL(dlopen); DECL(dlmopen); DECL(dlclose);

/* _exit and the list forms of exec call no cache: it only checks slots. */
PL_NEXT_DEF(_exit);
PL_NEXT_DEF(_Exit);
PL_NEXT_DEF(execl);
PL_NEXT_DEF(execlp);
PL_NEXT_DEF(execle);

#define HOOK(sym, kind)		{ #sym, pl_hook_##sym, &pl_next_##sym, kind }
#define HOOK_REAL(sym, kind)	{ #sym, pl_hook_##sym, (void **)&pl_real.sym, kind }

const struct pl_hook pl_hooks[] = {
	HOOK_REAL(free, PL_HOOK_RELEASE),
	HOOK_REAL(realloc, PL_HOOK_RELEASE),
	HOOK_REAL(reallocarray, PL_HOOK_RELEASE),
	HOOK(_ZdlPv, PL_HOOK_RELEASE),
	HOOK(_ZdlPvm, PL_HOOK_RELEASE),
	HOOK(_ZdlPvSt11align_val_t, PL_HOOK_RELEASE),
	HOOK(_ZdlPvmSt11align_val_t, PL_HOOK_RELEASE),
	HOOK(_ZdlPvRKSt9nothrow_t, PL_HOOK_RELEASE),
	HOOK(_ZdlPvSt11align_val_tRKSt9nothrow_t, PL_HOOK_RELEASE),
	HOOK(_ZdaPv, PL_HOOK_RELEASE),
	HOOK(_ZdaPvm, PL_HOOK_RELEASE),
	HOOK(_ZdaPvSt11align_val_t, PL_HOOK_RELEASE),
	HOOK(_ZdaPvmSt11align_val_t, PL_HOOK_RELEASE),
	HOOK(_ZdaPvRKSt9nothrow_t, PL_HOOK_RELEASE),
	HOOK(_ZdaPvSt11align_val_tRKSt9nothrow_t, PL_HOOK_RELEASE),
	HOOK(close, PL_HOOK_FD_CLOSE),
	HOOK_REAL(malloc, PL_HOOK_ALLOC),
	HOOK_REAL(calloc, PL_HOOK_ALLOC),
	HOOK_REAL(posix_memalign, PL_HOOK_ALLOC),
	HOOK_REAL(aligned_alloc, PL_HOOK_ALLOC),
	HOOK_REAL(memalign, PL_HOOK_ALLOC),
	HOOK_REAL(valloc, PL_HOOK_ALLOC),
	HOOK_REAL(pvalloc, PL_HOOK_ALLOC),
	HOOK(_Znwm, PL_HOOK_ALLOC),
	HOOK(_ZnwmRKSt9nothrow_t, PL_HOOK_ALLOC),
	HOOK(_ZnwmSt11align_val_t, PL_HOOK_ALLOC),
	HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t, PL_HOOK_ALLOC),
	HOOK(_Znam, PL_HOOK_ALLOC),
	HOOK(_ZnamRKSt9nothrow_t, PL_HOOK_ALLOC),
	HOOK(_ZnamSt11align_val_t, PL_HOOK_ALLOC),
	HOOK(_ZnamSt11align_val_tRKSt9nothrow_t, PL_HOOK_ALLOC),
	HOOK(open, PL_HOOK_FD),
	HOOK(open64, PL_HOOK_FD),
	HOOK(openat, PL_HOOK_FD),
	HOOK(openat64, PL_HOOK_FD),
	HOOK(creat, PL_HOOK_FD),
	HOOK(creat64, PL_HOOK_FD),
	HOOK(socket, PL_HOOK_FD),
	HOOK(socketpair, PL_HOOK_FD),
	HOOK(pipe, PL_HOOK_FD),
	HOOK(pipe2, PL_HOOK_FD),
	HOOK(dup, PL_HOOK_FD),
	HOOK(dup2, PL_HOOK_FD),
	HOOK(dup3, PL_HOOK_FD),
	HOOK(accept, PL_HOOK_FD),
	HOOK(accept4, PL_HOOK_FD),
	HOOK(eventfd, PL_HOOK_FD),
	HOOK(memfd_create, PL_HOOK_FD),
	HOOK(epoll_create, PL_HOOK_FD),
	HOOK(epoll_create1, PL_HOOK_FD),
	HOOK(timerfd_create, PL_HOOK_FD),
	HOOK(inotify_init, PL_HOOK_FD),
	HOOK(inotify_init1, PL_HOOK_FD),
	HOOK(signalfd, PL_HOOK_FD),
	HOOK(fcntl, PL_HOOK_FD),
	HOOK(fcntl64, PL_HOOK_FD),
	HOOK(_exit, PL_HOOK_PROC),
	HOOK(_Exit, PL_HOOK_PROC),
	HOOK(execve, PL_HOOK_PROC),
	HOOK(execv, PL_HOOK_PROC),
	HOOK(execvp, PL_HOOK_PROC),
	HOOK(execvpe, PL_HOOK_PROC),
	HOOK(fexecve, PL_HOOK_PROC),
	HOOK(execveat, PL_HOOK_PROC),
	HOOK(execl, PL_HOOK_PROC),
	HOOK(execlp, PL_HOOK_PROC),
	HOOK(execle, PL_HOOK_PROC),
	HOOK(dlopen, PL_HOOK_DL),
	HOOK(dlmopen, PL_HOOK_DL),
	HOOK(dlclose, PL_HOOK_DL),
};

const unsigned int pl_nr_hooks = sizeof(pl_hooks) / sizeof(pl_hooks[0]);

/* Open addressing, 0: empty, else 1 + the entry's index. */
#define SLOTS	256
static unsigned char by_hash[SLOTS];
static int made;

static unsigned int hash(const char *s)
{
	unsigned int h = 2166136261U;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619U;
	return h;
}

/* Once; a race makes the same table twice. */
static void make(void)
{
	unsigned int i, j;

	for (i = 0; i < pl_nr_hooks; i++) {
		for (j = hash(pl_hooks[i].name) % SLOTS; by_hash[j];
		     j = (j + 1) % SLOTS)
			;
		by_hash[j] = (unsigned char)(i + 1);
	}
	__atomic_store_n(&made, 1, __ATOMIC_RELEASE);
}

const struct pl_hook *pl_hook_find(const char *name)
{
	unsigned int j;

	if (!__atomic_load_n(&made, __ATOMIC_ACQUIRE))
		make();
	for (j = hash(name) % SLOTS; by_hash[j]; j = (j + 1) % SLOTS)
		if (!strcmp(pl_hooks[by_hash[j] - 1].name, name))
			return &pl_hooks[by_hash[j] - 1];
	return NULL;
}
