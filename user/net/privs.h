/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dropping root (privs.c), for the node daemon and the aggregator alike,
 * once what needs it is open.
 */
#ifndef MEMTRACK_NET_PRIVS_H
#define MEMTRACK_NET_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/* Capabilities that may stay once root is dropped. */
#define MTD_KEEP_PTRACE		(1U << 0)	/* CAP_SYS_PTRACE */
#define MTD_KEEP_READ_SEARCH	(1U << 1)	/* CAP_DAC_READ_SEARCH */

/* To user, keeping the MTD_KEEP_* in keep.  0, or -1 with err set. */
int mtd_drop_privileges(const char *user, unsigned int keep,
			char *err, size_t errlen);

#endif /* MEMTRACK_NET_PRIVS_H */
