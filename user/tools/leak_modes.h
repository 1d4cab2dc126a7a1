/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak's other reports: --scan (leak_scan.c), --by-lib (leak_bylib.c). */
#ifndef MEMTRACK_LEAK_MODES_H
#define MEMTRACK_LEAK_MODES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "memtrack.h"

struct mode_out {
	FILE *o;
	bool json;
	pid_t pid;
	unsigned int nr;		/* report number */
	struct mt_symbolizer *sym;
};

/* 0, or -errno with mt_errmsg() set (-ESRCH: the process is gone). */
int scan_report(struct mode_out *m, struct mt_handle *h,
		const struct mt_leak_stack *v, size_t n);
int bylib_report(struct mode_out *m, const struct mt_leak_stack *v, size_t n);

#endif
