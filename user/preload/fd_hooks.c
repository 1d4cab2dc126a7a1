// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's descriptor hooks (memtrack-leak --fds): the calls
 * the uprobe engine probes for descriptors (user/lib/elfsyms.c), each
 * passed on to libc, the descriptors it opened recorded under the
 * caller's stack and those close() releases taken out.  Without --fds
 * they only pass on.  errno is the call's, whatever recording did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <linux/memtrack.h>

#include "hooks.h"
#include "real.h"
#include "state.h"

/* One descriptor the hook's call opened (in the hook: its frame). */
#define RECORD_FD(fd, api) do {						\
	struct pl_regs r_;						\
	pl_regs_here(&r_);						\
	pl_block_add(PL_FD_KEY(fd), 0, pl_stack(&r_, (api)));		\
} while (0)

/*
 * The body of a hook whose call returns the descriptor it opened (or a
 * negative value): type f is the next definition of the hook's name.
 */
#define FD_RESULT(type, name, args, api) do {				\
	__typeof__(type) f_ = PL_NEXT(name);				\
	int in_ = pl_enter(PL_FD), fd_ = f_ args, err_ = errno;	\
									\
	if (in_) {							\
		if (fd_ >= 0)						\
			RECORD_FD(fd_, api);				\
		pl_leave();						\
	}								\
	errno = err_;							\
	return fd_;							\
} while (0)

/* A hook that fills an int[2] (pipe, socketpair): two descriptors. */
#define FD_PAIR(type, name, args, fds, api) do {			\
	__typeof__(type) f_ = PL_NEXT(name);				\
	int in_ = pl_enter(PL_FD), r_ = f_ args, err_ = errno;		\
									\
	if (in_) {							\
		if (!r_) {						\
			RECORD_FD((fds)[0], api);			\
			RECORD_FD((fds)[1], api);			\
		}							\
		pl_leave();						\
	}								\
	errno = err_;							\
	return r_;							\
} while (0)

/* open's mode argument, there only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, last, mode) do {				\
	va_list ap_;							\
									\
	mode = 0;							\
	if ((flags) & (O_CREAT | O_TMPFILE)) {				\
		va_start(ap_, last);					\
		mode = va_arg(ap_, mode_t);				\
		va_end(ap_);						\
	}								\
} while (0)

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

PL_NEXT_DEF(open);
int open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, flags, mode);
	FD_RESULT(open_fn, open, (path, flags, mode), MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(open);

PL_NEXT_DEF(open64);
int open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, flags, mode);
	FD_RESULT(open_fn, open64, (path, flags, mode), MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(open64);

PL_NEXT_DEF(openat);
int openat(int dir, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, flags, mode);
	FD_RESULT(openat_fn, openat, (dir, path, flags, mode), MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(openat);

PL_NEXT_DEF(openat64);
int openat64(int dir, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, flags, mode);
	FD_RESULT(openat_fn, openat64, (dir, path, flags, mode),
		  MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(openat64);

PL_NEXT_DEF(creat);
int creat(const char *path, mode_t mode)
{
	FD_RESULT(int (*)(const char *, mode_t), creat, (path, mode),
		  MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(creat);

PL_NEXT_DEF(creat64);
int creat64(const char *path, mode_t mode)
{
	FD_RESULT(int (*)(const char *, mode_t), creat64, (path, mode),
		  MEMTRACK_API_OPEN);
}
PL_HOOK_ALIAS(creat64);

PL_NEXT_DEF(socket);
int socket(int domain, int type, int proto)
{
	FD_RESULT(int (*)(int, int, int), socket, (domain, type, proto),
		  MEMTRACK_API_SOCKET);
}
PL_HOOK_ALIAS(socket);

PL_NEXT_DEF(socketpair);
int socketpair(int domain, int type, int proto, int sv[2])
{
	FD_PAIR(int (*)(int, int, int, int *), socketpair,
		(domain, type, proto, sv), sv, MEMTRACK_API_SOCKETPAIR);
}
PL_HOOK_ALIAS(socketpair);

PL_NEXT_DEF(pipe);
int pipe(int fds[2])
{
	FD_PAIR(int (*)(int *), pipe, (fds), fds, MEMTRACK_API_PIPE);
}
PL_HOOK_ALIAS(pipe);

PL_NEXT_DEF(pipe2);
int pipe2(int fds[2], int flags)
{
	FD_PAIR(int (*)(int *, int), pipe2, (fds, flags), fds, MEMTRACK_API_PIPE);
}
PL_HOOK_ALIAS(pipe2);

PL_NEXT_DEF(dup);
int dup(int fd)
{
	FD_RESULT(int (*)(int), dup, (fd), MEMTRACK_API_DUP);
}
PL_HOOK_ALIAS(dup);

/* dup2/dup3 close newfd first if it is open: its entry goes, unreported. */
#define DUP_ONTO(newfd) do {				\
	if (pl_enter(PL_FD)) {						\
		pl_block_forget(PL_FD_KEY(newfd));			\
		pl_leave();						\
	}								\
} while (0)

