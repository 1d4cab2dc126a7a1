// SPDX-License-Identifier: GPL-2.0
/*
 * fds: leaks file descriptors from known call sites (3 files, 2 sockets, 1
 * pipe = 2 fds, 1 eventfd, 1 memfd, 1 dup) and opens-and-closes others.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common.h"

void *volatile fixture_sink;

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
}

NOINLINE static void leak_misc(void)
{
	int p[2], fd;

	if (pipe(p) == 0)				/* LEAKFD(pipe): 2 */
		fixture_sink = p;
	eventfd(0, 0);					/* LEAKFD(eventfd): 1 */
	memfd_create("fixture", 0);			/* LEAKFD(memfd): 1 */
	fd = dup(1);					/* LEAKFD(dup): 1 */
	(void)fd;
}

int main(void)
{
	fixture_wait("ready");
	leak_files();
	leak_sockets();
	leak_misc();
	fixture_wait("done");
	return 0;
}
