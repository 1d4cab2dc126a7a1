/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack: growing an array by doubling, the one way every layer above
 * user/preload does it (lib, net, aggregator, memtrackd, the tools).  Apart
 * from libmemtrack.h, the library's public API, because it is plumbing, not
 * memtrack: a file includes it beside the headers it already has.
 */
#ifndef MT_GROW_H
#define MT_GROW_H

#include <stddef.h>

/*
 * Make *p, an array of *cap elements of size bytes each (NULL and 0 at
 * first), hold at least need elements: nothing if it does already, else
 * realloc() to *cap doubled (first for an empty array) until it does.
 * Returns 0, or -ENOMEM with *p and *cap unchanged when the allocation
 * fails or the new size in bytes does not fit in a size_t (-EINVAL for a
 * size of 0): libmemtrack's convention, a negative errno.
 * p is the address of the caller's pointer, of any object type:
 *
 *	if (n == cap && mt_grow((void **)&v, &cap, n + 1, sizeof(*v), 64))
 *		return -ENOMEM;
 */
int mt_grow(void **p, size_t *cap, size_t need, size_t size, size_t first);

#endif
