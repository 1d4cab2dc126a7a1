/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak's other reports: --scan (scan.c), --by-lib (bylib.c). */
#ifndef MEMTRACK_LEAK_MODES_H
#define MEMTRACK_LEAK_MODES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "libmemtrack.h"

struct mode_out {
	FILE *o;
	bool json;
	pid_t pid;
	unsigned int nr;		/* report number */
	struct mt_symbolizer *sym;
	const struct mt_scan_stack *from;	/* --scan: a stack's start */
	struct mt_preload *pre;		/* the in-process engine's state */
	const char *ended;		/* the last report's: "exit", "exec" */
};

/*
 * 0, or -errno with mt_errmsg() set (-ESRCH: the process is gone).  kb:
 * the process's outstanding blocks, v its stacks.
 */
int scan_report(struct mode_out *m, const struct memtrack_leak_block *kb,
		size_t nb, const struct mt_leak_stack *v, size_t n);
int bylib_report(struct mode_out *m, const struct mt_leak_stack *v, size_t n);

#endif
