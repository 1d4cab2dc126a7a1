/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The full command line of the rows on screen (key c, as in top and
 * htop), from /proc/PID/cmdline: read for the rows shown only, like
 * smaps_rollup, so the module's one-dump refresh stays one dump.
 */
#ifndef MEMTRACK_TOP_CMDLINE_H
#define MEMTRACK_TOP_CMDLINE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * pid's command line into buf, its arguments separated by spaces; "" for
 * a process without one (a kernel thread, a zombie) or one /proc refuses.
 */
void top_cmdline_read(pid_t pid, char *buf, size_t len);

#endif
