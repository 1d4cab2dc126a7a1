// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's hooks of the process's end: _exit() and _Exit()
 * skip the destructors, where exit() reaches pl_exiting(), so they call it
 * themselves, then end the process as glibc does (exit_group).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

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

void _Exit(int status)
{
	end(status);
}