PL_NEXT_DEF(dup2);
int dup2(int oldfd, int newfd)
{
	if (oldfd != newfd)
		DUP_ONTO(newfd);
	FD_RESULT(int (*)(int, int), dup2, (oldfd, newfd), MEMTRACK_API_DUP);
}
PL_HOOK_ALIAS(dup2);

PL_NEXT_DEF(dup3);
int dup3(int oldfd, int newfd, int flags)
{
	DUP_ONTO(newfd);
	FD_RESULT(int (*)(int, int, int), dup3, (oldfd, newfd, flags),
		  MEMTRACK_API_DUP);
}
PL_HOOK_ALIAS(dup3);

PL_NEXT_DEF(accept);
int accept(int s, struct sockaddr *addr, socklen_t *len)
{
	FD_RESULT(int (*)(int, struct sockaddr *, socklen_t *), accept,
		  (s, addr, len), MEMTRACK_API_ACCEPT);
}
PL_HOOK_ALIAS(accept);

PL_NEXT_DEF(accept4);
int accept4(int s, struct sockaddr *addr, socklen_t *len, int flags)
{
	FD_RESULT(int (*)(int, struct sockaddr *, socklen_t *, int), accept4,
		  (s, addr, len, flags), MEMTRACK_API_ACCEPT);
}
PL_HOOK_ALIAS(accept4);

PL_NEXT_DEF(eventfd);
int eventfd(unsigned int init, int flags)
{
	FD_RESULT(int (*)(unsigned int, int), eventfd, (init, flags),
		  MEMTRACK_API_EVENTFD);
}
PL_HOOK_ALIAS(eventfd);

PL_NEXT_DEF(memfd_create);
int memfd_create(const char *name, unsigned int flags)
{
	FD_RESULT(int (*)(const char *, unsigned int), memfd_create,
		  (name, flags), MEMTRACK_API_MEMFD);
}
PL_HOOK_ALIAS(memfd_create);

PL_NEXT_DEF(epoll_create);
int epoll_create(int size)
{
	FD_RESULT(int (*)(int), epoll_create, (size), MEMTRACK_API_EPOLL);
}
PL_HOOK_ALIAS(epoll_create);

PL_NEXT_DEF(epoll_create1);
int epoll_create1(int flags)
{
	FD_RESULT(int (*)(int), epoll_create1, (flags), MEMTRACK_API_EPOLL);
}
PL_HOOK_ALIAS(epoll_create1);

PL_NEXT_DEF(timerfd_create);
int timerfd_create(int clock, int flags)
{
	FD_RESULT(int (*)(int, int), timerfd_create, (clock, flags),
		  MEMTRACK_API_TIMERFD);
}
PL_HOOK_ALIAS(timerfd_create);

PL_NEXT_DEF(inotify_init);
int inotify_init(void)
{
	FD_RESULT(int (*)(void), inotify_init, (), MEMTRACK_API_INOTIFY);
}
PL_HOOK_ALIAS(inotify_init);

PL_NEXT_DEF(inotify_init1);
int inotify_init1(int flags)
{
	FD_RESULT(int (*)(int), inotify_init1, (flags), MEMTRACK_API_INOTIFY);
}
PL_HOOK_ALIAS(inotify_init1);

/* signalfd(-1, ...) opens one; on an existing descriptor it changes it. */
PL_NEXT_DEF(signalfd);
int signalfd(int fd, const sigset_t *mask, int flags)
{
	int (*f)(int, const sigset_t *, int) = PL_NEXT(signalfd);

	if (fd != -1)
		return f(fd, mask, flags);
	FD_RESULT(int (*)(int, const sigset_t *, int), signalfd,
		  (fd, mask, flags), MEMTRACK_API_SIGNALFD);
}
PL_HOOK_ALIAS(signalfd);

/* fcntl's third argument, an int or a pointer: passed on as a word. */
#define FCNTL_HOOK(name)						\
PL_NEXT_DEF(name);							\
int name(int fd, int cmd, ...)						\
{									\
	unsigned long arg;						\
	va_list ap;							\
									\
	va_start(ap, cmd);						\
	arg = va_arg(ap, unsigned long);				\
	va_end(ap);							\
	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) {			\
		int (*f)(int, int, unsigned long) = PL_NEXT(name);	\
									\
		return f(fd, cmd, arg);					\
	}								\
	FD_RESULT(int (*)(int, int, unsigned long), name, (fd, cmd, arg), \
		  MEMTRACK_API_FCNTL);					\
}									\
PL_HOOK_ALIAS(name)

FCNTL_HOOK(fcntl);
FCNTL_HOOK(fcntl64);

PL_NEXT_DEF(close);
int close(int fd)
{
	int (*f)(int) = PL_NEXT(close);
	struct mtp_block b;

	if (fd >= 0 && pl_enter(PL_FD)) {
		pl_block_del(PL_FD_KEY(fd), MEMTRACK_API_CLOSE,
			     &PL_FRAME_HERE, &b);
		pl_leave();
	}
	return f(fd);
}
PL_HOOK_ALIAS(close);
