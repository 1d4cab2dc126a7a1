/* SPDX-License-Identifier: GPL-2.0 */
/*
 * F2: memtrack-top's setup screen (top_setup.c), as htop's: which columns
 * show and in what order, the sort key and the delay, saved to toprc
 * (top_toprc.h) on the way out.
 */
#ifndef MEMTRACK_TOP_SETUP_H
#define MEMTRACK_TOP_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include "top_toprc.h"

/*
 * Until q, F2 or F10: edits rc, then saves it to path (NULL: not saved)
 * and says so, or why not, in msg; true.  Esc: rc as it was, nothing
 * saved, false.
 */
bool top_setup_run(struct top_toprc *rc, const char *path, char *msg,
		   size_t len);

#endif
