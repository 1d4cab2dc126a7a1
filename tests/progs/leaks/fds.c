// SPDX-License-Identifier: GPL-2.0
/*
 * fds: leaks file descriptors from known call sites, once per round (3
 * files, 2 sockets, a pipe and a socketpair = 2 fds each, 1 eventfd, 1 memfd,
 * 1 dup, 1 fcntl F_DUPFD_CLOEXEC), and opens others that it closes, one with
 * close() and two behind the probes' back (raw close syscall, close_range).
 * After "done", a line "again" runs another round; any other line exits.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common.h"

void *volatile fixture_sink;

/* After a function's last call: keeps it a call, not a tail jump. */
#define NO_TAIL_CALL() __asm__ volatile("" : : : "memory")

NOINLINE static void leak_files(void)
{
	for (int i = 0; i < 3; i++)
		open("/dev/null", O_RDONLY);		/* LEAKFD(files): 3 */
	close(open("/dev/null", O_RDONLY));		/* CLOSED */
}

NOINLINE static void leak_sockets(void)
{
	for (int i = 0; i < 2; i++)
		socket(AF_UNIX, SOCK_STREAM, 0);	/* LEAKFD(sockets): 2 */
	NO_TAIL_CALL();
}

NOINLINE static void leak_misc(void)
{
	int p[2], sv[2], fd;

	if (pipe(p) == 0)				/* LEAKFD(pipe): 2 */
		fixture_sink = p;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) /* LEAKFD(socketpair): 2 */
		fixture_sink = sv;
	eventfd(0, 0);					/* LEAKFD(eventfd): 1 */
	memfd_create("fixture", 0);			/* LEAKFD(memfd): 1 */
	fd = dup(1);					/* LEAKFD(dup): 1 */
	(void)fd;
	fcntl(1, F_DUPFD_CLOEXEC, 10);			/* LEAKFD(fcntl): 1 */
	NO_TAIL_CALL();
}

/* Closed where no probe sees it: a report must not list them. */
NOINLINE static void close_unseen(void)
{
	int fd = open("/dev/null", O_RDONLY);		/* CLOSED */

	syscall(SYS_close, fd);
	fd = open("/dev/null", O_RDONLY);		/* CLOSED */
	close_range(fd, fd, 0);
}

int main(void)
{
	char line[64];

	fixture_wait("ready");
	do {
		leak_files();
		leak_sockets();
		leak_misc();
		close_unseen();
		printf("done\n");
		fflush(stdout);
	} while (fgets(line, sizeof(line), stdin) && !strcmp(line, "again\n"));
	return 0;
}
