// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the release every program reports with --version, from the
 * top-level VERSION file (user/Makefile passes it as MEMTRACK_VERSION), in
 * the GNU form "PROGRAM (memtrack) VERSION" that scripts parse; and the
 * name every message of a program starts with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include "libmemtrack.h"

/*
 * One prefix for every message, whatever path or link the program was run
 * by: err(3)'s warn()/warnx()/err()/errx() print program_invocation_short_name,
 * getopt(3) argv[0].
 */
void mt_set_progname(char **argv, const char *name)
{
	argv[0] = (char *)name;
	program_invocation_name = (char *)name;
	program_invocation_short_name = (char *)name;
}

const char *mt_version(void)
{
	return MEMTRACK_VERSION;
}

int mt_print_version(const char *prog)
{
	printf("%s (memtrack) %s\n"
	       "License GPL-2.0 (the programs), LGPL-2.1 (libmemtrack).\n",
	       prog, MEMTRACK_VERSION);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
