// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the release every program reports with --version, from the
 * top-level VERSION file (user/Makefile passes it as MEMTRACK_VERSION), in
 * the GNU form "PROGRAM (memtrack) VERSION" that scripts parse.
 */
#include <stdio.h>
#include "memtrack.h"

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
