/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Helpers shared by libmemtrack, the tools and memtrackd: internal, not part
 * of libmemtrack's interface (memtrack.h).
 */
#ifndef MEMTRACK_USER_UTIL_H
#define MEMTRACK_USER_UTIL_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif
