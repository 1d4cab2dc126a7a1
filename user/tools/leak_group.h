/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak -p: its ptrace work in a scheduling group of its own (leak_group.c). */
#ifndef MEMTRACK_LEAK_GROUP_H
#define MEMTRACK_LEAK_GROUP_H

/*
 * Without CAP_SYS_NICE: returns in a child in a session of its own (a
 * scheduling group of its own), while the caller's process hands it the
 * stop signals and ends as it ends.  With it, or if fork fails: returns
 * in the caller's process, nothing changed.
 */
void leak_own_group(void);

#endif
