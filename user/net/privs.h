/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dropping root (privs.c), for the node daemon and the aggregator alike,
 * once what needs it is open.
 */
#ifndef MEMTRACK_NET_PRIVS_H
#define MEMTRACK_NET_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/* To user; keep_ptrace: CAP_SYS_PTRACE stays.  0, or -1 with err set. */
int mtd_drop_privileges(const char *user, bool keep_ptrace,
			char *err, size_t errlen);

#endif /* MEMTRACK_NET_PRIVS_H */
