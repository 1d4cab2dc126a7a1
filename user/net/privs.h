/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dropping root (privs.c), for the node daemon and the aggregator alike,
 * once what needs it is open.  Errors: net's one convention (tcp.h's top
 * comment).
 */
#ifndef MEMTRACK_NET_PRIVS_H
#define MEMTRACK_NET_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/* Capabilities that may stay once root is dropped. */
#define MTN_KEEP_PTRACE		(1U << 0)	/* CAP_SYS_PTRACE */
#define MTN_KEEP_READ_SEARCH	(1U << 1)	/* CAP_DAC_READ_SEARCH */

/*
 * To user, keeping the MTN_KEEP_* in keep.  0, or a negative errno with
 * err set: the failing call's (getpwnam, setresuid, ...), -ENOENT for no
 * such user, -EPERM if root could still be taken back.
 */
int mtn_drop_privileges(const char *user, unsigned int keep,
			char *err, size_t errlen);

#endif /* MEMTRACK_NET_PRIVS_H */
