/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload injected: the loaded objects' GOT slots pointed at
 * the hooks and back (got.c).
 */
#ifndef MEMTRACK_PRELOAD_GOT_H
#define MEMTRACK_PRELOAD_GOT_H

#include <stdint.h>

/*
 * Every loaded object's slots of the hooks of kinds (1 << PL_HOOK_*), but
 * this library's (self: an address in it) and those taken already, a kind
 * at a time in hooks.h's order.  Returns how many were taken, or a
 * negative errno (those taken before stay taken).
 */
int pl_got_patch(uint32_t kinds, const void *self)
	__attribute__((visibility("hidden")));
/* Every taken slot that still holds its hook back to what it held. */
unsigned int pl_got_restore(void) __attribute__((visibility("hidden")));
/* After a dlclose: the slots of objects no longer loaded forgotten. */
void pl_got_forget_gone(void) __attribute__((visibility("hidden")));

#endif
