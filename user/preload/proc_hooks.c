// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's hooks of the process's end and of exec.
 *
 * _exit() and _Exit() skip the destructors, where exit() reaches
 * pl_exiting(), so they call it themselves, then end the process as glibc
 * does (exit_group).  An exec ends the program the tool is tracing: the
 * exec functions say so in the state before they replace it (and take it
 * back if the exec fails); the new program is not traced.  glibc's exec
 * functions call each other internally, not through these symbols, so
 * each one the program can call is here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks.h"
#include "real.h"
#include "state.h"

static __attribute__((noreturn)) void end(int status)
{
	pl_exiting();
	for (;;)
		syscall(SYS_exit_group, status);
}

void _exit(int status)
{
	end(status);
}
PL_HOOK_ALIAS(_exit);

void _Exit(int status)
{
	end(status);
}
PL_HOOK_ALIAS(_Exit);

/* Around an exec: the state says "exec'd" unless it failed. */
#define EXEC_HOOK(ret, name, params, args)				\
PL_NEXT_DEF(name);							\
ret name params								\
{									\
	ret (*f) params = PL_NEXT(name);				\
	int err;							\
	ret r;								\
									\
	pl_execing(true);						\
	r = f args;							\
	err = errno;							\
	pl_execing(false);						\
	errno = err;							\
	return r;							\
}									\
PL_HOOK_ALIAS(name)

EXEC_HOOK(int, execve, (const char *path, char *const argv[],
			char *const envp[]), (path, argv, envp));
EXEC_HOOK(int, execv, (const char *path, char *const argv[]), (path, argv));
EXEC_HOOK(int, execvp, (const char *file, char *const argv[]), (file, argv));
EXEC_HOOK(int, execvpe, (const char *file, char *const argv[],
			 char *const envp[]), (file, argv, envp));
EXEC_HOOK(int, fexecve, (int fd, char *const argv[], char *const envp[]),
	  (fd, argv, envp));
EXEC_HOOK(int, execveat, (int dirfd, const char *path, char *const argv[],
			  char *const envp[], int flags),
	  (dirfd, path, argv, envp, flags));

/*
 * execl, execlp, execle: their arguments into an array (on the stack: no
 * allocation between fork and exec), then the array forms above.
 */
#define ARGV_OF(argv, arg, ap, n) do {					\
	va_list c_;							\
	size_t i_;							\
									\
	va_copy(c_, ap);						\
	for (n = 1; va_arg(c_, const char *); n++)			\
		;							\
	va_end(c_);							\
	argv = __builtin_alloca((n + 1) * sizeof(*argv));		\
	argv[0] = (char *)arg;						\
	for (i_ = 1; i_ <= n; i_++)					\
		argv[i_] = va_arg(ap, char *);				\
} while (0)

/*
 * execl and execlp: the list form of execv and execvp, called by this
 * library's own names (injected, execv would bind to libc's).
 */
#define EXECL_HOOK(name, as)						\
int name(const char *file, const char *arg, ...)			\
{									\
	char **argv;							\
	va_list ap;							\
	size_t n;							\
									\
	va_start(ap, arg);						\
	ARGV_OF(argv, arg, ap, n);					\
	va_end(ap);							\
	return as(file, argv);						\
}

EXECL_HOOK(execl, pl_hook_execv)
PL_HOOK_ALIAS(execl);
EXECL_HOOK(execlp, pl_hook_execvp)
PL_HOOK_ALIAS(execlp);

int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp;
	va_list ap;
	size_t n;

	va_start(ap, arg);
	ARGV_OF(argv, arg, ap, n);
	envp = va_arg(ap, char **);
	va_end(ap);
	return pl_hook_execve(path, argv, envp);
}
PL_HOOK_ALIAS(execle);
