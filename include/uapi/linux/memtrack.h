/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memtrack: the interface between memtrack.ko and user space.
 *
 * Everything user space may rely on is defined here and nowhere else.  The
 * text files under /proc/memtrack are part of this ABI: their column and key
 * names only ever grow, and MEMTRACK_ABI_VERSION changes when a name changes
 * meaning or goes away.
 */
#ifndef _UAPI_LINUX_MEMTRACK_H
#define _UAPI_LINUX_MEMTRACK_H

#define MEMTRACK_ABI_VERSION	1

#define MEMTRACK_PROC_DIR	"/proc/memtrack"

/* Limits of the writable knobs in /proc/memtrack/config. */
#define MEMTRACK_RETENTION_MS_DEFAULT	15000
#define MEMTRACK_RETENTION_MS_MAX	3600000

#endif /* _UAPI_LINUX_MEMTRACK_H */
