/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PSS and USS from /proc/PID/smaps_rollup (top_smaps.c).  The kernel walks
 * every page table of the process to answer, so memtrack-top asks only for
 * the rows it shows.
 */
#ifndef MEMTRACK_TOP_SMAPS_H
#define MEMTRACK_TOP_SMAPS_H

#include <stddef.h>
#include "top.h"

/* 0, or -errno (a process gone, or not ours to read: as /proc decides). */
int top_smaps_read(pid_t pid, uint64_t *pss, uint64_t *uss);

/* Fills pss/uss of the process rows among rows[0..n) (not of threads or
 * summed rows); a row whose file cannot be read keeps has_smaps false. */
void top_rows_smaps(struct top_row *rows, size_t n);

#endif
